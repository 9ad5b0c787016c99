package gateway_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/slowtest"
	"github.com/docketrun/docket/internal/store"
)

// heldAgents is how many Agents hold a call open at once in BenchmarkHeldCalls: 1,000
// unless -held-agents says otherwise (benchmarks/README.md measures 10,000 on one serve:
// go test ./internal/gateway -run '^$' -bench 'HeldCalls/server' -benchtime 1x -args -held-agents 10000).
var heldAgents = flag.Int("held-agents", 1000, "Agents holding a call at once in BenchmarkHeldCalls")

// heldProto is how BenchmarkHeldCalls's clients reach the gateway:
//   - http1: HTTP/1.1, one connection per held call;
//   - h2: HTTP/2 (h2c with prior knowledge) over one shared transport, the shape of one
//     process hosting many Agents: the gateway carries many held calls as streams of one
//     connection;
//   - h2-each: HTTP/2 with a transport, so a connection, of each Agent's own, the shape
//     of one agent runtime process per Agent.
var heldProto = flag.String("held-proto", "http1", "BenchmarkHeldCalls's clients speak http1, h2 (one shared transport) or h2-each (a transport per Agent)")

// heldProfiles, when set, is a directory BenchmarkHeldCalls/server writes the server's
// goroutine (goroutine.txt, stacks with counts) and heap (heap.pprof) profiles to while
// every call is held: what the per-Agent figures are made of.
var heldProfiles = flag.String("held-profiles", "", "directory for the server's goroutine and heap profiles while every call is held")

// writeHeldProfiles writes the profiles -held-profiles asks for.
func writeHeldProfiles(dir string) error {
	for _, p := range []struct {
		name, file string
		debug      int
	}{{"goroutine", "goroutine.txt", 1}, {"heap", "heap.pprof", 0}} {
		f, err := os.Create(filepath.Join(dir, p.file))
		if err != nil {
			return err
		}
		err = pprof.Lookup(p.name).WriteTo(f, p.debug)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s profile: %w", p.name, err)
		}
	}
	return nil
}

// Environment of the client process BenchmarkHeldCalls/server starts (see TestMain).
const (
	envHeldURL    = "DOCKET_HELD_CLIENTS_URL"
	envHeldTokens = "DOCKET_HELD_CLIENTS_TOKENS" // a file of agent tokens, one a line
	envHeldProto  = "DOCKET_HELD_CLIENTS_PROTO"  // -held-proto
)

