package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestExecutor_DelegatedPathCheck: a call whose grant says an orchestrator approved it
// under a path class (pathCheck) is refused path_needs_member, before it runs, when its
// path has a second hard link, passes a symbolic link, or climbs out; a plain path, a
// path not there yet, and any path of a call without pathCheck run.
func TestExecutor_DelegatedPathCheck(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "vault.json")
	for _, f := range []string{filepath.Join(root, "docs", "plain.md"), outside} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(outside, filepath.Join(root, "docs", "linked.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{
	"acme.stamp@1":{"adapter":"run","sourceTypes":["file","db"],"entry":"bin/stamp","kind":"write","params":{"path":{"type":"string"},"file":{"type":"string"}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.ParseVault([]byte(`{"sources":{"calc":{"type":"file","root":"` + root + `"},"orders":{"type":"db","dsn":"sqlite:/x.db"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	run := adapterFunc(func(context.Context, worker.Call) (worker.Outcome, error) { ran++; return worker.OK() })
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterRun: run, worker.AdapterWorkspace: run},
		Now:      func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	calc := `{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`
	orders := `{"source":"orders","sourceType":"db","sourceDigest":"sha256:bb"}`
	delegated := func(g *contract.Grant) { g.PathCheck = "path" }
	tests := []struct {
		name, args, target string
		edit               func(*contract.Grant)
		why                string // a word of the refusal; "" runs the call
	}{
		{"a plain file", `{"path":"docs/plain.md"}`, calc, delegated, ""},
		{"a file not there yet", `{"path":"docs/new/a.md"}`, calc, delegated, ""},
		{"a second hard link", `{"path":"docs/linked.md"}`, calc, delegated, "2 hard links"},
		{"a symbolic link on the way", `{"path":"elsewhere/vault.json"}`, calc, delegated, "symbolic link"},
		{"climbing out", `{"path":"docs/../../x"}`, calc, delegated, "climbs out"},
		{"absolute", `{"path":"/etc/passwd"}`, calc, delegated, "absolute"},
		{"no path argument", `{"file":"docs/plain.md"}`, calc, delegated, "no string argument"},
		{"not a file Source", `{"path":"docs/plain.md"}`, orders, delegated, "no file Source"},
		{"a member's approval is not checked", `{"path":"docs/linked.md"}`, calc, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = 0
			row := served(t, e, "acme.stamp@1", tt.args, tt.target, tt.edit)
			j, err := e.Prepare(row, "wkr-1", 2)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			rep := e.Run(t.Context(), j)
			switch {
			case tt.why == "" && (!rep.OK || ran != 1):
				t.Errorf("report = %s %s (ran %d), want the call run once", rep.Code, rep.Reason, ran)
			case tt.why != "" && (rep.OK || rep.Code != contract.CodePathNeedsMember || !strings.Contains(rep.Reason, tt.why) || ran != 0):
				t.Errorf("report = %s %s (ran %d), want refused %s naming %q before running", rep.Code, rep.Reason, ran, contract.CodePathNeedsMember, tt.why)
			}
		})
	}
}
