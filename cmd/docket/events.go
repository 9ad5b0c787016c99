package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/contract"
)

// eventsCmd reads and verifies a project's hash-chained event log.
type eventsCmd struct {
	Tail       eventsTailCmd       `cmd:"" help:"Print the project's events; --follow keeps streaming new ones."`
	Verify     eventsVerifyCmd     `cmd:"" help:"Verify the log (chain, signed checkpoints, Board) on serve, in a data dir or in a bundle; exit 1 naming the first broken place."`
	Export     eventsExportCmd     `cmd:"" help:"Write a project's signed, self-contained bundle for offline verification."`
	Checkpoint eventsCheckpointCmd `cmd:"" help:"Sign the project's log head now."`
}

type eventsTailCmd struct {
	clientFlags
	After  int64    `help:"Print events after this sequence number." default:"0"`
	Follow bool     `short:"f" help:"Keep streaming new events until interrupted."`
	Type   []string `help:"Only events of these types (repeat, or separate with commas), e.g. case.closed."`
	Case   string   `help:"Only events that name this Case."`
	Agent  string   `help:"Only events that name this Agent (a name or an id)."`
	Since  string   `help:"Only events at or after this time: a duration back from now (10m, 2h) or an RFC 3339 time."`
}

func (c *eventsTailCmd) Help() string {
	return `Prints one event a line: SEQ, time, type, actor and data. Filters combine: an event is printed
when it matches every one given.

Examples:
  docket events tail
  docket events tail --type case.opened,case.closed
  docket events tail --case case-1 --since 1h
  docket events tail --agent calc --type operation.admitted
  docket events tail -f --type request.created`
}

func (c *eventsTailCmd) Run(ctx context.Context, e *env) error {
	f, q, err := c.filter(time.Now())
	if err != nil {
		return err
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	n := 0
	show := func(ev contract.Event) error { n++; return c.print(e, ev) }
	if c.Follow {
		if c.Agent != "" {
			items, err := list[contract.Agent](ctx, cl, projectPath(c.Project, "agents"))
			if err != nil {
				return err
			}
			i := slices.IndexFunc(items, func(a contract.Agent) bool { return a.Name == c.Agent || string(a.ID) == c.Agent })
			if i < 0 {
				return fmt.Errorf("events tail --agent: project %s has no Agent %q; docket agent list names them", c.Project, c.Agent)
			}
			f.Agent = items[i].ID
		}
		// The stream carries every event; the same filter the server applies picks them here.
		return credential(cl.api.FollowEvents(ctx, c.Project, c.After, func(ev contract.Event) error {
			if !f.Match(ev) {
				return nil
			}
			return show(ev)
		}))
	}
	if err := credential(cl.api.FilterEvents(ctx, c.Project, c.After, q, show)); err != nil {
		return err
	}
	if n == 0 && !c.json() {
		_, err := fmt.Fprintln(e.Stderr, "no events match in project "+c.Project)
		return err
	}
	return nil
}

// filter returns the filter the flags name, as an [contract.EventFilter] for a stream and
// as the events route's query.
func (c *eventsTailCmd) filter(now time.Time) (contract.EventFilter, url.Values, error) {
	var f contract.EventFilter
	q := url.Values{}
	for _, t := range c.Type {
		for p := range strings.SplitSeq(t, ",") {
			if p = strings.TrimSpace(p); p != "" {
				f.Types = append(f.Types, p)
				q.Add("type", p)
			}
		}
	}
	if c.Case != "" {
		f.Case = contract.CaseID(c.Case)
		q.Set("case", c.Case)
	}
	if c.Agent != "" {
		q.Set("agent", c.Agent)
	}
	if c.Since != "" {
		at, err := parseSince(c.Since, now)
		if err != nil {
			return contract.EventFilter{}, nil, &usageError{err: err}
		}
		f.Since = at
		q.Set("since", at.Format(time.RFC3339Nano))
	}
	return f, q, nil
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return at, nil
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (10m, 2h) nor an RFC 3339 time (2026-12-01T14:00:00Z); see docket events tail --help", s)
}

func (c *eventsTailCmd) print(e *env, ev contract.Event) error {
	if c.json() {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.Stdout, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(e.Stdout, "%d\t%s\t%s\t%s\t%s\n", ev.Seq, ev.At.Format(time.RFC3339), ev.Type, ev.Actor, ev.Data)
	return err
}

type eventsVerifyCmd struct {
	clientFlags
	Bundle  string `arg:"" optional:"" help:"A bundle from docket events export to verify offline." type:"path"`
	DataDir string `name:"data-dir" help:"Verify the store in this data dir directly, with no docket serve; with a bundle, trust this installation's keys." type:"path"`
	DB      string `name:"db" help:"With --data-dir: the store, a SQLite path or postgres://…"`
	Keys    string `help:"A JWK set of the public keys to trust (from docket key public); default: the data dir's. A bundle that holds only under its own keys exits 7." type:"path"`
	Held    string `name:"checkpoint" help:"A checkpoint kept outside the log (docket events checkpoint -o json): the log must still have the head it signed." type:"path"`
}

func (c *eventsVerifyCmd) Run(ctx context.Context, e *env) error {
	switch {
	case c.Bundle != "" && c.DB != "":
		return &usageError{err: errors.New("--db reads a store; a bundle is checked on its own (--data-dir names the installation whose keys to trust)"), help: "docket events verify"}
	case c.Bundle != "":
		return verifyBundle(e, c.Bundle, c.Keys, c.DataDir, c.Held, c.json())
	case c.DataDir != "":
		return verifyDataDir(ctx, e, c.DataDir, c.DB, c.Keys, c.Held)
	case c.Held != "":
		return errors.New("--checkpoint needs a bundle or --data-dir")
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var rep contract.ChainReport
	if err := cl.do(ctx, http.MethodGet, projectPath(c.Project, "events", "verify"), nil, &rep); err != nil {
		return err
	}
	if c.json() {
		if err := printJSON(e.Stdout, rep); err != nil {
			return err
		}
	} else if rep.OK {
		fmt.Fprintf(e.Stdout, "project %s: %d events, chain ok, head %s, signed up to seq %d, board ok\n", rep.Project, rep.Seq, rep.Hash, rep.SignedSeq)
	}
	if !rep.OK {
		if rep.Broken == nil {
			return &exitError{code: exitFailure, err: errors.New("event chain broken")}
		}
		return &exitError{code: exitFailure, err: &contract.Error{Code: contract.CodeEventChainBroken, Teaching: bundle.BrokenSentence(rep)}}
	}
	return nil
}
