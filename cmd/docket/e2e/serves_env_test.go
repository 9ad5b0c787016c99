package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/failover"
)

// markCapability has two executed Actions on one run program that appends its key to
// marks.log in the Source's root, once per run: mark needs no approval, and markheld a
// member's, so its call is held at the gateway until a member decides.
const markCapability = `id = "test.mark"
version = "1.0.0"
title = "Mark test"

[[source]]
name  = "files"
type  = "file"
words = ["marked"]
tier  = "attested"

[[action]]
name        = "mark"
description = "Append a key to marks.log."
approval    = "none"
[[action.param]]
name = "k"
type = "string"
[action.execution]
tool         = "test.mark@1"
source_types = ["file"]
kind         = "run"
returns      = [{ predicate = "marked", args = { k = "$k" } }]

[[action]]
name        = "markheld"
description = "Append a key to marks.log, once a member approves."
approval    = "person"
[[action.param]]
name = "k"
type = "string"
[action.execution]
tool         = "test.markheld@1"
source_types = ["file"]
kind         = "run"
returns      = [{ predicate = "marked", args = { k = "$k" } }]
`

const markManifest = `{"format": "docket-worker-tools/1", "tools": {
  "test.mark@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "mark.sh", "kind": "run", "params": {"k": {"type": "string"}}},
  "test.markheld@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "mark.sh", "kind": "run", "params": {"k": {"type": "string"}}}
}}`

// markScript appends the call's key to marks.log (a line each run: the side effect
// counted) and returns it.
const markScript = `#!/bin/sh
k=$(sed 's/.*"k":"\([^"]*\)".*/\1/')
echo "$k" >> marks.log
printf '{"k":"%s"}\n' "$k"
`

// startOtherServe starts one more docket serve on db, in a data dir of its own holding the
// installation's key and signing key copied from s's, and returns it with its URL.
func (s *serveEnv) startOtherServe(t *testing.T, db string, extra ...string) (*proc, string) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{datadir.KeyFile, "signing.key"} {
		b, err := os.ReadFile(filepath.Join(s.home, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(home, f), string(b), 0o600)
	}
	env := slices.Clip(append(os.Environ(), "DOCKET_HOME="+home))
	p := startProc(t, env, append([]string{"serve", "--listen", "127.0.0.1:0", "--db", db}, extra...)...)
	p.waitLine(t, "docket serve listening")
	m := regexp.MustCompile(`msg="docket serve listening" url=(\S+)`).FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("no URL in serve's log:\n%s", p.log())
	}
	return p, m[1]
}

// rotated returns urls starting at the i-th.
func rotated(urls []string, i int) []string {
	i %= len(urls)
	return append(slices.Clone(urls[i:]), urls[:i]...)
}

// servesClient returns the serves of urls and an HTTP client that sends through them, as
// the agent runtime's is made.
func servesClient(t *testing.T, urls []string) (*failover.Serves, *http.Client) {
	t.Helper()
	sv, err := failover.New(urls, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sv, sv.Client(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()})
}

// callOutcome is what one agent call came to.
type callOutcome struct {
	key     string
	held    bool
	ordinal int64
	state   contract.OperationState
	code    contract.Code
	took    time.Duration
	lost    bool // its answer was lost; its outcome came from the strip
	// undelivered: the first answer was previous_result_undelivered (an earlier outcome
	// had not reached the Agent), so the call was sent once more
	undelivered bool
	at          time.Time // when it was answered
}

// agentRun is one in-test agent: an MCP client of the product (mcpclient) over the serves'
// failover transport, making its calls one after another.
type agentRun struct {
	name string
	id   string
	c    *mcpclient.Client
	last int64 // the ordinal of its last Operation seen
}

