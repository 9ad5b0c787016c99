package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestServeWorker_ManifestReloads runs a real serve and a worker started with a manifest
// that lacks the locked Tool test.echo@1: the Action that runs it waits, not advertised.
// A bad edit of the manifest is kept out and logged with the fix; a good one is loaded
// without a restart and advertised on the next poll, and the waiting Action runs.
func TestServeWorker_ManifestReloads(t *testing.T) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), adaptersCapability, 0o644)
	// A short hold answers the call while its Operation still waits.
	s := newServeEnv(t, "", capDir, "files", []string{"echoed"}, adaptersManifest, "--hold", "100ms")
	writeFile(t, filepath.Join(filepath.Dir(s.man), "echo.sh"), "#!/bin/sh\ncat\n", 0o755)
	s.lock(t, "test.echo@1") // at the digest of the full manifest
	full, err := os.ReadFile(s.man)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile := func(body string) {
		t.Helper()
		writeFile(t, s.man+".tmp", body, 0o644)
		if err := os.Rename(s.man+".tmp", s.man); err != nil {
			t.Fatal(err)
		}
	}
	replaceFile(`{"format": "docket-worker-tools/1", "tools": {}}`)
	w := s.startWorker(t)
	w.waitLine(t, "lease acquired")
	follow := startProc(t, s.env, "events", "tail", "--follow")
	gw := s.gateway(t)
	res := call(t, gw, "ApplyAction", `{"action": "echo", "params": {"n": "1"}}`)
	if len(res.Operations) == 0 || res.Operations[0].ReasonCode != contract.CodeToolNotAdvertised {
		t.Fatalf("ApplyAction echo with the Tool missing from the manifest = %+v, want it waiting, %s", res.Operations, contract.CodeToolNotAdvertised)
	}

	replaceFile(`{"format": "docket-worker-tools/1", "tools": {"test.echo@1": {"adaptor": "run"}}}`)
	w.waitLine(t, "manifest not reloaded; the one in use is kept")
	w.waitLine(t, "adaptor")

	replaceFile(string(full))
	w.waitLine(t, `msg="manifest reloaded" component=worker reason=changed`)
	follow.waitLine(t, `"state":"done"`)
	strip, err := gw.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].State != contract.OpDone {
		t.Errorf("strip once the manifest reloaded = %+v, want done", strip)
	}
}
