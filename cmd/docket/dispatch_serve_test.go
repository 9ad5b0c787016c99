package main

import (
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
// at_worker forever (issue 11, item 7).
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
