package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
)

// serveEnv is a data dir served by a real docket serve process and set up through the
// docket command line, the way a person does it: every step below is a docket process.
type serveEnv struct {
	home      string
	env       []string // the environment of every docket command: DOCKET_HOME
	serveArgs []string
	srv       *proc
	url       string
	agent     string // agent one's id
	token     string // agent one's token
	key       string // connection laptop's key
	files     string // the file Source's root
	man       string // the worker's manifest
	vault     string // the worker's vault
}

// newServeEnv initializes a data dir whose store is db (a postgres:// DSN, or "" for
// SQLite in the data dir), starts docket serve with serveArgs, installs the
// capability in capDir, creates agent one and connection laptop, binds a file Source
// named source with words to it, and writes the worker's manifest and vault.
func newServeEnv(t *testing.T, db, capDir, source string, words []string, manifest string, serveArgs ...string) *serveEnv {
	t.Helper()
	dir := t.TempDir()
	s := &serveEnv{home: filepath.Join(dir, "home")}
	// Clipped, so that each command appending its own variables gets its own copy.
	s.env = slices.Clip(append(os.Environ(), "DOCKET_HOME="+s.home))
	initArgs := []string{"init"}
	if db != "" {
		initArgs = append(initArgs, "--db", db)
		serveArgs = append(serveArgs, "--db", db)
	}
	s.docket(t, []string{"DOCKET_PASSPHRASE=correct horse battery"}, initArgs...)
	if !slices.Contains(serveArgs, "--listen") {
		serveArgs = append([]string{"--listen", "127.0.0.1:0"}, serveArgs...)
	}
	s.serveArgs = serveArgs
	s.startServe(t)
	s.docket(t, nil, "capability", "install", capDir)

	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "one")
	s.agent, s.token = string(at.Agent.ID), at.Token
	var ck contract.ConnectionKey
	s.docketJSON(t, &ck, "connection", "create", "laptop")
	s.key = ck.Key
	s.docket(t, nil, "source", "bind", "--connection", "laptop", "--name", source, "--type", "file", "--words", strings.Join(words, ","))

	s.files = filepath.Join(dir, "files")
	root := filepath.Join(dir, "worker")
	for _, d := range []string{filepath.Join(s.files, "data"), root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(s.files, "data", "input.json"), `{"job_id":"calc-001","unit_price_cents":129900,"quantity":2,"shipping_cents":3000}`, 0o644)
	writeFile(t, filepath.Join(root, "block.sh"), blockScript, 0o755)
	s.man = filepath.Join(root, "tools.json")
	writeFile(t, s.man, manifest, 0o644)
	s.vault = filepath.Join(dir, "vault.json")
	vault, _ := json.Marshal(map[string]any{"sources": map[string]any{source: map[string]string{"type": "file", "root": s.files}}})
	writeFile(t, s.vault, string(vault), 0o600)
	return s
}

// runVerifiedCalculation serves a data dir on db with a worker, and runs the verified
// calculation's script through docket agent run to its Case's close.
func runVerifiedCalculation(t *testing.T, db string) *serveEnv {
	t.Helper()
	s := newServeEnv(t, db, "../../../examples/verified-calculation/capability", "workspace",
		[]string{"calculation_input", "output_file"}, `{"format": "docket-worker-tools/1", "tools": {}}`)
	s.lock(t, "docket.workspace.read_json@1", "docket.workspace.write_json@1")
	s.startWorker(t).waitLine(t, "lease acquired")
	out := s.docket(t, []string{"DOCKET_AGENT_TOKEN=" + s.token}, "agent", "run",
		"--script", "../../../examples/verified-calculation/script.json", "write the result of job calc-001")
	if !strings.Contains(out, "Case is closed as completed") {
		t.Errorf("docket agent run = %q, want the script's final answer", out)
	}
	return s
}

// startServe starts docket serve and waits until it answers.
func (s *serveEnv) startServe(t *testing.T) {
	t.Helper()
	// A killed server leaves its url file behind; remove it so that nothing dials the
	// dead one.
	os.Remove(filepath.Join(s.home, datadir.URLFile))
	s.srv = startProc(t, s.env, append([]string{"serve"}, s.serveArgs...)...)
	s.docket(t, nil, "doctor", "--wait", "30s")
	url, err := os.ReadFile(filepath.Join(s.home, datadir.URLFile))
	if err != nil {
		t.Fatal(err)
	}
	s.url = strings.TrimSpace(string(url))
}