// TestMain runs the tests, or — when BenchmarkHeldCalls/server starts this test binary
// as its client process — the held-call clients.
func TestMain(m *testing.M) {
	if url := os.Getenv(envHeldURL); url != "" {
		if err := heldClientProcess(url, os.Getenv(envHeldTokens), os.Getenv(envHeldProto), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "held clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	slowtest.Main(m) // they serve /mcp: skipped under -short
}

// memory is a snapshot of the process after a forced collection.
type memory struct {
	Heap, Stack uint64
	// StackUsed is the part of the stacks in use, as the last collection scanned them:
	// Stack is what the runtime allocated for them.
	StackUsed  uint64
	Goroutines int
}

// Each collection also halves a goroutine stack that uses less than a quarter of itself,
// so a parked goroutine's stack shrinks, cycle after cycle, to what it uses: measure
// collects until the stacks stop shrinking (a held call is held for minutes, through
// many collections, in a running serve), at most ten times.
func measure() memory {
	runtime.GC()
	runtime.GC() // the second cycle frees what the first one's finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for range 8 {
		stack := ms.StackInuse
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.StackInuse >= stack {
			break
		}
	}
	scanned := []metrics.Sample{{Name: "/gc/scan/stack:bytes"}}
	metrics.Read(scanned)
	return memory{Heap: ms.HeapAlloc, Stack: ms.StackInuse, StackUsed: scanned[0].Value.Uint64(), Goroutines: runtime.NumGoroutine()}
}

// report reports (after − before) / n of each figure under prefix, n the Agents measured.
func report(b *testing.B, prefix string, n int, before, after memory) {
	b.ReportMetric(float64(int64(after.Heap)-int64(before.Heap))/float64(n), prefix+"heap-B/call")
	b.ReportMetric(float64(int64(after.Stack)-int64(before.Stack))/float64(n), prefix+"stack-B/call")
	b.ReportMetric(float64(int64(after.Heap+after.Stack)-int64(before.Heap+before.Stack))/float64(n), prefix+"total-B/call")
	b.ReportMetric(float64(int64(after.StackUsed)-int64(before.StackUsed))/float64(n), prefix+"stack-used-B/call")
	b.ReportMetric(float64(after.Goroutines-before.Goroutines)/float64(n), prefix+"goroutines/call")
}

// snapshots are one side's memory with no session, with every session idle, and with
// every call held, for N Agents.
type snapshots struct {
	N                int
	None, Idle, Held memory
}

// report reports the idle sessions (idle-), the held calls over idle sessions (held-),
// and sessions and held calls together (no infix), each under prefix.
func (s snapshots) report(b *testing.B, prefix string) {
	report(b, prefix+"idle-", s.N, s.None, s.Idle)
	report(b, prefix+"held-", s.N, s.Idle, s.Held)
	report(b, prefix, s.N, s.None, s.Held)
}

// heldClients are one official SDK client per Agent, each on its own session.
type heldClients struct {
	sessions []*mcp.ClientSession
	held     chan struct{} // one progress notification per call the gateway holds
	answers  chan error
}

// heldTransport is a client transport that keeps every connection it opens, so no
// connection is closed and dialled again; with h2 it speaks HTTP/2 only, and opens a
// further connection only when one carries as many streams as the server allows.
func heldTransport(conns int, h2 bool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = conns
	if h2 {
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
	}
	return t
}

// connectHeld connects one client per token to url, a few at a time, speaking proto (see
// heldProto).
func connectHeld(ctx context.Context, url string, tokens []string, proto string) (*heldClients, error) {
	var shared *http.Transport
	switch proto {
	case "http1", "":
		shared = heldTransport(4*len(tokens), false)
	case "h2":
		shared = heldTransport(4*len(tokens), true)
	case "h2-each":
	default:
		return nil, fmt.Errorf("-held-proto %q: want http1, h2 or h2-each", proto)
	}
	h := &heldClients{sessions: make([]*mcp.ClientSession, len(tokens)),
		held: make(chan struct{}, 2*len(tokens)), answers: make(chan error, len(tokens))}
	errs := make([]error, len(tokens))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				c := mcp.NewClient(&mcp.Implementation{Name: "held", Version: "1"}, &mcp.ClientOptions{
					ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { h.held <- struct{}{} },
				})
				transport := shared
				if transport == nil {
					transport = heldTransport(4, true)
				}
				tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
					HTTPClient: &http.Client{Transport: bearer{token: tokens[i], next: transport}}}
				h.sessions[i], errs[i] = c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: contract.ProtocolVersion})
				if errs[i] != nil {
					errs[i] = fmt.Errorf("connect agent %d: %w", i, errs[i])
				}
			}
		})
	}
	for i := range tokens {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// hold has every client call ApplyAction fetch of an executed Action no worker takes,
// with a progress token, and returns once the gateway holds every call: each one's first
// progress says running.
func (h *heldClients) hold(ctx context.Context) {
	for i, cs := range h.sessions {
		go func() {
			params := &mcp.CallToolParams{Name: "ApplyAction", Arguments: fetchCall(fmt.Sprintf("f%d.txt", i))}
			params.SetProgressToken(fmt.Sprint(i))
			res, err := cs.CallTool(ctx, params)
			if err == nil && res.IsError {
				err = fmt.Errorf("agent %d: the held call ended in a tool error", i)
			}
			h.answers <- err
		}()
	}
	for range h.sessions {
		<-h.held
	}
}

// wait returns once every held call has answered, with the first error.
func (h *heldClients) wait() error {
	var errs []error
	for range h.sessions {
		errs = append(errs, <-h.answers)
	}
	return errors.Join(errs...)
}

func (h *heldClients) close() {
	for _, cs := range h.sessions {
		if cs != nil {
			cs.Close()
		}
	}
}

// heldClientProcess is the client process of BenchmarkHeldCalls/server. It connects a
// client per token in the file tokens, writes "connected", holds a call per client
// after a line on in, then writes "held" and its snapshots as JSON, and returns once
// every held call answered (the benchmark settles the Operations).
func heldClientProcess(url, tokens, proto string, in io.Reader, out io.Writer) error {
	ctx := context.Background()
	data, err := os.ReadFile(tokens)
	if err != nil {
		return err
	}
	s := snapshots{N: len(strings.Fields(string(data)))}
	s.None = measure()
	h, err := connectHeld(ctx, url, strings.Fields(string(data)), proto)
	if err != nil {
		return err
	}
	defer h.close()
	s.Idle = measure()
	fmt.Fprintln(out, "connected")
	if _, err := bufio.NewReader(in).ReadString('\n'); err != nil {
		return fmt.Errorf("wait for the go-ahead: %w", err)
	}
	h.hold(ctx)
	s.Held = measure()
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "held %s\n", raw)
	return h.wait()
}

