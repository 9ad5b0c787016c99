package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// Below read-write the worker advertises no workspace write Tool, and refuses one served
// anyway with a reason; off offers none.
func TestExecutor_WorkspaceCeiling(t *testing.T) {
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.ParseVault([]byte(`{"sources":{"calc":{"type":"file","root":"/srv/calc"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	write := worker.WorkspaceTool(worker.OpWriteText)
	read := worker.WorkspaceTool(worker.OpReadText)
	var rw contract.ToolDescriptor
	for _, ceiling := range []worker.WorkspaceAccess{"", worker.WorkspaceOff, worker.WorkspaceRead, worker.WorkspaceReadWrite} {
		e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
			Adapters: map[string]worker.Adapter{worker.AdapterWorkspace: nopAdapter{}}, Workspace: ceiling, Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		var offered []contract.ToolID
		for _, d := range e.Descriptors() {
			offered = append(offered, d.Tool)
			if d.Tool == write {
				rw = d
			}
		}
		wantRead, wantWrite := ceiling != worker.WorkspaceOff, ceiling == worker.WorkspaceReadWrite
		if slices.Contains(offered, read) != wantRead || slices.Contains(offered, write) != wantWrite {
			t.Errorf("ceiling %q offers %v; want read %v, write %v", ceiling, offered, wantRead, wantWrite)
		}
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterWorkspace: nopAdapter{}}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	row := sign(t, rw, `{"path":"a.txt","text":"x"}`, `{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`, nil)
	job, err := e.Prepare(row, "wkr-1", 2)
	if err != nil || contract.CodeOf(job.Refusal()) != contract.CodeWorkspaceCeiling {
		t.Fatalf("Prepare of a write under the read ceiling = %v, %v; want a %s refusal", job, err, contract.CodeWorkspaceCeiling)
	}
	if r := e.Run(t.Context(), job); r.OK || r.Code != contract.CodeWorkspaceCeiling {
		t.Errorf("Run = %+v, want refused %s", r, contract.CodeWorkspaceCeiling)
	}
	if _, err := worker.ParseWorkspaceAccess("write"); err == nil {
		t.Error("ParseWorkspaceAccess(write) = nil, want an error")
	}
}

// An adapter stuck in a call that ignores its context is abandoned past its deadline:
// Run returns, so the Connection serves the next row.
func TestExecutor_StuckCallIsAbandoned(t *testing.T) {
	release := make(chan struct{}) // closed at the end of the test, to let the stuck call go
	defer close(release)
	for _, kind := range []string{contract.ToolKindRead, contract.ToolKindRun} {
		m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{
			"acme.stuck@1":{"adapter":"run","sourceTypes":[],"entry":"bin/stuck","kind":"`+kind+`","fence":{"timeoutMs":50}}}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := worker.ParseVault([]byte(`{"sources":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		stuck := adapterFunc(func(context.Context, worker.Call) (worker.Outcome, error) {
			<-release // ignores its context, as a blocked system call does
			return worker.OK()
		})
		e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
			Adapters: map[string]worker.Adapter{worker.AdapterRun: stuck}, CallGrace: 50 * time.Millisecond, Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		job, err := e.Prepare(served(t, e, "acme.stuck@1", `{}`, noTarget, nil), "wkr-1", 2)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan contract.ReportRequest, 1) // receives Run's one report
		go func() { done <- e.Run(t.Context(), job) }()
		select {
		case r := <-done:
			wantUnknown := kind != contract.ToolKindRead
			if r.OK || r.Code != contract.CodeToolTimeout || r.EffectUnknown != wantUnknown {
				t.Errorf("%s: Run = %+v, want %s with effectUnknown %v", kind, r, contract.CodeToolTimeout, wantUnknown)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: Run waited on a stuck adapter", kind)
		}
	}
}

// The worker reloads its vault when the file changes and on SIGHUP; a vault that does
// not parse leaves the one in use.
func TestExecutor_WatchVault(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vault.json")
	write := func(body string) {
		t.Helper()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"sources":{}}`)
	v, err := worker.LoadVault(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := worker.ParseManifest([]byte(testManifest), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterRun: nopAdapter{}}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	hup := make(chan os.Signal, 1)
	stopped := make(chan struct{}) // closed when WatchVault returns
	go func() { defer close(stopped); e.WatchVault(ctx, path, hup, 10*time.Millisecond) }()
	defer func() { cancel(); <-stopped }()
	row := served(t, e, "acme.stats@1", `{}`, `{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`, nil)
	refusal := func() contract.Code {
		job, err := e.Prepare(row, "wkr-1", 2)
		if err != nil {
			t.Fatal(err)
		}
		return contract.CodeOf(job.Refusal())
	}
	waitFor := func(want contract.Code) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if refusal() == want {
				return
			}
		}
		t.Fatalf("refusal = %q, want %q", refusal(), want)
	}
	if got := refusal(); got != contract.CodeSourceUnknown {
		t.Fatalf("refusal before the reload = %q, want %s", got, contract.CodeSourceUnknown)
	}
	write(`{"sources":{"calc":{"type":"file","root":"/srv/calc"}}}`)
	waitFor("")
	write(`{"sources":{"calc":`) // half-written: the vault in use stays
	time.Sleep(50 * time.Millisecond)
	if got := refusal(); got != "" {
		t.Fatalf("a broken vault replaced the one in use: refusal %q", got)
	}
	// A change the poll cannot see (same size, same time) still lands on SIGHUP.
	if err := os.WriteFile(path, []byte(`{"sources":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hup <- os.Interrupt
	waitFor(contract.CodeSourceUnknown)
}

// env is refused on any adapter but run when the manifest is read: no other adapter
// starts a program of the Tool's.
func TestParseManifest_EnvOnlyOnRun(t *testing.T) {
	for _, adapter := range []string{`"adapter":"http","sourceTypes":["http"],"entry":"GET /x"`, `"adapter":"mcp","sourceTypes":["mcp"],"entry":"t"`,
		`"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT 1"`} {
		_, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.x@1":{`+adapter+`,"env":{"pass":["HOME"]}}}}`), nil)
		if contract.CodeOf(err) != contract.CodeManifestInvalid {
			t.Errorf("env on %s = %v, want %s", adapter, err, contract.CodeManifestInvalid)
		}
	}
	if _, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.x@1":{"adapter":"run","sourceTypes":[],"entry":"bin/x","env":{"pass":[]}}}}`), nil); err != nil {
		t.Errorf("env on run = %v, want ok", err)
	}
}

// allow and deny are workspace path patterns: only a file Source takes them, and each
// must be a relative glob.
func TestParseVault_AllowDeny(t *testing.T) {
	if _, err := worker.ParseVault([]byte(`{"sources":{"ws":{"type":"file","root":"/srv/ws","allow":[".github/","*.pem"],"deny":["secrets/"]}}}`)); err != nil {
		t.Errorf("allow and deny on a file Source = %v, want ok", err)
	}
	for _, v := range []string{
		`{"sources":{"api":{"type":"http","url":"http://h","allow":[".env"]}}}`,
		`{"sources":{"ws":{"type":"file","root":"/srv/ws","allow":["["]}}}`,
		`{"sources":{"ws":{"type":"file","root":"/srv/ws","deny":["/etc/*"]}}}`,
	} {
		if _, err := worker.ParseVault([]byte(v)); contract.CodeOf(err) != contract.CodeVaultInvalid {
			t.Errorf("ParseVault(%s) = %v, want %s", v, err, contract.CodeVaultInvalid)
		}
	}
}
