package e2e

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/workhop"
)

// hopCapability has a read through the workspace, a run Tool that blocks on a FIFO so a
// test can kill the worker at an exact point, and a Tool locked only on another
// Connection.
//
//go:embed testdata/capability/hop.toml
var hopCapability string

// blockScript counts its runs, says it started through one FIFO and waits on another.
const blockScript = `#!/bin/sh
echo run >> runs.log
printf x > started.fifo
cat go.fifo > /dev/null
echo '{"n":"1"}'
`

const hopManifest = `{"format": "docket-worker-tools/1", "tools": {
  "test.block@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "block.sh", "kind": "run", "params": {"n": {"type": "string"}}},
  "test.stray@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "block.sh", "kind": "run", "params": {"n": {"type": "string"}}}
}}`

// hopEnv is an authority on SQLite serving /work and /api/v1 (the reconcile route) on a loopback
// test server, with a Connection whose key a real docket worker process uses.
type hopEnv struct {
	st     store.Store
	a      *authority.Authority
	ops    *authority.Operations
	admin  identity.Caller
	token  string
	agents []identity.Caller
	key    string
	url    string
	files  string // the file Source's root
	man    string // the manifest path
	vault  string
	// wrap, when set before the first request, wraps the hop handler (fault injection).
	wrap func(http.Handler) http.Handler
}

func newHopEnv(t testing.TB, capFiles map[string]string, sourceName string, words []string, wrap func(http.Handler) http.Handler) *hopEnv {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newHopEnvOn(t, st, operation.Config{HoldBound: time.Millisecond}, capFiles, sourceName, words, wrap)
}

