package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// eventsCmd reads and verifies a project's hash-chained event log (DESIGN.md §10).
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
	if c.Follow {
		return c.follow(ctx, e, cl)
	}
	after := c.After
	for {
		var page contract.Page[contract.Event]
		path := projectPath(c.Project, "events") + "?after=" + strconv.FormatInt(after, 10)
		if err := cl.do(ctx, http.MethodGet, path, nil, &page); err != nil {
			return err
		}
		for _, ev := range page.Items {
			if err := c.print(e, ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		if page.Next == "" || len(page.Items) == 0 {
			return nil
		}
	}
}

// follow streams events over SSE until ctx ends, resuming after the last one printed.
func (c *eventsTailCmd) follow(ctx context.Context, e *env, cl *client) error {
	path := "/api/v1/events?project=" + url.QueryEscape(c.Project) + "&after=" + strconv.FormatInt(c.After, 10)
	resp, err := cl.send(ctx, http.MethodGet, path, nil, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil {
				return nil // interrupted: a normal end of --follow
			}
			return fmt.Errorf("read event stream: %w", err)
		}
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: ")
		if !ok {
			continue
		}
		var ev contract.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		if err := c.print(e, ev); err != nil {
			return err
		}
	}
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