// heldFixture is a gateway fixture with heldAgents Agents and their tokens.
type heldFixture struct {
	*fixture
	tokens  []string
	callers []identity.Caller
	probe   *mcp.ClientSession // another Agent's session, whose QueryBoards are answered meanwhile
}

func newHeldFixture(b *testing.B) *heldFixture {
	b.Helper()
	f := &heldFixture{fixture: newFixture(b, time.Hour), tokens: []string{}, callers: []identity.Caller{}}
	f.tokens, f.callers = append(f.tokens, f.token), append(f.callers, f.agent)
	ctx := context.Background()
	for _, tok := range addAgents(b, f.st, f.admin, *heldAgents-1) {
		c, err := f.a.Directory().Authenticate(ctx, identity.Token(tok))
		if err != nil {
			b.Fatal(err)
		}
		f.tokens, f.callers = append(f.tokens, tok), append(f.callers, c)
	}
	tok, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "probe"})
	if err != nil {
		b.Fatalf("CreateAgent probe: %v", err)
	}
	f.probe = f.connectAs(b, tok.Token, nil)
	return f
}

// probeQueries answers 50 QueryBoards of the probe Agent one after the other and reports
// their median and slowest time under prefix: whether the process stays responsive.
func (f *heldFixture) probeQueries(b *testing.B, prefix string) {
	b.Helper()
	var took []time.Duration
	for range 50 {
		start := time.Now()
		res, err := callErr(f.probe, "QueryBoard", struct{}{})
		if err != nil || res.IsError {
			b.Fatalf("QueryBoard of the probe: %v", err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), prefix+"queryboard-p50-ns")
	b.ReportMetric(float64(took[len(took)-1].Nanoseconds()), prefix+"queryboard-max-ns")
}

// checkHeld fails unless the authority holds every Agent's call: each one queued for a
// worker that never comes.
func (f *heldFixture) checkHeld(b *testing.B) {
	b.Helper()
	if q, err := f.ops.Operations().Queued(context.Background(), "default"); err != nil || len(q) != *heldAgents {
		b.Fatalf("queued Operations = %d (%v), want %d held", len(q), err, *heldAgents)
	}
}

// settle settles every Agent's Operation ordinal, which answers its held call. A fresh
// worker, on a Connection of its own and with a long lease, does it: holding and settling
// 10,000 calls take longer than the fixture worker's lease.
func (f *heldFixture) settle(b *testing.B, ordinal int64) {
	b.Helper()
	opts := fetchWorker(fmt.Sprintf("settle-%d", ordinal))
	opts.LeaseTTL = time.Hour // settling 10,000 Operations takes minutes, and this worker never renews
	w := authoritytest.NewWorker(b, f.a, f.admin, f.ops, opts)
	n := w.SettleAll(b, func(id string) []contract.Args { return []contract.Args{{"path": str(id + ".txt")}} })
	if n != len(f.callers) {
		b.Fatalf("settled %d Operations of ordinal %d, want one per Agent (%d)", n, ordinal, len(f.callers))
	}
}

// BenchmarkHeldCalls measures what it costs to hold 1,000 Agents' calls open at once:
// each Agent has its own official SDK client on loopback and calls ApplyAction of an
// executed Action that no worker takes, so the authority holds the answer (the hold bound
// is an hour) until the benchmark settles every Operation. Figures are per Agent; see
// [snapshots.report] for the idle-, held- and total figures.
//
//   - in-process: clients and server in this process; the figures cover both sides —
//     client sessions and connections, server sessions, the held HTTP requests and the
//     authority's holds.
//   - server: the clients run in a child process (this test binary, see TestMain); the
//     plain figures are the server's alone, the client- figures the child's.
//
// Goroutine stacks are not heap: stack-B/call is reported apart.
func BenchmarkHeldCalls(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		if *heldAgents > 2000 {
			b.Skip("clients and server in one process take four descriptors per Agent; run BenchmarkHeldCalls/server")
		}
		f := newHeldFixture(b)
		ctx := context.Background()
		var ordinal int64
		for b.Loop() {
			ordinal++
			s := snapshots{N: *heldAgents}
			s.None = measure()
			h, err := connectHeld(ctx, f.url, f.tokens, *heldProto)
			if err != nil {
				b.Fatal(err)
			}
			s.Idle = measure()
			h.hold(ctx)
			f.checkHeld(b)
			s.Held = measure()
			b.StopTimer()
			s.report(b, "")
			f.settle(b, ordinal)
			if err := h.wait(); err != nil {
				b.Fatal(err)
			}
			h.close()
			b.StartTimer()
		}
	})
	b.Run("server", func(b *testing.B) {
		f := newHeldFixture(b)
		tokens := filepath.Join(b.TempDir(), "tokens")
		if err := os.WriteFile(tokens, []byte(strings.Join(f.tokens, "\n")), 0o600); err != nil {
			b.Fatal(err)
		}
		var ordinal int64
		for b.Loop() {
			ordinal++
			s := snapshots{N: *heldAgents}
			s.None = measure()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), envHeldURL+"="+f.url, envHeldTokens+"="+tokens, envHeldProto+"="+*heldProto)
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			lines.Buffer(nil, 1<<20)
			next := func(prefix string) string {
				if !lines.Scan() || !strings.HasPrefix(lines.Text(), prefix) {
					cmd.Process.Kill()
					b.Fatalf("client process said %q (%v), want %s", lines.Text(), lines.Err(), prefix)
				}
				return strings.TrimPrefix(lines.Text(), prefix)
			}
			next("connected")
			s.Idle = measure()
			f.probeQueries(b, "idle-")
			fmt.Fprintln(stdin, "hold")
			var client snapshots
			if err := json.Unmarshal([]byte(next("held ")), &client); err != nil {
				b.Fatal(err)
			}
			f.checkHeld(b)
			s.Held = measure()
			if *heldProfiles != "" {
				if err := writeHeldProfiles(*heldProfiles); err != nil {
					b.Fatal(err)
				}
			}
			f.probeQueries(b, "held-")
			b.StopTimer()
			s.report(b, "")
			client.report(b, "client-")
			f.settle(b, ordinal)
			if err := cmd.Wait(); err != nil {
				b.Fatalf("client process: %v", err)
			}
			b.StartTimer()
		}
	})
}