// newHopEnvOn is newHopEnv on the store st.
func newHopEnvOn(t testing.TB, st store.Store, opsCfg operation.Config, capFiles map[string]string, sourceName string, words []string, wrap func(http.Handler) http.Handler) *hopEnv {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	h := &hopEnv{st: st, wrap: wrap}
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{9}})
	h.a, h.token, h.admin = p.A, p.Token.String(), p.Admin
	if _, err := h.a.InstallCapability(ctx, h.admin, "default", contract.CapabilityUpload{Files: capFiles}); err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	for _, name := range []string{"one", "two"} {
		at, err := h.a.Directory().CreateAgent(ctx, h.admin, "default", contract.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.a.Directory().Authenticate(ctx, identity.Token(at.Token))
		if err != nil {
			t.Fatal(err)
		}
		h.agents = append(h.agents, c)
	}
	ck, err := h.a.Directory().CreateConnection(ctx, h.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	h.key = ck.Key
	if _, err := h.a.Directory().BindSource(ctx, h.admin, "default", "laptop", contract.Source{Name: sourceName, Type: "file", Words: words, Tier: contract.TierAttested}); err != nil {
		t.Fatal(err)
	}
	// The files, the run program, the manifest and the vault the worker reads.
	h.files = filepath.Join(dir, "files")
	root := filepath.Join(dir, "worker")
	for _, d := range []string{filepath.Join(h.files, "data"), root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(h.files, "data", "input.json"), `{"job_id":"calc-001","unit_price_cents":129900,"quantity":2,"shipping_cents":3000}`, 0o644)
	writeFile(t, filepath.Join(root, "block.sh"), blockScript, 0o755)
	h.man = filepath.Join(root, "tools.json")
	writeFile(t, h.man, hopManifest, 0o644)
	h.vault = filepath.Join(dir, "vault.json")
	vault, _ := json.Marshal(map[string]any{"sources": map[string]any{sourceName: map[string]string{"type": "file", "root": h.files}}})
	writeFile(t, h.vault, string(vault), 0o600)

	h.ops = authority.NewOperations(h.a, opsCfg)
	d := authority.NewDispatcher(h.ops, operation.DispatcherConfig{LeaseTTL: 3 * time.Second, PollWait: 500 * time.Millisecond})
	// The lease sweep, as docket serve runs it: a worker that dies while another of its
	// Connection lives leaves its claimed work to the sweep.
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		if err := d.Run(sweepCtx); err != nil {
			t.Errorf("lease sweep: %v", err)
		}
	}()
	t.Cleanup(func() { stopSweep(); <-swept })
	srv, err := workhop.New(workhop.Config{Identity: h.a.Directory(), Dispatcher: d})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = srv
	if h.wrap != nil {
		handler = h.wrap(srv)
	}
	api, err := console.New(console.Config{Identity: h.a.Directory(), Authority: h.a, Reconciler: d, Routes: map[string]http.Handler{"POST /work": handler}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api)
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

func writeFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// addAgents creates Agents bench<i> in the project until h has n, each authenticated.
func (h *hopEnv) addAgents(t testing.TB, n int) {
	t.Helper()
	for i := len(h.agents); i < n; i++ {
		at, err := h.a.Directory().CreateAgent(t.Context(), h.admin, "default", contract.CreateAgentRequest{Name: fmt.Sprintf("bench%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
		if err != nil {
			t.Fatal(err)
		}
		h.agents = append(h.agents, c)
	}
}

// lock locks tool on the Connection at the digest the worker's manifest gives it.
func (h *hopEnv) lock(t testing.TB, conn string, tool contract.ToolID) {
	t.Helper()
	mb, err := os.ReadFile(h.man)
	if err != nil {
		t.Fatal(err)
	}
	m, err := worker.ParseManifest(mb, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, digest, ok := m.Lookup(tool)
	if !ok {
		t.Fatalf("manifest has no %s", tool)
	}
	if _, err := h.a.LockTool(t.Context(), h.admin, "default", conn, contract.ToolLock{Tool: string(tool), Digest: digest}); err != nil {
		t.Fatal(err)
	}
}

// apply queues an Action of agent i and returns its Operation id.
func (h *hopEnv) apply(t *testing.T, i int, action string, args contract.Args) string {
	t.Helper()
	ans, err := h.ops.Call(t.Context(), h.agents[i], operation.Call{Tool: contract.ToolApplyAction,
		Input: &contract.ApplyActionInput{Action: action, Params: args}})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Result.ErrorCode != "" {
		t.Fatalf("ApplyAction %s = %s: %s", action, ans.Result.ErrorCode, ans.Result.Teaching)
	}
	return operation.WorkID(h.agents[i].ID, ans.Meta.Ordinal)
}

// waitOp waits, on the store's event log rather than a clock, until agent i's latest
// Operation satisfies ok, and returns it.
func (h *hopEnv) waitOp(t *testing.T, i int, what string, ok func(contract.OperationEntry) bool) contract.OperationEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		head, err := h.st.Head(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		st, err := h.ops.Operations().State(ctx, h.agents[i])
		if err != nil {
			t.Fatal(err)
		}
		if len(st.State) > 0 && ok(st.State[0].OperationEntry) {
			return st.State[0].OperationEntry
		}
		if _, err := h.st.Wait(ctx, "default", head.Seq); err != nil {
			t.Fatalf("waiting for the operation to be %s: %v (last %+v)", what, err, st.State)
		}
	}
}

// events returns how many events of typ the project's log holds.
func (h *hopEnv) events(t testing.TB, typ string) int {
	t.Helper()
	n, after := 0, int64(0)
	for {
		evs, err := h.st.Events(t.Context(), "default", after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == typ {
				n++
			}
			after = e.Seq
		}
		if len(evs) < 500 {
			return n
		}
	}
}

// proc is a running docket process whose output lines can be waited for.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced on each new line; guarded by mu
	done  chan struct{} // closed when its output ends
}

func (h *hopEnv) startWorker(t testing.TB) *proc {
	t.Helper()
	return startProc(t, append(os.Environ(), "DOCKET_CONNECTION_KEY="+h.key, "DOCKET_HOME="+t.TempDir()),
		"worker", "--url", h.url, "--manifest", h.man, "--vault", h.vault, "--workspace-tools", "read-write", "--log-level", "debug")
}

// startProc starts docket with args in environment env, collecting its stdout and stderr
// lines; the process is killed when the test ends.
func startProc(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command("docket", args...)
	cmd.Env = env
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the child holds its own copy; the reader ends when the child does
	p := &proc{cmd: cmd, more: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer r.Close()
		s := bufio.NewScanner(r)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, s.Text())
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		cmd.Wait()
		if t.Failed() {
			t.Logf("docket %s (pid %d) output:\n%s", args[0], cmd.Process.Pid, p.log())
		}
	})
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// waitLine waits until the process has printed a line containing s.
func (p *proc) waitLine(t testing.TB, s string) {
	t.Helper()
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if strings.Contains(l, s) {
				p.mu.Unlock()
				return
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-p.done:
			t.Fatalf("docket %s ended without printing %q:\n%s", p.cmd.Args[1], s, p.log())
		case <-timeout.C:
			t.Fatalf("docket %s never printed %q:\n%s", p.cmd.Args[1], s, p.log())
		}
	}
}

func capabilityFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// TestWorker_VerifiedCalculation runs the example's load_input through a real docket
// worker process and the workspace adapter: the row becomes an attested fact.
func TestWorker_VerifiedCalculation(t *testing.T) {
	h := newHopEnv(t, capabilityFiles(t, "../../../examples/verified-calculation/capability"), "workspace",
		[]string{"calculation_input", "output_file"}, nil)
	h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	h.startWorker(t)
	h.apply(t, 0, "load_input", contract.Args{"path": contract.StringValue("data/input.json")})
	e := h.waitOp(t, 0, "settled", func(e contract.OperationEntry) bool { return e.State.Settled() })
	if e.State != contract.OpDone {
		t.Fatalf("load_input = %+v, want done", e)
	}
	// Read the fact back as the Agent would, with QueryBoard.
	ans, err := h.ops.Call(t.Context(), h.agents[0], operation.Call{Tool: contract.ToolQueryBoard, Delivered: func(int64) bool { return true },
		Input: &contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "calculation_input"}, Limit: 10}})
	if err != nil || !ans.Result.Accepted {
		t.Fatalf("QueryBoard = %+v, %v", ans.Result, err)
	}
	var res struct {
		Matches contract.Bounded[contract.Node] `json:"matches"`
	}
	if err := json.Unmarshal(ans.Result.Result, &res); err != nil {
		t.Fatalf("decode QueryBoard result %s: %v", ans.Result.Result, err)
	}
	if got := res.Matches.Items; len(got) != 1 || got[0].Tier != contract.TierAttested || got[0].Atom.Args["unit_price_cents"].Int() != 129900 {
		t.Errorf("calculation_input = %s, want one attested fact with unit_price_cents 129900", ans.Result.Result)
	}
}

