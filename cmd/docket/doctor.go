package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// doctorCmd checks the local setup: the data dir and its modes, the server and the
// credential. --wait waits for a starting docket serve.
type doctorCmd struct {
	Output string        `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	Wait   time.Duration `help:"Wait this long for docket serve to answer (e.g. 10s)." default:"0s"`
}

// check is one line of the doctor's report.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func (c *doctorCmd) Run(ctx context.Context, e *env) error {
	var checks []check
	add := func(name string, ok bool, format string, args ...any) {
		checks = append(checks, check{name, ok, fmt.Sprintf(format, args...)})
	}
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil {
		add("data dir", false, "%s: %v; run docket init", dir, err)
	} else {
		add("data dir", fi.Mode().Perm()&0o077 == 0, "%s mode %v (want 0700)", dir, fi.Mode().Perm())
	}
	for _, name := range []string{keyFile, tokenFile} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err != nil {
			add(name, false, "%s: missing; run docket init", p)
		} else {
			add(name, fi.Mode().Perm()&0o077 == 0, "%s mode %v (want 0600)", p, fi.Mode().Perm())
		}
	}
	within := max(c.Wait, time.Second)
	h, base, err := waitHealthy(ctx, e, dir, within)
	if err != nil {
		add("server", false, "%v", err)
	} else {
		add("server", h.Store == "ok", "%s, version %s, store %s", apiclient.Origin(base), h.Version, h.Store)
		if cl, err := newClient(e); err != nil {
			add("credential", false, "%v", err)
		} else {
			var who contract.Whoami
			if err := cl.do(ctx, http.MethodGet, "/api/v1/whoami", nil, &who); err != nil {
				add("credential", false, "%v", err)
			} else {
				add("credential", true, "%s %s (%s), projects %v", who.Kind, who.Name, who.ID, who.Projects)
			}
		}
	}
	failed := 0
	for _, ch := range checks {
		if !ch.OK {
			failed++
		}
	}
	if c.Output == "json" {
		if err := printJSON(e.Stdout, checks); err != nil {
			return err
		}
	} else {
		for _, ch := range checks {
			mark := "ok  "
			if !ch.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(e.Stdout, "%s %-10s %s\n", mark, ch.Name, ch.Detail)
		}
	}
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("doctor: %d check(s) failed", failed)}
	}
	return nil
}
