package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// echoServeEnv is a real serve with the adapters capability installed, the file Source
// "files" bound, and test.echo@1 locked, run by script as echo.sh.
func echoServeEnv(t *testing.T, script string) *serveEnv {
	t.Helper()
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), adaptersCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"echoed"}, adaptersManifest)
	writeFile(t, filepath.Join(filepath.Dir(s.man), "echo.sh"), script, 0o755)
	s.lock(t, "test.echo@1")
	return s
}

// TestServeWorker_RefusalHasAReasonAndTheVaultReloads runs a real serve and worker whose
// vault lacks the Source the Action runs against: the worker claims the work and
// reports it refused, so the Operation fails with source_unknown and a sentence instead
// of waiting silently. Once the Source is written to the vault and
// the worker gets SIGHUP, the same Action runs.
func TestServeWorker_RefusalHasAReasonAndTheVaultReloads(t *testing.T) {
	s := echoServeEnv(t, "#!/bin/sh\ncat\n")
	writeFile(t, s.vault, `{"sources": {}}`, 0o600)
	w := s.startWorker(t)
	w.waitLine(t, "lease acquired")
	gw := s.gateway(t)

	res := call(t, gw, "ApplyAction", `{"action": "echo", "params": {"n": "1"}}`)
	if len(res.Operations) == 0 || res.Operations[0].State != contract.OpFailed ||
		!strings.Contains(string(res.Operations[0].Result), string(contract.CodeSourceUnknown)) || res.Operations[0].Reason == "" {
		t.Fatalf("ApplyAction echo with the Source missing = %+v, want failed with %s and a reason", res.Operations, contract.CodeSourceUnknown)
	}

	// The poll would notice the file too; SIGHUP makes it now.
	writeFile(t, s.vault, `{"sources": {"files": {"type": "file", "root": "`+s.files+`"}}}`, 0o600)
	if err := w.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// The worker logged "vault reloaded" once at start, with no Source: wait for the
	// reload that holds the new one.
	w.waitLine(t, "sources=1")
	res = call(t, gw, "ApplyAction", `{"action": "echo", "params": {"n": "2"}}`)
	if len(res.Operations) == 0 || res.Operations[0].State != contract.OpDone {
		t.Fatalf("ApplyAction echo after the reload = %+v, want done", res.Operations)
	}
}

// A --key-file wins over DOCKET_CONNECTION_KEY, and a run program never sees the key in
// its environment.
func TestServeWorker_KeyFileWins(t *testing.T) {
	// The program answers with how many of its variables hold a Connection key.
	s := echoServeEnv(t, "#!/bin/sh\ncat >/dev/null\nprintf '{\"n\":\"%s\"}\\n' \"$(env | grep -c dkt_con_)\"\n")
	keyFile := filepath.Join(t.TempDir(), "key")
	writeFile(t, keyFile, s.key+"\n", 0o600)
	w := startProc(t, append(s.env, "DOCKET_CONNECTION_KEY=dkt_con_0000000000000000.wrong"),
		"worker", "--manifest", s.man, "--vault", s.vault, "--key-file", keyFile, "--log-level", "debug")
	w.waitLine(t, "lease acquired")
	res := call(t, s.gateway(t), "ApplyAction", `{"action": "echo", "params": {"n": "1"}}`)
	if len(res.Operations) == 0 || res.Operations[0].State != contract.OpDone {
		t.Fatalf("ApplyAction echo = %+v, want done", res.Operations)
	}
	q := call(t, s.gateway(t), "QueryBoard", `{"pattern": {"predicate": "echoed", "args": {"n": "0"}}}`)
	if !strings.Contains(string(q.Result), `"n":"0"`) {
		t.Errorf("the program saw the key in its environment: %s", q.Result)
	}
}

// Below --workspace-tools read-write, docket worker offers no workspace write Tool; off
// offers none. --print-tools lists them all the same, each above the ceiling saying so.
func TestWorker_WorkspaceToolsCeiling(t *testing.T) {
	man := filepath.Join(t.TempDir(), "tools.json")
	writeFile(t, man, `{"format": "docket-worker-tools/1", "tools": {}}`, 0o644)
	for _, tc := range []struct {
		ceiling      string
		read, writes bool
	}{{"off", false, false}, {"read", true, false}, {"read-write", true, true}} {
		out, err := exec.Command("docket", "worker", "--manifest", man, "--print-tools", "--workspace-tools", tc.ceiling).CombinedOutput()
		if err != nil {
			t.Fatalf("docket worker --print-tools --workspace-tools %s: %v\n%s", tc.ceiling, err, out)
		}
		offered := map[string]bool{}
		for line := range strings.Lines(string(out)) {
			f := strings.Split(strings.TrimSpace(line), "\t")
			offered[f[0]] = f[len(f)-1] == "offered"
		}
		if len(offered) != 10 {
			t.Errorf("--workspace-tools %s lists %d Tools, want all 10 built-in ones:\n%s", tc.ceiling, len(offered), out)
		}
		read := offered["docket.workspace.read_json@1"]
		writes := offered["docket.workspace.write_json@1"] || offered["docket.workspace.write_text@1"]
		if read != tc.read || writes != tc.writes {
			t.Errorf("--workspace-tools %s offers read %v, writes %v; want %v, %v:\n%s", tc.ceiling, read, writes, tc.read, tc.writes, out)
		}
	}
}

// TestServeWorker_AuthorityRetries runs a real serve and worker under a recovery policy
// with retry_by = "authority": the first run of the Action fails, and serve's own sweep
// retries it, with no orchestrator or member acting; the retry runs and its fact lands.
func TestServeWorker_AuthorityRetries(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	s := echoServeEnv(t, "#!/bin/sh\nif [ ! -e '"+marker+"' ]; then touch '"+marker+"'; echo 'disk full' >&2; exit 2; fi\ncat\n")
	pol := filepath.Join(t.TempDir(), "recovery.toml")
	writeFile(t, pol, "[recovery_policy]\nmax_attempts = 2\nretry_by = \"authority\"\n", 0o600)
	s.docket(t, nil, "policy", "publish", pol)
	w := s.startWorker(t)
	w.waitLine(t, "lease acquired")
	gw := s.gateway(t)
	res := call(t, gw, "ApplyAction", `{"action": "echo", "params": {"n": "1"}}`)
	if len(res.Operations) == 0 || res.Operations[0].State != contract.OpFailed {
		t.Fatalf("the first run = %+v, want failed", res.Operations)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out := s.docket(t, nil, "events", "tail")
		if strings.Contains(out, "recovery.acted\tauthority") && strings.Contains(out, event.ActionCompleted) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve's sweep never retried the failure; events:\n%s", out)
		}
	}
	q := call(t, gw, "QueryBoard", `{"pattern": {"predicate": "echoed", "args": {"n": "1"}}}`)
	if !strings.Contains(string(q.Result), `"n":"1"`) {
		t.Errorf("the retried run's fact is not on the Board: %s", q.Result)
	}
}