// newBlockEnv is a hopEnv whose Connection locks test.block@1, with the two FIFOs its
// program waits on: started.fifo, written once the program runs, and go.fifo, which lets
// it end. It skips where there are no FIFOs.
func newBlockEnv(t *testing.T) *hopEnv {
	t.Helper()
	h := newHopEnv(t, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, nil)
	h.lock(t, "laptop", "test.block@1")
	for _, f := range []string{"started.fifo", "go.fifo"} {
		if err := syscall.Mkfifo(filepath.Join(h.files, f), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	return h
}

// blockStarts opens h's started.fifo for reading and writing, before the worker runs the
// block program: so opened, it never reads as ended between two programs' writes, and the
// open does not wait for a writer.
func (h *hopEnv) blockStarts(t *testing.T) *os.File {
	t.Helper()
	started, err := os.OpenFile(filepath.Join(h.files, "started.fifo"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { started.Close() })
	return started
}

// waitStarts waits up to a minute until n block programs wrote to started.
func waitStarts(t *testing.T, started *os.File, n int) {
	t.Helper()
	if err := started.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(started, make([]byte, n)); err != nil {
		t.Fatalf("%d block programs did not start: %v", n, err)
	}
}

// letBlocksGo lets go the block programs waiting on go.fifo: a writer that opens and
// closes it lets go the readers that have it open. It does not wait for a reader, so a
// caller calls it until what it waits for settled.
func (h *hopEnv) letBlocksGo() {
	if release, err := os.OpenFile(filepath.Join(h.files, "go.fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		release.Close()
	}
}

// blockRuns returns how many times the block program ran.
func (h *hopEnv) blockRuns(t *testing.T) int {
	t.Helper()
	runs, err := os.ReadFile(filepath.Join(h.files, "runs.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(runs), "run")
}

// TestWorker_KilledAfterClaim: a worker killed after its claim and before its report
// leaves the Operation needing a person, and nothing runs it again.
func TestWorker_KilledAfterClaim(t *testing.T) {
	h := newBlockEnv(t)
	w := h.startWorker(t)
	id := h.apply(t, 0, "block", contract.Args{"n": contract.StringValue("1")})
	started, err := os.Open(filepath.Join(h.files, "started.fifo")) // returns once the program runs
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(started); err != nil {
		t.Fatal(err)
	}
	started.Close()
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-w.done
	release, err := os.OpenFile(filepath.Join(h.files, "go.fifo"), os.O_WRONLY, 0) // let the orphan end
	if err != nil {
		t.Fatal(err)
	}
	release.Close()
	h.startWorker(t) // acquires the next generation once the killed one's lease expires
	e := h.waitOp(t, 0, "needs_person", func(e contract.OperationEntry) bool { return e.State != contract.OpRunning })
	if e.State != contract.OpNeedsPerson {
		t.Fatalf("operation after its worker was killed = %+v, want needs_person", e)
	}
	if n := h.blockRuns(t); n != 1 {
		t.Errorf("the program ran %d times, want once", n)
	}
	// A member reconciles it from the command line.
	cmd := exec.Command("docket", "reconcile", id, "failed", "--reason", "killed before it wrote")
	cmd.Env = append(os.Environ(), "DOCKET_URL="+h.url, "DOCKET_TOKEN="+h.token, "DOCKET_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("failed")) {
		t.Fatalf("docket reconcile = %s, %v", out, err)
	}
	if e := h.waitOp(t, 0, "failed", func(e contract.OperationEntry) bool { return e.State.Settled() }); e.State != contract.OpFailed {
		t.Errorf("reconciled operation = %+v, want failed", e)
	}
}

// TestWorker_RunsServedCallsTogether: two Agents' calls served to one worker run side by
// side: the second program starts while the first still waits to be let go, and each
// runs once. A worker that ran its rows one after another would never start the second.
func TestWorker_RunsServedCallsTogether(t *testing.T) {
	h := newBlockEnv(t)
	started := h.blockStarts(t)
	h.startWorker(t)
	h.apply(t, 0, "block", contract.Args{"n": contract.StringValue("1")})
	h.apply(t, 1, "block", contract.Args{"n": contract.StringValue("2")})
	waitStarts(t, started, 2) // both, while the first is held
	deadline := time.Now().Add(60 * time.Second)
	for settled := 0; settled < len(h.agents); {
		h.letBlocksGo()
		settled = 0
		for _, ag := range h.agents {
			st, err := h.ops.Operations().State(t.Context(), ag)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.State) > 0 && st.State[0].State.Settled() {
				if st.State[0].State != contract.OpDone {
					t.Fatalf("agent %s's call = %+v, want done", ag.ID, st.State[0].OperationEntry)
				}
				settled++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the calls settled in a minute, want both", settled)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := h.blockRuns(t); n != 2 {
		t.Errorf("the program ran %d times, want twice", n)
	}
}

// TestWorker_PollsWhileRowsRun: a worker polls again while a served call still runs, so
// work queued meanwhile is claimed, run and reported without waiting for it: the second
// Agent's read settles while the first Agent's program is held, and the held call then
// settles too, each run once. A worker that polled only once its whole batch had
// reported would leave the read queued until the program was let go.
func TestWorker_PollsWhileRowsRun(t *testing.T) {
	h := newBlockEnv(t)
	h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	started := h.blockStarts(t)
	h.startWorker(t)
	h.apply(t, 0, "block", contract.Args{"n": contract.StringValue("1")})
	waitStarts(t, started, 1)
	h.apply(t, 1, "load", contract.Args{"path": contract.StringValue("data/input.json")})
	settled := func(i int) contract.OperationEntry {
		st, err := h.ops.Operations().State(t.Context(), h.agents[i])
		if err != nil {
			t.Fatal(err)
		}
		return st.State[0].OperationEntry
	}
	deadline := time.Now().Add(20 * time.Second)
	for e := settled(1); !e.State.Settled(); e = settled(1) {
		if time.Now().After(deadline) {
			t.Fatalf("the read queued while a call ran = %+v after 20 s, want done before the held call is let go", e)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := settled(1); e.State != contract.OpDone {
		t.Fatalf("the read = %+v, want done", e)
	}
	if e := settled(0); e.State.Settled() {
		t.Fatalf("the held call = %+v, want still running", e)
	}
	deadline = time.Now().Add(60 * time.Second)
	for e := settled(0); !e.State.Settled(); e = settled(0) {
		h.letBlocksGo()
		if time.Now().After(deadline) {
			t.Fatalf("the held call = %+v a minute after it was let go, want done", e)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := settled(0); e.State != contract.OpDone {
		t.Fatalf("the held call = %+v, want done", e)
	}
	if n := h.blockRuns(t); n != 1 {
		t.Errorf("the held program ran %d times, want once", n)
	}
}

// TestWorker_AuthorityLostMidReport: the authority commits a report but its answer is
// lost, as when it is killed before answering; the worker sends the same bytes again,
// and the report lands once.
func TestWorker_AuthorityLostMidReport(t *testing.T) {
	var once sync.Once
	drop := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !bytes.Contains(body, []byte(`"kind":"Report"`)) {
				next.ServeHTTP(w, r)
				return
			}
			dropped := false
			once.Do(func() {
				next.ServeHTTP(httptest.NewRecorder(), r) // committed, answer never sent
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				dropped = true
			})
			if !dropped {
				next.ServeHTTP(w, r)
			}
		})
	}
	h := newHopEnv(t, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, drop)
	h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	w := h.startWorker(t)
	h.apply(t, 0, "load", contract.Args{"path": contract.StringValue("data/input.json")})
	if e := h.waitOp(t, 0, "done", func(e contract.OperationEntry) bool { return e.State.Settled() }); e.State != contract.OpDone {
		t.Fatalf("load = %+v, want done", e)
	}
	w.waitLine(t, "reported")
	if !strings.Contains(w.log(), "report unanswered") {
		t.Errorf("the worker never re-sent its report:\n%s", w.log())
	}
	if n := h.events(t, event.WorkReported); n != 1 {
		t.Errorf("work.reported events = %d, want 1", n)
	}
}

// TestWorker_LeasePerWorker: two workers on one Connection each hold a lease of their
// own; when the first shuts down and releases its lease, the second still serves the
// Connection. A Tool locked only on another Connection never reaches either.
func TestWorker_LeasePerWorker(t *testing.T) {
	h := newHopEnv(t, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, nil)
	h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	if _, err := h.a.Directory().CreateConnection(t.Context(), h.admin, "default", contract.CreateConnectionRequest{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	h.lock(t, "other", "test.stray@1")
	a := h.startWorker(t)
	a.waitLine(t, "lease acquired")
	b := h.startWorker(t)
	b.waitLine(t, "lease acquired")
	if n := h.events(t, event.LeaseAcquired); n != 2 {
		t.Fatalf("lease acquisitions with two workers = %d, want 2, one each", n)
	}
	h.apply(t, 0, "stray", contract.Args{"n": contract.StringValue("1")})
	h.apply(t, 1, "load", contract.Args{"path": contract.StringValue("data/input.json")})
	if e := h.waitOp(t, 1, "done", func(e contract.OperationEntry) bool { return e.State.Settled() }); e.State != contract.OpDone {
		t.Fatalf("load = %+v, want done", e)
	}
	if e := h.waitOp(t, 0, "queued", func(contract.OperationEntry) bool { return true }); e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched {
		t.Errorf("stray (not locked on this Connection) = %+v, want still queued", e)
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a.waitLine(t, "lease released")
	at, err := h.a.Directory().CreateAgent(t.Context(), h.admin, "default", contract.CreateAgentRequest{Name: "three"})
	if err != nil {
		t.Fatal(err)
	}
	third, err := h.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	h.agents = append(h.agents, third)
	h.apply(t, 2, "load", contract.Args{"path": contract.StringValue("data/input.json")})
	if e := h.waitOp(t, 2, "done", func(e contract.OperationEntry) bool { return e.State.Settled() }); e.State != contract.OpDone {
		t.Fatalf("load after the first worker stopped = %+v, want done by the second", e)
	}
	if n := h.events(t, event.LeaseAcquired); n != 2 {
		t.Errorf("lease acquisitions = %d, want 2", n)
	}
}

// tamper rewrites the first served row of every Poll answer with edit, as a hostile
// middle would.
func tamper(edit func(row map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var a map[string]any
			if json.Unmarshal(rec.Body.Bytes(), &a) == nil {
				if rows, ok := a["work"].([]any); ok && len(rows) > 0 {
					edit(rows[0].(map[string]any))
				}
			}
			b, _ := json.Marshal(a)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Code)
			w.Write(b)
		})
	}
}

// TestWorker_RefusesTamperedRows: a row whose grant does not match what the worker
// knows, or whose shape is not the closed work row, is neither claimed nor run.
func TestWorker_RefusesTamperedRows(t *testing.T) {
	key := new(string) // the Connection key, once the case's environment has one
	tests := []struct {
		name string
		edit func(row map[string]any)
		code contract.Code
	}{
		{"another request", func(row map[string]any) { row["args"] = map[string]any{"path": "../../etc/passwd"} }, contract.CodeGrantMismatch},
		{"a corrupted grant", func(row map[string]any) {
			g := strings.Split(row["grant"].(string), ".")
			row["grant"] = g[0] + "x." + g[1]
		}, contract.CodeGrantMalformed},
		{"another generation, signed with the key", func(row map[string]any) {
			g, _ := grant.Decode(row["grant"].(string))
			g.Generation++
			row["grant"], _ = grant.Sign([]byte(*key), g)
		}, contract.CodeGrantMismatch},
		{"an extra field", func(row map[string]any) { row["shell"] = "rm -rf /" }, contract.CodeWorkRow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHopEnv(t, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, tamper(tt.edit))
			*key = h.key
			h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
			w := h.startWorker(t)
			h.apply(t, 0, "load", contract.Args{"path": contract.StringValue("data/input.json")})
			w.waitLine(t, "code="+string(tt.code))
			if n := h.events(t, event.WorkClaimed); n != 0 {
				t.Errorf("work.claimed events = %d, want 0", n)
			}
			if e := h.waitOp(t, 0, "queued", func(contract.OperationEntry) bool { return true }); e.Stage != contract.StageNotDispatched {
				t.Errorf("operation = %+v, want still queued", e)
			}
		})
	}
}
