package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// docketRig runs the docket binary (registered by TestMain) as processes against one data
// dir, with a real docket serve.
type docketRig struct {
	bin  string
	home string
	env  []string
}

func newDocketRig(t *testing.T) *docketRig {
	t.Helper()
	bin, err := exec.LookPath("docket")
	if err != nil {
		t.Fatalf("the docket command TestMain registers is not on PATH: %v", err)
	}
	r := &docketRig{bin: bin, home: t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCKET_") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, "DOCKET_HOME="+r.home, "DOCKET_PASSPHRASE=correct horse battery")
	r.exec(t, 0, nil, "init")
	srv := r.command(t, nil, "serve", "--listen", "127.0.0.1:0", "--hold", "200ms", "--task-lease", "3s", "--log-level", "debug")
	var srvOut syncBuffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		if t.Failed() {
			t.Logf("docket serve:\n%s", srvOut.String())
		}
	})
	r.exec(t, 0, nil, "doctor", "--wait", "30s")
	capability, err := filepath.Abs(filepath.Join("..", "..", "examples", "verified-calculation", "capability"))
	if err != nil {
		t.Fatal(err)
	}
	r.exec(t, 0, nil, "capability", "install", capability)
	return r
}

func (r *docketRig) command(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), r.bin, args...)
	cmd.Env = append(append([]string(nil), r.env...), env...)
	cmd.Dir = r.home
	return cmd
}

