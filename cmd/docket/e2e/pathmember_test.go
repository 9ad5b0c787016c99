package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/contract"
)

// stampCapability has one executed Action that needs a decision and lands on a path: it
// appends a line to the file at path under the Source "files".
const stampCapability = `id      = "test.stamp"
version = "1.0.0"
title   = "Stamp test"

[[source]]
name  = "files"
type  = "file"
words = ["stamped"]
tier  = "attested"

[[action]]
name        = "stamp"
description = "Append a stamp to a file."
approval    = "person"
[[action.param]]
name = "path"
type = "string"
[action.execution]
tool         = "test.stamp@1"
source_types = ["file"]
kind         = "write"
returns      = [{ predicate = "stamped", args = { path = "$path" } }]
`

const stampManifest = `{"format": "docket-worker-tools/1", "tools": {
  "test.stamp@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "stamp.sh", "kind": "write", "params": {"path": {"type": "string"}}}
}}`

// stampScript appends to the file its path argument names, through whatever that name
// is: a second hard link writes the file elsewhere.
const stampScript = "#!/bin/sh\nfor a; do case $a in path=*) p=${a#path=};; esac; done\nprintf 'stamped\\n' >> \"$p\"\nprintf '{\"path\":\"%s\"}\\n' \"$p\"\n"

// TestServeWorker_HardLinkGoesToAMember runs a real serve and worker under a delegation
// policy whose path class covers docs/*: an orchestrator's approval runs a stamp of a
// plain file, but a stamp of a file with a second hard link (os.Link to a file outside
// the Source) is refused by the worker (path_needs_member) before it runs, and the
// authority asks again in a request only a member decides, naming why; the orchestrator
// is refused on it, and a member's approval runs it.
func TestServeWorker_HardLinkGoesToAMember(t *testing.T) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), stampCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"stamped"}, stampManifest)
	writeFile(t, filepath.Join(filepath.Dir(s.man), "stamp.sh"), stampScript, 0o755)
	s.lock(t, "test.stamp@1")
	pol := filepath.Join(t.TempDir(), "delegation.toml")
	writeFile(t, pol, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs\"\naction = \"stamp\"\npath = \"docs/*\"\n", 0o600)
	s.docket(t, nil, "policy", "publish", pol)
	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "boss", "--kind", "orchestrator")
	boss, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: s.url + "/mcp", Token: at.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { boss.Close() })

	docs := filepath.Join(s.files, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(docs, "plain.md"), "plain\n", 0o644)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, secret, "secret\n", 0o600)
	if err := os.Link(secret, filepath.Join(docs, "linked.md")); err != nil {
		t.Fatal(err)
	}
	w := s.startWorker(t)
	w.waitLine(t, "lease acquired")
	one := s.gateway(t)

	stamp := func(path string) {
		t.Helper()
		call(t, one, "QueryBoard", `{}`) // reads the last outcome, so the next write is not refused for it
		res := call(t, one, "ApplyAction", `{"action": "stamp", "params": {"path": "`+path+`"}}`)
		if len(res.Operations) == 0 || res.Operations[0].State != contract.OpWaitingForDecision {
			t.Fatalf("stamp %s = %+v, want waiting for a decision", path, res.Operations)
		}
	}
	decide := func(want contract.Code) contract.Request {
		t.Helper()
		v := call(t, boss, "QueryBoard", `{}`).View
		if v.Decisions == nil || len(v.Decisions.Items) != 1 {
			t.Fatalf("the orchestrator's View lists %+v, want one request to decide", v.Decisions)
		}
		d := v.Decisions.Items[0]
		res := call(t, boss, "ApplyAction", fmt.Sprintf(`{"action": %q, "params": {"request": %q, "digest": %q, "verdict": "approve"}}`,
			contract.ActionDecide, d.ID, d.Digest))
		if res.ErrorCode != want {
			t.Fatalf("the orchestrator's decision = %s %s, want %q", res.ErrorCode, res.Teaching, want)
		}
		return contract.Request{ID: d.ID, Digest: d.Digest}
	}
	// strip waits until agent one's latest Operation is in state, and returns its strip.
	strip := func(state contract.OperationState) []contract.OperationEntry {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			ops := call(t, one, "QueryBoard", `{}`).Operations
			if len(ops) > 0 && ops[0].State == state {
				return ops
			}
			if time.Now().After(deadline) {
				t.Fatalf("agent one's latest Operation never reached %s: %+v", state, ops)
			}
		}
	}

	// A plain file: the orchestrator's approval runs the stamp.
	stamp("docs/plain.md")
	decide("")
	strip(contract.OpDone)

	// A file with a second hard link: the worker refuses before running; the Operation
	// fails, and a new one of the same call waits for a member.
	stamp("docs/linked.md")
	delegated := decide("")
	ops := strip(contract.OpWaitingForDecision)
	if len(ops) < 2 || ops[1].State != contract.OpFailed || !strings.Contains(string(ops[1].Result), string(contract.CodePathNeedsMember)) {
		t.Errorf("agent one's strip = %+v, want the delegated stamp failed %s and a new one waiting", ops, contract.CodePathNeedsMember)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "secret\n" {
		t.Fatalf("the file behind the hard link holds %q (%v): the orchestrator's approval wrote through it", b, err)
	}
	var rs []contract.Request
	s.docketJSON(t, &rs, "requests", "--all")
	var fresh contract.Request
	for _, q := range rs {
		switch {
		case q.ID == delegated.ID && q.State != contract.RequestVoid:
			t.Errorf("the orchestrator's approval after the worker's refusal is %s, want void", q.State)
		case q.State == contract.RequestPending:
			fresh = q
		}
	}
	if fresh.ID == "" || !strings.Contains(fresh.MemberOnly, "2 hard links") || !strings.Contains(fresh.MemberOnly, `class "docs"`) {
		t.Fatalf("requests = %+v, want a pending one only a member decides, naming the hard links and the class", rs)
	}
	if out := s.docket(t, nil, "requests"); !strings.Contains(out, "only a member decides it: an orchestrator approved the call") {
		t.Errorf("docket requests printed %q, want why only a member decides the request", out)
	}
	if v := call(t, boss, "QueryBoard", `{}`).View; v.Decisions != nil && len(v.Decisions.Items) != 0 {
		t.Errorf("the orchestrator's View lists %+v, want nothing to decide", v.Decisions.Items)
	}
	res := call(t, boss, "ApplyAction", fmt.Sprintf(`{"action": %q, "params": {"request": %q, "digest": %q, "verdict": "approve"}}`,
		contract.ActionDecide, fresh.ID, fresh.Digest))
	if res.ErrorCode != contract.CodeForbidden {
		t.Errorf("the orchestrator deciding the member's request = %s %s, want forbidden", res.ErrorCode, res.Teaching)
	}

	// A member reads why and approves: the call runs as approved.
	s.docket(t, nil, "decide", string(fresh.ID), "approve", "--digest", fresh.Digest)
	strip(contract.OpDone)
	if b, err := os.ReadFile(secret); err != nil || string(b) != "secret\nstamped\n" {
		t.Errorf("after the member's approval the linked file holds %q (%v), want the stamp", b, err)
	}
	var out []json.RawMessage
	s.docketJSON(t, &out, "requests", "--all")
	if len(out) != 3 {
		t.Errorf("docket requests lists %d requests, want 3 (plain, the voided approval, the member's)", len(out))
	}
}
