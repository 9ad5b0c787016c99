package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestExecutor_WatchManifest: an edit of the manifest file is advertised (Descriptors,
// which each poll sends) and run (Prepare) without a restart; a bad edit keeps the
// manifest in use and says why until a good one replaces it.
func TestExecutor_WatchManifest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.json")
	write := func(body string) {
		t.Helper()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	const one = `{"format":"docket-worker-tools/1","tools":{"acme.report@1":{"adapter":"run","entry":"bin/report"}}}`
	const two = `{"format":"docket-worker-tools/1","tools":{"acme.report@1":{"adapter":"run","entry":"bin/report"},
		"acme.audit@1":{"adapter":"run","entry":"bin/audit","kind":"read"}}}`
	write(one)
	m, err := worker.LoadManifest(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.ParseVault([]byte(`{"sources":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterRun: nopAdapter{}}, Workspace: worker.WorkspaceOff, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	hup := make(chan os.Signal, 1)
	stopped := make(chan struct{})
	go func() { defer close(stopped); e.WatchManifest(ctx, path, nil, hup, 10*time.Millisecond) }()
	defer func() { cancel(); <-stopped }()
	advertised := func() []string {
		var ids []string
		for _, d := range e.Descriptors() {
			if !strings.HasPrefix(string(d.Tool), "docket.") {
				ids = append(ids, string(d.Tool))
			}
		}
		return ids
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("%s: advertised %v, problem %q", what, advertised(), e.ManifestProblem())
	}
	if got := advertised(); !slices.Equal(got, []string{"acme.report@1"}) {
		t.Fatalf("advertised at start = %v", got)
	}
	write(two)
	waitFor("the added Tool is advertised", func() bool { return slices.Equal(advertised(), []string{"acme.audit@1", "acme.report@1"}) })
	row := served(t, e, "acme.audit@1", `{}`, noTarget, nil)
	if job, err := e.Prepare(row, "wkr-1", 2); err != nil {
		t.Fatal(err)
	} else if job.Refusal() != nil {
		t.Fatalf("the added Tool is not run: %v", job.Refusal())
	}
	write(`{"format":"docket-worker-tools/1","tools":{"acme.audit@1":{"adaptor":"run"}}}`)
	waitFor("a bad edit says why", func() bool { return strings.Contains(e.ManifestProblem(), "fix "+path) })
	if !strings.Contains(e.ManifestProblem(), `"adaptor"`) {
		t.Errorf("problem = %q, want the field and the fix", e.ManifestProblem())
	}
	if got := advertised(); !slices.Equal(got, []string{"acme.audit@1", "acme.report@1"}) {
		t.Fatalf("a bad edit replaced the manifest in use: advertised %v", got)
	}
	write(one)
	waitFor("a good edit replaces it", func() bool { return e.ManifestProblem() == "" && slices.Equal(advertised(), []string{"acme.report@1"}) })
	if job, err := e.Prepare(row, "wkr-1", 2); err != nil {
		t.Fatal(err)
	} else if contract.CodeOf(job.Refusal()) != contract.CodeToolUnknown {
		t.Errorf("a removed Tool still runs: %v", job.Refusal())
	}
}