// exec runs docket with args and fails unless it exits with code.
func (r *docketRig) exec(t *testing.T, code int, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := r.command(t, env, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if got := exitOf(err); got != code {
		t.Fatalf("docket %s: exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, err, code, o.String(), e.String())
	}
	return o.String(), e.String()
}

func exitOf(err error) int {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// agent creates an Agent (with the flags of docket agent create in extra) and returns
// the path of a file holding its token.
func (r *docketRig) agent(t *testing.T, name string, extra ...string) (id, tokenFile string) {
	t.Helper()
	out, _ := r.exec(t, 0, nil, append([]string{"agent", "create", name, "-o", "json"}, extra...)...)
	var at contract.AgentToken
	if err := json.Unmarshal([]byte(out), &at); err != nil {
		t.Fatalf("agent create printed %q: %v", out, err)
	}
	tokenFile = filepath.Join(t.TempDir(), name+".token")
	if err := os.WriteFile(tokenFile, []byte(at.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	return string(at.Agent.ID), tokenFile
}

// script writes a scripted model's script and returns its path.
func (r *docketRig) script(t *testing.T, js string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// conversation reads an Agent's conversation from the authority as the member.
func (r *docketRig) conversation(t *testing.T, agentID, id string) (results []agent.ToolResult, state map[string]json.RawMessage) {
	t.Helper()
	c, msgs := r.readConversation(t, agentID, id)
	for _, m := range msgs {
		results = append(results, m.Results...)
	}
	if err := json.Unmarshal(c.State, &state); err != nil {
		t.Fatal(err)
	}
	return results, state
}

// readConversation reads the Agent's conversation id through /api/v1, with its messages
// decoded.
func (r *docketRig) readConversation(t *testing.T, agentID, id string) (contract.Conversation, []agent.Message) {
	t.Helper()
	cl, err := newClient(&env{Getenv: func(k string) string {
		if k == "DOCKET_HOME" {
			return r.home
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	var c contract.Conversation
	if err := cl.do(t.Context(), http.MethodGet, "/api/v1/projects/default/agents/"+agentID+"/conversations/"+id, nil, &c); err != nil {
		t.Fatalf("read conversation %s: %v", id, err)
	}
	msgs := make([]agent.Message, 0, len(c.Messages))
	for _, raw := range c.Messages {
		var m agent.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return c, msgs
}

// conversationText returns the text of every message of the Agent's conversation id.
func (r *docketRig) conversationText(t *testing.T, agentID, id string) string {
	t.Helper()
	_, msgs := r.readConversation(t, agentID, id)
	var text strings.Builder
	for _, m := range msgs {
		text.WriteString(m.Text + "\n")
	}
	return text.String()
}

func resultCodes(t *testing.T, rs []agent.ToolResult) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		var h struct {
			ErrorCode string `json:"errorCode"`
		}
		if err := json.Unmarshal([]byte(r.Content), &h); err != nil {
			t.Fatalf("result %s: %v", r.Content, err)
		}
		out = append(out, h.ErrorCode)
	}
	return out
}

// countEvents counts the project's events of type by actor.
func (r *docketRig) countEvents(t *testing.T, typ, actor string) int {
	t.Helper()
	out, _ := r.exec(t, 0, nil, "events", "tail")
	n := 0
	for line := range strings.Lines(out) {
		f := strings.Split(line, "\t")
		if len(f) > 3 && f[2] == typ && f[3] == actor {
			n++
		}
	}
	return n
}

const (
	queryBoard = `{"tool":"QueryBoard","arguments":{}}`
	assertSeen = `{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"calculation_note","args":{"job_id":"calc-001"}}}]}}`
	loadInput  = `{"tool":"ApplyAction","arguments":{"action":"load_input","params":{"path":"data/input.json"}}}`
)

// TestAgentRun_AgainstServe runs docket agent run as a process against a real docket
// serve with the verified-calculation capability installed and no worker: the model is
// scripted, and its writes that need a worker stay running.
func TestAgentRun_AgainstServe(t *testing.T) {
	r := newDocketRig(t)

	t.Run("completes with the write gate in play", func(t *testing.T) {
		id, tok := r.agent(t, "calc")
		// The held load_input answers running at the gateway's bound; the turn stops there:
		// the calls after it are not sent (the write gate would refuse them), each
		// answered not_executed (docs/mcp.md, One client per Agent).
		s := r.script(t, `{"turns":[{"calls":[`+queryBoard+`]},{"calls":[`+assertSeen+`]},{"calls":[`+loadInput+`,`+assertSeen+`,`+queryBoard+`]},{"final":"done"}]}`)
		// load_input stays running (there is no worker): the task's work is pending.
		out, _ := r.exec(t, exitPending, nil, "agent", "run", "--token-file", tok, "--script", s, "--hold-wait", "1ms", "--conversation", "e2e-1", "compute calc-001")
		// The scripted model ends its turn on the running load_input, saying so.
		if !strings.Contains(out, "load_input") || !strings.Contains(out, "is running") {
			t.Errorf("stdout %q, want the turn ended on the running load_input", out)
		}
		res, _ := r.conversation(t, id, "e2e-1")
		want := []string{"", "", "", string(contract.CodeNotExecuted), string(contract.CodeNotExecuted)}
		if diff := cmp.Diff(want, resultCodes(t, res)); diff != "" {
			t.Errorf("codes the model read, kept in the authority (-want +got):\n%s", diff)
		}
		if n := r.countEvents(t, event.ConversationSaved, "agent:"+id); n == 0 {
			t.Error("the authority holds no conversation.saved events of the agent")
		}
	})

	t.Run("a bad agent token exits 3", func(t *testing.T) {
		s := r.script(t, `{"turns":[{"final":"done"}]}`)
		_, stderr := r.exec(t, exitCredential, []string{"DOCKET_AGENT_TOKEN=dkt_agt_0123456789abcdef0123456789abcdef0123456789a"}, "agent", "run", "--script", s, "task")
		if !strings.Contains(stderr, "unauthenticated") {
			t.Errorf("stderr %q, want the credential refusal", stderr)
		}
	})

	t.Run("a second client of the same agent replaces the first, which exits 4", func(t *testing.T) {
		_, tok := r.agent(t, "calc2")
		first := r.command(t, nil, "agent", "run", "--token-file", tok, "--hold-wait", "10m", "--conversation", "first",
			"--script", r.script(t, `{"turns":[{"calls":[`+queryBoard+`]},{"calls":[`+loadInput+`]},{"final":"never"}]}`), "task")
		stderr := startLines(t, first, first.StderrPipe)
		waitLine(t, stderr, "QueryBoard") // the first runtime is connected and working
		r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--conversation", "second",
			"--script", r.script(t, `{"turns":[{"calls":[`+queryBoard+`]},{"final":"second done"}]}`), "task")
		rest := drain(stderr)
		if code := exitOf(first.Wait()); code != exitReplaced || !strings.Contains(rest, "connection_replaced") {
			t.Errorf("the first runtime exited %d with stderr %q; want %d and connection_replaced", code, rest, exitReplaced)
		}
	})

	t.Run("a killed runtime resumes from the authority without re-sending", func(t *testing.T) {
		id, tok := r.agent(t, "calc3")
		actor := "agent:" + id
		follow := r.command(t, nil, "events", "tail", "--follow")
		events := startLines(t, follow, follow.StdoutPipe)
		defer func() {
			follow.Process.Kill()
			drain(events)
			follow.Wait()
		}()

		// The scripted model plays the turn after the conversation's last, so both runs
		// share the script.
		script := r.script(t, `{"turns":[{"calls":[`+loadInput+`,`+queryBoard+`]},{"final":"resumed"}]}`)
		first := r.command(t, nil, "agent", "run", "--token-file", tok, "--hold-wait", "10m", "--conversation", "e2e-3", "--script", script, "task")
		lines := startLines(t, first, first.StderrPipe)
		// The runtime saves the call as in flight before it sends it, so once the
		// authority admitted the operation the runtime may be killed at any point.
		waitLine(t, events, "operation.admitted\t"+actor)
		if err := first.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		drain(lines)
		first.Wait()

		out, _ := r.exec(t, exitPending, nil, "agent", "run", "--token-file", tok, "--conversation", "e2e-3", "--script", script)
		if !strings.Contains(out, "resumed") {
			t.Errorf("stdout %q, want the resumed run's final answer", out)
		}
		res, state := r.conversation(t, id, "e2e-3")
		want := []string{string(contract.CodeOutcomeUnknown), string(contract.CodeNotExecuted)}
		if diff := cmp.Diff(want, resultCodes(t, res)); diff != "" {
			t.Errorf("codes the resumed model read (-want +got):\n%s", diff)
		}
		if !strings.Contains(string(state["watching"]), "ApplyAction") {
			t.Errorf("state %s, want the unsent call's operation watched for its outcome", state)
		}
		if n := r.countEvents(t, event.OpAdmitted, actor); n != 1 {
			t.Errorf("the authority admitted %d operations of the agent, want 1: nothing is re-sent", n)
		}
	})

	t.Run("the model key reaches no output, log or event", func(t *testing.T) {
		const sentinel = "sk-SENTINEL-e2e-5b1d"
		model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// A hostile endpoint echoes the key it was sent.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"invalid key %s","type":"invalid_request_error"}}`, req.Header.Get("Authorization"))
		}))
		defer model.Close()
		_, tok := r.agent(t, "calc5")
		out, stderr := r.exec(t, exitFailure, []string{"DOCKET_MODEL_KEY=" + sentinel}, "agent", "run", "--token-file", tok, "--log-level", "debug",
			"--model-url", model.URL, "--model", "gpt-4o", "--conversation", "e2e-5", "tell "+sentinel[:3]+" nothing")
		events, _ := r.exec(t, 0, nil, "events", "tail")
		if !strings.Contains(events, "e2e-5") {
			t.Errorf("the conversation was not saved in the authority:\n%s", events)
		}
		for what, text := range map[string]string{"stdout": out, "stderr": stderr, "events": events} {
			if strings.Contains(text, sentinel) {
				t.Errorf("the model key is in the runtime's %s:\n%s", what, text)
			}
		}
	})
}

// startLines starts cmd and returns one of its streams, split in lines. Lines arrive on
// the channel until the stream ends, then it is closed; drain it before cmd.Wait.
func startLines(t *testing.T, cmd *exec.Cmd, stream func() (io.ReadCloser, error)) <-chan string {
	t.Helper()
	pipe, err := stream()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64) // closed by the reader when the stream ends
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// waitLine reads lines until one contains want; the stream ending first fails the test.
func waitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	var seen []string
	for l := range lines {
		if strings.Contains(l, want) {
			return
		}
		seen = append(seen, l)
	}
	t.Fatalf("the stream ended without a line containing %q:\n%s", want, strings.Join(seen, "\n"))
}

// drain reads the rest of lines.
func drain(lines <-chan string) string {
	var b strings.Builder
	for l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// syncBuffer is a bytes.Buffer safe for a process's two streams.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
