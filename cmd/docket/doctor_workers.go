package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// workers checks each live Connection's lease and, with --vault, that the Sources bound
// to the vault's Connection are all in it.
func (c *doctorCmd) workers(ctx context.Context, cl *client) []check {
	ws, err := cl.api.Workers(ctx, c.Project)
	if err = credential(err); err != nil {
		return []check{{Name: "workers", Detail: err.Error()}}
	}
	ops, err := cl.api.Operations(ctx, c.Project, "", true)
	if err = credential(err); err != nil {
		return []check{{Name: "workers", Detail: err.Error()}}
	}
	// Work waits for a worker when an Operation is not dispatched or at a worker.
	pending := 0
	for _, op := range ops {
		if op.Waiting == contract.WaitDispatch || op.Waiting == contract.WaitWorker {
			pending++
		}
	}
	var out []check
	held := 0
	for _, w := range ws {
		name := "worker " + w.Connection.Name
		switch w.Lease {
		case contract.LeaseHeld:
			held++
			out = append(out, check{Name: name, OK: true, Detail: fmt.Sprintf("lease held by %s (generation %d) until %s; %d tool(s), %d source(s)",
				w.WorkerID, w.Generation, w.ExpiresAt.Format(time.RFC3339), len(w.Tools), len(w.Sources))})
		case contract.LeaseExpired:
			out = append(out, check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("lease expired at %s: no worker polls for %s; start docket worker with its key",
				w.ExpiresAt.Format(time.RFC3339), w.Connection.Name)})
		default:
			out = append(out, check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("no worker ever polled for %s; start docket worker with its key", w.Connection.Name)})
		}
	}
	if pending > 0 && held == 0 {
		out = append(out, check{Name: "workers", Detail: fmt.Sprintf("%d operation(s) wait for a worker and none holds a lease; start docket worker (docket ops --waiting lists them)", pending)})
	}
	if c.Vault != "" {
		out = append(out, c.vault(ws))
	}
	return out
}

// vault checks that every Source bound to the vault's Connection is in the vault with
// the same type.
func (c *doctorCmd) vault(ws []contract.WorkerStatus) check {
	v, err := worker.LoadVault(c.Vault)
	if err != nil {
		return check{Name: "vault", Detail: fmt.Sprintf("%s: %v", c.Vault, err)}
	}
	var conns []contract.WorkerStatus
	for _, w := range ws {
		if c.Connection == "" || w.Connection.Name == c.Connection || string(w.Connection.ID) == c.Connection {
			conns = append(conns, w)
		}
	}
	if len(conns) == 0 {
		return check{Name: "vault", Detail: fmt.Sprintf("project %s has no live Connection %q; docket connection list names them", c.Project, c.Connection)}
	}
	var missing []string
	n := 0
	for _, w := range conns {
		for _, s := range w.Sources {
			n++
			got, ok := v.Source(s.Name)
			switch {
			case !ok:
				missing = append(missing, fmt.Sprintf("%s (%s, bound on %s) is not in the vault", s.Name, s.Type, w.Connection.Name))
			case got.Type != s.Type:
				missing = append(missing, fmt.Sprintf("%s is %s in the vault but bound as %s on %s", s.Name, got.Type, s.Type, w.Connection.Name))
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return check{Name: "vault", Detail: c.Vault + ": " + strings.Join(missing, "; ") + "; add each to the vault, or bind only what it holds"}
	}
	return check{Name: "vault", OK: true, Detail: fmt.Sprintf("%s holds all %d bound source(s)", c.Vault, n)}
}
