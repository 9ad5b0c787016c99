package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// pingCapability has one executed Action whose Tool needs no Source.
const pingCapability = `
id      = "test.ping"
version = "1.0.0"
title   = "Ping test"

[[source]]
name  = "files"
type  = "file"
words = ["loaded"]
tier  = "attested"

[[action]]
name        = "ping"
description = "Run a program that needs no Source."
approval    = "none"
[[action.param]]
name = "n"
type = "string"
[action.execution]
tool = "test.ping@1"
kind = "run"
`

const pingManifest = `{"format": "docket-worker-tools/1", "tools": {
  "test.ping@1": {"adapter": "run", "entry": "ping.sh", "kind": "run", "params": {"n": {"type": "string"}}}
}}`

// TestServeWorker_SourceFreeTool runs a Source-free Tool across a real docket serve and
// docket worker: the work is claimed, reported and done, and the event chain verifies.
// Its claim event once carried data null (an empty tier failed to encode and the error
// was dropped), so the report was refused work_not_found and the Operation stayed
// at_worker forever.
func TestServeWorker_SourceFreeTool(t *testing.T) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), pingCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"loaded"}, pingManifest, "--hold", "20s")
	writeFile(t, filepath.Join(filepath.Dir(s.man), "ping.sh"), "#!/bin/sh\necho '{\"n\":\"1\"}'\n", 0o755)
	s.lock(t, "test.ping@1")
	s.startWorker(t)
	res := call(t, s.gateway(t), "ApplyAction", `{"action": "ping", "params": {"n": "1"}}`)
	if !res.Accepted || len(res.Operations) == 0 || res.Operations[0].State != contract.OpDone {
		t.Fatalf("ApplyAction ping = %+v, want accepted and done", res)
	}
	log := s.docket(t, nil, "events", "tail")
	if strings.Contains(log, "\tnull") || !strings.Contains(log, "\twork.claimed\t") {
		t.Errorf("events = %s, want a work.claimed event and no null data", log)
	}
	if out := s.docket(t, nil, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify = %q, want chain ok", out)
	}
}

// TestServeWorker_TwoSourcesOfOneType binds a second file Source on the Connection beside
// the one the capability declares (files): the read runs against files and is done. It
// used to wait not_dispatched forever, silently: the dispatcher wanted exactly one
// Source of the type.
func TestServeWorker_TwoSourcesOfOneType(t *testing.T) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), hopCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"loaded", "blocked"}, hopManifest, "--hold", "20s")
	s.docket(t, nil, "source", "bind", "--connection", "laptop", "--name", "other", "--type", "file", "--words", "loaded")
	s.lock(t, "docket.workspace.read_json@1")
	s.startWorker(t)
	res := call(t, s.gateway(t), "ApplyAction", `{"action": "load", "params": {"path": "data/input.json"}}`)
	if !res.Accepted || len(res.Operations) == 0 || res.Operations[0].State != contract.OpDone {
		t.Fatalf("ApplyAction load = %+v, want accepted and done", res)
	}
}

// TestServeWorker_NoWorkerSaysWhy queues a read with no worker running: the agent's strip
// and docket doctor say the Operation cannot be dispatched and why (no_live_worker), and
// once a worker starts the work runs and the reason is gone. It used to wait
// not_dispatched with no reason anywhere.
func TestServeWorker_NoWorkerSaysWhy(t *testing.T) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), hopCapability, 0o644)
	// A short lease makes the authority look for work it cannot serve every ~0.7 s.
	s := newServeEnv(t, "", capDir, "files", []string{"loaded", "blocked"}, hopManifest, "--lease-ttl", "2s", "--hold", "100ms")
	s.lock(t, "docket.workspace.read_json@1")
	follow := startProc(t, s.env, "events", "tail", "--follow")
	gw := s.gateway(t)
	if res := call(t, gw, "ApplyAction", `{"action": "load", "params": {"path": "data/input.json"}}`); !res.Accepted {
		t.Fatalf("ApplyAction load = %+v, want accepted", res)
	}
	follow.waitLine(t, `"reasonCode":"no_live_worker"`)
	strip, err := gw.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].Stage != contract.StageNotDispatched || strip[0].ReasonCode != contract.CodeNoLiveWorker ||
		!strings.Contains(strip[0].Reason, "laptop") {
		t.Fatalf("strip without a worker = %+v, want not_dispatched, no_live_worker, naming laptop", strip)
	}
	cmd := exec.Command("docket", "doctor")
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1 operation cannot be dispatched: "+s.agent+".1 ApplyAction load (no_live_worker)") {
		t.Errorf("docket doctor = %v\n%s\nwant it to fail naming the operation that cannot be dispatched", err, out)
	}
	s.startWorker(t)
	follow.waitLine(t, `"state":"done"`)
	strip, err = gw.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].State != contract.OpDone || strip[0].ReasonCode != "" {
		t.Errorf("strip once a worker ran it = %+v, want done with no reason", strip)
	}
	s.docket(t, nil, "doctor")
}
