package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// eventsCmd reads and verifies a project's hash-chained event log.
type eventsCmd struct {
	Tail   eventsTailCmd   `cmd:"" help:"Print the project's events; --follow keeps streaming new ones."`
	Verify eventsVerifyCmd `cmd:"" help:"Recompute the hash chain; exit 1 and name the first broken link."`
}

type eventsTailCmd struct {
	clientFlags
	After  int64 `help:"Print events after this sequence number." default:"0"`
	Follow bool  `short:"f" help:"Keep streaming new events until interrupted."`
}

func (c *eventsTailCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	show := func(ev contract.Event) error { return c.print(e, ev) }
	if c.Follow {
		return credential(cl.api.FollowEvents(ctx, c.Project, c.After, show))
	}
	return credential(cl.api.Events(ctx, c.Project, c.After, show))
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
}

func (c *eventsVerifyCmd) Run(ctx context.Context, e *env) error {
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
		fmt.Fprintf(e.Stdout, "project %s: %d events, chain ok, head %s\n", rep.Project, rep.Seq, rep.Hash)
	}
	if !rep.OK {
		b := rep.Broken
		if b == nil {
			return &exitError{code: exitFailure, err: errors.New("event chain broken")}
		}
		return &exitError{code: exitFailure, err: &contract.Error{Code: contract.CodeEventChainBroken,
			Teaching: fmt.Sprintf("project %s: event %d: %s is %s, want %s; events after %d cannot be trusted", rep.Project, b.Seq, b.Field, b.Got, b.Want, rep.Seq)}}
	}
	return nil
}