// docket runs one docket command to completion with extra environment variables and
// returns its stdout; a failure ends the test.
func (s *serveEnv) docket(t *testing.T, extra []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("docket", args...)
	cmd.Env = append(s.env, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docket %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// docketJSON runs a docket command with -o json and decodes its answer into v.
func (s *serveEnv) docketJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := s.docket(t, nil, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("docket %s -o json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// lock locks each Tool on laptop at the digest docket worker --print-tools gives it.
func (s *serveEnv) lock(t *testing.T, tools ...contract.ToolID) {
	t.Helper()
	digests := map[contract.ToolID]string{}
	for line := range strings.Lines(s.docket(t, nil, "worker", "--manifest", s.man, "--print-tools", "--workspace-tools", "read-write")) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 5 || !strings.HasPrefix(f[1], "sha256:") {
			t.Fatalf("docket worker --print-tools line %q, want tool, digest, adapter, kind, offered", line)
		}
		digests[contract.ToolID(f[0])] = f[1]
	}
	for _, id := range tools {
		d, ok := digests[id]
		if !ok {
			t.Fatalf("docket worker --print-tools does not list %s", id)
		}
		s.docket(t, nil, "tool", "lock", "--connection", "laptop", "--tool", string(id), "--digest", d)
	}
}

// startWorker starts docket worker for laptop; it finds the server through the data dir.
func (s *serveEnv) startWorker(t *testing.T) *proc {
	t.Helper()
	return startProc(t, append(s.env, "DOCKET_CONNECTION_KEY="+s.key),
		"worker", "--manifest", s.man, "--vault", s.vault, "--workspace-tools", "read-write", "--log-level", "debug")
}

// gateway dials /mcp as agent one with the official MCP SDK client.
func (s *serveEnv) gateway(t *testing.T) *mcpclient.Client {
	t.Helper()
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: s.url + "/mcp", Token: s.token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// member is the member's /api/v1 client as the CLI finds it in the data dir: the URL
// serve wrote and the token docket init wrote (the tests' serves listen on plain http).
func (s *serveEnv) member(t *testing.T) *apiclient.Client {
	t.Helper()
	base, err := datadir.ServerURL(func(string) string { return "" }, s.home)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(s.home, datadir.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return &apiclient.Client{URL: base, Token: strings.TrimSpace(string(tok))}
}

// call sends one gateway call and decodes its result.
func call(t *testing.T, c *mcpclient.Client, tool, args string) contract.ToolResult {
	t.Helper()
	res, err := c.Call(t.Context(), tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	var out contract.ToolResult
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, args, err, res.Text)
	}
	return out
}

// TestServeWorker_VerifiedCalculation runs the verified-calculation example across real
// processes: docket serve (on SQLite, and on PostgreSQL when DOCKET_TEST_POSTGRES is set),
// docket worker and docket agent run with the example's script.
// The file is written with the derived values, the input lands as an attested fact, the
// Case closes and the event chain verifies.
func TestServeWorker_VerifiedCalculation(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testVerifiedCalculation(t, "") })
	t.Run("postgres", func(t *testing.T) { testVerifiedCalculation(t, pgTestDB(t)) })
}

func testVerifiedCalculation(t *testing.T, db string) {
	s := runVerifiedCalculation(t, db)
	b, err := os.ReadFile(filepath.Join(s.files, "out", "result.json"))
	if err != nil {
		t.Fatalf("the worker did not write the result: %v", err)
	}
	var written map[string]any
	if err := json.Unmarshal(b, &written); err != nil || written["total"] != 262800.0 || written["subtotal"] != 259800.0 {
		t.Errorf("out/result.json = %s, want subtotal 259800 and total 262800", b)
	}

	res := call(t, s.gateway(t), "QueryBoard", `{"pattern": {"predicate": "calculation_input"}}`)
	var q struct {
		Matches struct{ Items []contract.Node } `json:"matches"`
	}
	if err := json.Unmarshal(res.Result, &q); err != nil {
		t.Fatalf("QueryBoard result: %v\n%s", err, res.Result)
	}
	if len(q.Matches.Items) != 1 || q.Matches.Items[0].Tier != contract.TierAttested ||
		q.Matches.Items[0].CreatedBy != "tool:docket.workspace.read_json@1" {
		t.Errorf("calculation_input = %+v, want one fact, attested, by tool:docket.workspace.read_json@1", q.Matches.Items)
	}
	if out := s.docket(t, nil, "case", "list"); !strings.Contains(out, "closed\tcompleted") {
		t.Errorf("docket case list = %q, want the Case closed as completed", out)
	}
	if out := s.docket(t, nil, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify = %q, want chain ok", out)
	}
}

// TestServeWorker_KilledAfterClaim kills a real docket worker with SIGKILL while its run
// program executes a claimed call and starts another. Once the next worker takes the
// lease, or the lease sweep finds it expired first, the Operation needs a person (the
// agent's strip says so), the program never runs again, and docket reconcile settles it.
func TestServeWorker_KilledAfterClaim(t *testing.T) {
	s, follow, gw := killAfterClaim(t)
	s.startWorker(t).waitLine(t, "lease acquired")
	follow.waitLine(t, `"state":"needs_person"`)
	strip, err := gw.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].State != contract.OpNeedsPerson {
		t.Fatalf("strip after the worker was killed = %+v, want needs_person first", strip)
	}
	out := s.docket(t, nil, "reconcile", s.agent+"."+strconv.FormatInt(strip[0].Ordinal, 10), "failed", "--reason", "killed before it answered")
	if !strings.Contains(out, "failed") {
		t.Errorf("docket reconcile = %q, want failed", out)
	}
	follow.waitLine(t, `"state":"failed"`)
	if strip, err = gw.Strip(t.Context()); err != nil || len(strip) == 0 || strip[0].State != contract.OpFailed {
		t.Errorf("strip after reconcile = %+v, %v; want failed first", strip, err)
	}
	runs, _ := os.ReadFile(filepath.Join(s.files, "runs.log"))
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("the program ran %d times, want once", n)
	}
	if out := s.docket(t, nil, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify = %q, want chain ok", out)
	}
}