// call makes one ApplyAction and returns its outcome. An answer lost (the serve it was
// held at died) is not sent again: as the runtime does (docs/mcp.md), the call's outcome
// is read from the operations strip, on the serve the client moved to, until it settles,
// and then delivered by a QueryBoard. A call the strip shows was never admitted is made
// again: nothing of it was acknowledged.
func (a *agentRun) call(ctx context.Context, key string, held bool) (callOutcome, error) {
	action := "mark"
	if held {
		action = "markheld"
	}
	args := json.RawMessage(fmt.Sprintf(`{"action":%q,"params":{"k":%q}}`, action, key))
	out := callOutcome{key: key, held: held}
	start := time.Now()
	resent := false
	for {
		res, err := a.c.Call(ctx, "ApplyAction", args)
		if errors.Is(err, agent.ErrOutcomeUnknown) {
			out.lost = true
			slot, admitted, err := a.awaitLost(ctx)
			if err != nil {
				return out, err
			}
			if !admitted {
				continue
			}
			out.ordinal, out.state, out.code = slot.Ordinal, slot.State, slot.ReasonCode
			break
		}
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", a.name, key, err)
		}
		var tr contract.ToolResult
		if err := json.Unmarshal([]byte(res.Text), &tr); err != nil {
			return out, fmt.Errorf("%s %s: %w: %s", a.name, key, err, res.Text)
		}
		if tr.ErrorCode == contract.CodePreviousResultUndelivered && !resent {
			// As the runtime does (agent.Loop): the refusal delivered an earlier outcome
			// and ran nothing, so the call is sent once more.
			resent, out.undelivered = true, true
			continue
		}
		// A call the worker did not run because its claim's answer was lost is answered
		// failed, worker_refused, and not accepted: it is an outcome checkThreeServes
		// judges (nothing ran, one receipt), as when the Agent's own answer was lost.
		notRun := len(tr.Operations) > 0 && tr.Operations[0].ReasonCode == contract.CodeWorkerRefused
		if len(tr.Operations) == 0 || !tr.Accepted && !notRun {
			return out, fmt.Errorf("%s %s: not accepted: %s", a.name, key, res.Text)
		}
		out.ordinal, out.state, out.code = res.Ordinal, tr.Operations[0].State, tr.Operations[0].ReasonCode
		if !out.state.Settled() && out.state != contract.OpNeedsPerson {
			// Held past the hold bound: the outcome comes by the strip, as for a lost answer.
			slot, _, err := a.awaitLost(ctx)
			if err != nil {
				return out, err
			}
			out.state, out.code = slot.State, slot.ReasonCode
		}
		break
	}
	a.last = max(a.last, out.ordinal)
	out.took, out.at = time.Since(start), time.Now()
	return out, nil
}

// awaitLost reads the strip until the Operation after a.last settles, and delivers its
// outcome; admitted is false when the strip shows no such Operation (the call never
// reached the store).
func (a *agentRun) awaitLost(ctx context.Context) (contract.OperationSlot, bool, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		strip, err := a.c.Strip(ctx)
		if err != nil && !errors.Is(err, agent.ErrOutcomeUnknown) {
			return contract.OperationSlot{}, false, fmt.Errorf("%s strip: %w", a.name, err)
		}
		if err == nil {
			var newest *contract.OperationSlot
			for i := range strip {
				if strip[i].Ordinal > a.last && (newest == nil || strip[i].Ordinal > newest.Ordinal) {
					newest = &strip[i]
				}
			}
			if newest == nil {
				return contract.OperationSlot{}, false, nil
			}
			if newest.State.Settled() || newest.State == contract.OpNeedsPerson {
				// The gateway counts an outcome delivered only once a tool result carried
				// it; a read is sent again until one is answered.
				_, err := a.c.Call(ctx, "QueryBoard", json.RawMessage(`{}`))
				if err == nil {
					return *newest, true, nil
				}
				if !errors.Is(err, agent.ErrOutcomeUnknown) {
					return contract.OperationSlot{}, false, err
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
			return contract.OperationSlot{}, false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return contract.OperationSlot{}, false, fmt.Errorf("%s: the lost call's Operation did not settle in two minutes", a.name)
}

// approveAll approves, as a member over /api/v1 through the serves' failover transport,
// every pending request, until ctx ends; it returns how many it approved.
func approveAll(ctx context.Context, api *apiclient.Client) (int, error) {
	approved := 0
	done := map[contract.RequestID]bool{}
	for ctx.Err() == nil {
		rs, err := apiclient.All[contract.Request](ctx, api, apiclient.ProjectPath("default", "requests"))
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			// A list or decision cut by the kill is asked again on the serve moved to.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for _, r := range rs {
			if r.State != contract.RequestPending || done[r.ID] {
				continue
			}
			var out contract.Request
			err := api.Do(ctx, http.MethodPost, apiclient.ProjectPath("default", "requests", string(r.ID), "decision"),
				contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove, Reason: "approved by the three-serves test"}, &out)
			if err == nil || strings.Contains(err.Error(), "request_closed") || strings.Contains(err.Error(), "already") {
				done[r.ID] = true
				if err == nil {
					approved++
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return approved, nil
}

// percentile returns the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*p/100)]
}

// countLines counts the occurrences of sub in logs.
func countLines(logs []string, sub string) int {
	n := 0
	for _, l := range logs {
		n += strings.Count(l, sub)
	}
	return n
}