// addAgents adds n Agents to the project default as CreateAgent does — the agent row
// with its token's digest and the agent.created event — but a thousand to a transaction:
// CreateAgent reads the project's every Agent to refuse a taken name, which makes
// creating 10,000 one by one take most of an hour here. It returns their tokens.
func addAgents(b *testing.B, st store.Store, admin identity.Caller, n int) []string {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	var tokens []string
	for start := 0; start < n; start += 1000 {
		err := st.Update(ctx, func(tx store.Tx) error {
			for i := start; i < min(start+1000, n); i++ {
				secret := make([]byte, 32)
				if _, err := rand.Read(secret); err != nil {
					return err
				}
				tok := contract.PrefixAgent + base64.RawURLEncoding.EncodeToString(secret)
				digest := sha256.Sum256([]byte(tok))
				ag := contract.Agent{ID: contract.AgentID(fmt.Sprintf("agt_%016x", i+1)), Project: "default",
					Name: fmt.Sprintf("held-%d", i+1), Kind: contract.AgentKindAgent, CreatedAt: now}
				if err := tx.CreateAgent(ctx, store.Agent{ID: string(ag.ID), Project: "default", Name: ag.Name, Kind: string(ag.Kind),
					TokenDigest: digest[:], CreatedAt: now}); err != nil {
					return err
				}
				if err := eventlog.Append(ctx, tx, "default", admin.Principal(), now, event.AgentCreatedData{Agent: ag}); err != nil {
					return err
				}
				tokens = append(tokens, tok)
			}
			return nil
		})
		if err != nil {
			b.Fatalf("add agents %d…: %v", start, err)
		}
	}
	return tokens
}