// killAfterClaim starts docket serve with a 2 s lease, a worker, and an agent call whose
// run program blocks, kills the worker with SIGKILL while the program runs, and lets the
// orphaned program end. It returns the serve, a follower of its events and the agent's
// gateway; the Operation was claimed and never reported.
func killAfterClaim(t *testing.T) (*serveEnv, *proc, *mcpclient.Client) {
	t.Helper()
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), hopCapability, 0o644)
	// A short lease makes the next worker take over soon after the kill; a short hold
	// makes ApplyAction answer "running" instead of waiting for the outcome.
	s := newServeEnv(t, "", capDir, "files", []string{"loaded", "blocked"}, hopManifest, "--lease-ttl", "2s", "--hold", "100ms")
	s.lock(t, "test.block@1")
	for _, f := range []string{"started.fifo", "go.fifo"} {
		if err := syscall.Mkfifo(filepath.Join(s.files, f), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	follow := startProc(t, s.env, "events", "tail", "--follow")
	w := s.startWorker(t)
	gw := s.gateway(t)
	if res := call(t, gw, "ApplyAction", `{"action": "block", "params": {"n": "1"}}`); !res.Accepted {
		t.Fatalf("ApplyAction block = %+v, want accepted", res)
	}
	started, err := os.Open(filepath.Join(s.files, "started.fifo")) // returns once the program runs
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(started)
	started.Close()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.done
	release, err := os.OpenFile(filepath.Join(s.files, "go.fifo"), os.O_WRONLY, 0) // let the orphan end
	if err != nil {
		t.Fatal(err)
	}
	release.Close()
	return s, follow, gw
}

// TestServeWorker_KilledAfterClaimNoReturn kills the worker as
// TestServeWorker_KilledAfterClaim does, but starts no other: the lease expiring alone
// makes the Operation need a person within a few lease TTLs, and the strip names the
// worker that lost it.
func TestServeWorker_KilledAfterClaimNoReturn(t *testing.T) {
	s, follow, gw := killAfterClaim(t)
	follow.waitLine(t, `"state":"needs_person"`)
	strip, err := gw.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].State != contract.OpNeedsPerson || strip[0].ReasonCode != contract.CodeWorkerLost ||
		!strings.Contains(strip[0].Reason, "lost its lease") {
		t.Fatalf("strip after the worker was killed = %+v, want needs_person first, worker_lost, naming the lost lease", strip)
	}
	runs, _ := os.ReadFile(filepath.Join(s.files, "runs.log"))
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("the program ran %d times, want once", n)
	}
	if out := s.docket(t, nil, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify = %q, want chain ok", out)
	}
}

// freeAddr returns a loopback address that was free a moment ago, so that a restarted
// docket serve answers where the worker already points.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeWorker_AuthorityKilledWhileRunning kills docket serve with SIGKILL while a
// worker runs a claimed call, and starts it again on the same data dir and address. The
// worker's report, sent to the dead server and then again with the same bytes, lands
// once after the restart: the Operation is done, never needs a person, and the program
// ran once.
func TestServeWorker_AuthorityKilledWhileRunning(t *testing.T) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), hopCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"loaded", "blocked"}, hopManifest, "--listen", freeAddr(t), "--hold", "100ms")
	s.lock(t, "test.block@1")
	for _, f := range []string{"started.fifo", "go.fifo"} {
		if err := syscall.Mkfifo(filepath.Join(s.files, f), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	w := s.startWorker(t)
	if res := call(t, s.gateway(t), "ApplyAction", `{"action": "block", "params": {"n": "1"}}`); !res.Accepted {
		t.Fatalf("ApplyAction block = %+v, want accepted", res)
	}
	started, err := os.Open(filepath.Join(s.files, "started.fifo"))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(started)
	started.Close()
	if err := s.srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.srv.done
	release, err := os.OpenFile(filepath.Join(s.files, "go.fifo"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	release.Close()
	w.waitLine(t, "report unanswered") // the program ended; its report found no server

	s.startServe(t)
	w.waitLine(t, "msg=reported")
	follow := startProc(t, s.env, "events", "tail", "--follow")
	follow.waitLine(t, `"state":"done"`)
	log := s.docket(t, nil, "events", "tail")
	if n := strings.Count(log, "\twork.reported\t"); n != 1 {
		t.Errorf("work.reported events = %d, want 1:\n%s", n, log)
	}
	if strings.Contains(log, `"state":"needs_person"`) {
		t.Errorf("the operation needed a person after the authority restarted:\n%s", log)
	}
	runs, _ := os.ReadFile(filepath.Join(s.files, "runs.log"))
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("the program ran %d times, want once", n)
	}
	if out := s.docket(t, nil, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify = %q, want chain ok", out)
	}
}
