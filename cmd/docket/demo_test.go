package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/supervisor"
	"github.com/docketrun/docket/internal/workbench"
)

// fakeModel plays the verified calculation the way a model would: it reads the
// conversation it is sent, picks the next tool call from how many tool results it has
// seen, and takes the caseId from the OpenCase result. Its two faces, openAI and
// anthropic, speak the providers' streamed wire protocols.
type fakeModel struct {
	mu    sync.Mutex // guards the fields below
	turns int
	tools []string // the tool names of the first request
	calls []string // the arguments of every call it made
}

var caseIDPattern = regexp.MustCompile(`"caseId":"(case-[0-9]+)"`)

// next returns the next call given the tool results seen so far, or final text.
func (m *fakeModel) next(results []string, tools []string) (tool, args, final string) {
	caseID := ""
	for _, r := range results {
		if mm := caseIDPattern.FindStringSubmatch(r); mm != nil && caseID == "" {
			caseID = mm[1]
		}
	}
	plan := []struct{ tool, args string }{
		{"ApplyAction", `{"action":"load_input","params":{"path":"data/input.json"}}`},
		{"OpenCase", `{"caseType":"verified_calculation","businessKey":{"job_id":"calc-001"}}`},
		{"ApplyAction", `{"caseId":"` + caseID + `","action":"write_result","params":{"job_id":"calc-001","path":"out/result.json"}}`},
		{"ApplyAction", `{"caseId":"` + caseID + `","action":"verify_result"}`},
		{"CloseCase", `{"caseId":"` + caseID + `","disposition":"completed"}`},
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns++
	if m.tools == nil {
		m.tools = tools
	}
	if len(results) >= len(plan) {
		return "", "", "The calculation is written, verified and its Case closed."
	}
	p := plan[len(results)]
	m.calls = append(m.calls, p.args)
	return p.tool, p.args, ""
}

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

// openAI serves POST /v1/chat/completions, streamed, with tool calls.
func (m *fakeModel) openAI(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || !req.Stream {
		http.Error(w, `{"error":{"message":"send a streamed chat completion to /v1/chat/completions"}}`, http.StatusBadRequest)
		return
	}
	var results, tools []string
	for _, msg := range req.Messages {
		if msg.Role == "tool" && msg.Content != nil {
			results = append(results, *msg.Content)
		}
	}
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	tool, args, final := m.next(results, tools)
	w.Header().Set("Content-Type", "text/event-stream")
	choice := func(delta any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-demo", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if final != "" {
		sse(w, "", choice(map[string]any{"content": final}, nil))
		sse(w, "", choice(map[string]any{}, "stop"))
	} else {
		// The arguments arrive in two fragments, as streaming servers send them.
		half := len(args) / 2
		sse(w, "", choice(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", len(results)), "type": "function",
			"function": map[string]any{"name": tool, "arguments": args[:half]}}}}, nil))
		sse(w, "", choice(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args[half:]}}}}, nil))
		sse(w, "", choice(map[string]any{}, "tool_calls"))
	}
	sse(w, "", map[string]any{"id": "chatcmpl-demo", "choices": []any{}, "usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 20}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// anthropic serves POST /v1/messages, streamed, with tool_use blocks.
func (m *fakeModel) anthropic(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Content []struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "sk-ant-test" || json.NewDecoder(r.Body).Decode(&req) != nil || !req.Stream {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"send a streamed message with the key to /v1/messages"}}`)
		return
	}
	var results, tools []string
	for _, msg := range req.Messages {
		for _, b := range msg.Content {
			if b.Type == "tool_result" {
				results = append(results, b.Content)
			}
		}
	}
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	tool, args, final := m.next(results, tools)
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	stop := "tool_use"
	if final != "" {
		stop = "end_turn"
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": final}})
	} else {
		half := len(args) / 2
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", len(results)), "name": tool, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": args[:half]}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": args[half:]}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]int{"output_tokens": 20}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// check asserts what the model saw and sent over a whole demo.
func (m *fakeModel) check(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	want := []string{"ApplyAction", "ApplyBatch", "CloseCase", "OpenCase", "QueryBoard", "ReadArtifact"}
	if got := slices.Sorted(slices.Values(m.tools)); !slices.Equal(got, want) {
		t.Errorf("the model was offered %v, want exactly the six tools %v", got, want)
	}
	if m.turns != 6 {
		t.Errorf("the model was asked %d turns, want 5 calls and a final answer", m.turns)
	}
	for _, args := range m.calls {
		if strings.Contains(args, "262800") || strings.Contains(args, "259800") {
			t.Errorf("the model passed a derived value: %s", args)
		}
	}
}

// runDemo runs docket demo in this process with args and the environment vars, keeping
// its data dir, and checks the certified outcome and the output file.
func runDemo(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	e, out := testEnv(vars)
	if err := run(t.Context(), append([]string{"demo", "--keep", dir, "--timeout", "2m"}, args...), e); err != nil {
		t.Fatalf("docket demo: %v\n%s", err, out)
	}
	text := out.String()
	for _, want := range []string{
		`calculation_result{"job_id":"calc-001","subtotal":259800,"total":262800} (derived, attested`,
		`certified by calculation_verified{"job_id":"calc-001"} (derived, attested)`,
		"docket case show case-1: closed, completed",
		"chain ok",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "scripted model") {
		t.Errorf("the demo used the scripted model:\n%s", text)
	}
	b, err := os.ReadFile(filepath.Join(dir, "workspace", "out", "result.json"))
	if err != nil || !strings.Contains(string(b), `"total": 262800`) {
		t.Errorf("out/result.json = %q, %v; want the derived total 262800", b, err)
	}
	return text
}

// TestDemo_OpenAICompatibleModel runs the whole demo, serve and worker as child
// processes, with a model that speaks OpenAI Chat Completions and emits tool calls, not
// the scripted provider: a real provider path drives the governed loop to a certified
// close. The environment is the README's.
func TestDemo_OpenAICompatibleModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docket serve and docket worker as child processes")
	}
	model := &fakeModel{}
	srv := httptest.NewServer(http.HandlerFunc(model.openAI))
	defer srv.Close()
	text := runDemo(t, map[string]string{"DOCKET_MODEL_URL": srv.URL + "/v1", "DOCKET_MODEL": "qwen2.5-7b-instruct"})
	if want := "openai-compatible qwen2.5-7b-instruct at " + srv.URL + "/v1/chat/completions"; !strings.Contains(text, want) {
		t.Errorf("the demo's output lacks %q:\n%s", want, text)
	}
	model.check(t)
}

// TestDemo_AnthropicModel is the README's Anthropic command against a server speaking
// the Messages API, with the key from DOCKET_MODEL_KEY.
func TestDemo_AnthropicModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docket serve and docket worker as child processes")
	}
	model := &fakeModel{}
	srv := httptest.NewServer(http.HandlerFunc(model.anthropic))
	defer srv.Close()
	text := runDemo(t, map[string]string{"DOCKET_MODEL_KEY": "sk-ant-test"},
		"--provider", "anthropic", "--model", "claude-sonnet-4-5", "--model-url", srv.URL)
	if strings.Contains(text, "sk-ant-test") {
		t.Errorf("the demo printed the model key:\n%s", text)
	}
	model.check(t)
}

func TestWriteNeedsPerson(t *testing.T) {
	toml, err := fs.ReadFile(verifiedcalculation.Files, "capability/capability.toml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := writeNeedsPerson(toml)
	if err != nil {
		t.Fatalf("writeNeedsPerson(the example) = %v", err)
	}
	rules, err := fs.ReadFile(verifiedcalculation.Files, "capability/calculation.dl")
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := capability.LoadFS(fstest.MapFS{"capability.toml": {Data: got}, "calculation.dl": {Data: rules}})
	if err != nil {
		t.Fatalf("the raised capability does not load: %v", err)
	}
	approvals := map[string]string{}
	for _, a := range pkg.Declarations.Actions {
		approvals[a.Name] = a.Approval
	}
	wantApprovals := map[string]string{"load_input": "none", "write_result": "person", "verify_result": "none"}
	if !maps.Equal(approvals, wantApprovals) {
		t.Errorf("approvals = %v, want %v", approvals, wantApprovals)
	}

	tests := []struct {
		name, toml string
	}{
		{"no write_result", "[[action]]\nname          = \"other\"\napproval      = \"none\"\n"},
		{"approval already person", "[[action]]\nname          = \"write_result\"\napproval      = \"person\"\n"},
		{"approval only in a later action", "[[action]]\nname          = \"write_result\"\n[[action]]\nname = \"x\"\napproval      = \"none\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := writeNeedsPerson([]byte(tt.toml)); err == nil {
				t.Errorf("writeNeedsPerson(%q) = %q, want an error", tt.toml, out)
			}
		})
	}
}

func TestExpandVault(t *testing.T) {
	tests := []struct {
		name, tmpl, ws, want, wantErr string
	}{
		{"workspace", `{"root": "$WORKSPACE"}`, "/tmp/w", `{"root": "/tmp/w"}`, ""},
		{"quoted path", `{"root": "${WORKSPACE}"}`, `/tmp/a "b"\c`, `{"root": "/tmp/a \"b\"\\c"}`, ""},
		{"another variable", `{"root": "$HOME"}`, "/tmp/w", "", "$HOME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expandVault([]byte(tt.tmpl), tt.ws)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("expandVault(%q) = %q, %v; want an error naming %s", tt.tmpl, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("expandVault(%q, %q) = %q, %v; want %q", tt.tmpl, tt.ws, got, err, tt.want)
			}
		})
	}
	// The example's template, expanded, is a vault the worker reads.
	tmpl, err := fs.ReadFile(verifiedcalculation.Files, "vault.template.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := expandVault(tmpl, "/srv/ws")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Sources map[string]struct {
			Type string `json:"type"`
			Root string `json:"root"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(got, &v); err != nil || v.Sources[demoSource].Root != "/srv/ws" || v.Sources[demoSource].Type != "file" {
		t.Errorf("the example vault expands to %s (%v), want source %s of type file at /srv/ws", got, err, demoSource)
	}
}

// TestDemo_WorkerKilledMidWrite kills the worker after it ran the write and before its
// report reached the authority. The supervisor restarts it; the new instance's lease
// supersedes the old one, and the write's Operation needs a person: it is never run
// again, and the Case does not complete.
func TestDemo_WorkerKilledMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docket serve and docket worker as child processes")
	}
	e, out := testEnv(nil)
	d, err := newDemo(&demoCmd{Keep: filepath.Join(t.TempDir(), "demo"), Timeout: 2 * time.Minute}, e)
	if err != nil {
		t.Fatal(err)
	}
	// The worker reaches serve through this proxy, which kills it when the write's report
	// (the second report: the first is load_input's) is on its way.
	var (
		target    atomic.Pointer[url.URL]
		mu        sync.Mutex // guards the fields below
		reports   int
		killed    bool
		afterKill []string // the claims and reports sent once the first worker was killed
	)
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target.Load()) },
		ErrorLog: log.New(io.Discard, "", 0)} // the killed worker's long poll ends mid-flight

	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var wb struct {
			Operation struct {
				Kind string `json:"kind"`
			} `json:"operation"`
		}
		json.Unmarshal(body, &wb)
		kind := wb.Operation.Kind
		mu.Lock()
		if killed && (kind == contract.WorkClaim || kind == contract.WorkReport) {
			afterKill = append(afterKill, kind)
		}
		if kind == contract.WorkReport {
			reports++
		}
		kill := kind == contract.WorkReport && reports == 2 && !killed
		killed = killed || kill
		mu.Unlock()
		if kill {
			if err := syscall.Kill(d.sup.Pid("worker"), syscall.SIGKILL); err != nil {
				t.Errorf("kill the worker: %v", err)
			}
			http.Error(w, "the worker was killed", http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	d.workerURL = func(base string) string {
		u, err := url.Parse(base)
		if err != nil {
			t.Errorf("serve's URL %q: %v", base, err)
		}
		target.Store(u)
		return proxy.URL
	}
	d.serveFlags = []string{"--lease-ttl", "2s", "--hold", "5s"}
	d.restartWorker = true

	err = d.run(t.Context())
	if cerr := d.close(err == nil); cerr != nil {
		t.Errorf("close: %v", cerr)
	}
	if err == nil || !strings.Contains(err.Error(), "want closed completed") {
		t.Fatalf("demo = %v, want it to stop short of a completed Case\n%s", err, out)
	}
	text := out.String()
	if !strings.Contains(text, "operation ApplyAction write_result: needs_person") {
		t.Errorf("the write did not end needs_person:\n%s", text)
	}
	if strings.Contains(text, "write_result ran on the worker") {
		t.Errorf("the demo reported the write as run:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if !killed {
		t.Fatalf("the worker was never killed; the proxy saw %d reports", reports)
	}
	if len(afterKill) != 0 {
		t.Errorf("after the kill the worker sent %v; nothing may be claimed or reported again", afterKill)
	}
	wlog, err := os.ReadFile(d.sup.LogPath("worker"))
	if err != nil || !strings.Contains(string(wlog), "start 2 of worker") {
		t.Errorf("the worker was not restarted (%v):\n%s", err, wlog)
	}
	t.Logf("demo output:\n%s", text)
}

// TestDemo_Interrupt interrupts a demo while the model is thinking, as Ctrl-C does: the
// demo stops its children cleanly (serve removes its url file on a clean exit) and
// exits with a failure, leaving no process behind.
func TestDemo_Interrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docket demo and its children as processes")
	}
	bin, err := exec.LookPath("docket") // installed on PATH by testscript.Main
	if err != nil {
		t.Skipf("docket binary not on PATH: %v", err)
	}
	asked := make(chan struct{}, 1) // the model was asked its first turn
	release := make(chan struct{})  // closed when the test ends, to free the handler
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select { // never answers: the demo is interrupted mid-turn
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer model.Close()
	defer close(release)
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command(bin, "demo", "--keep", dir, "--model-url", model.URL, "--model", "slow")
	cmd.Env = workbench.ChildEnviron()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1) // written once, when the demo exits
	go func() { done <- cmd.Wait() }()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the demo ended before asking the model: %v\n%s", err, &out)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Errorf("an interrupted demo exited 0\n%s", &out)
	}
	if _, err := os.Stat(filepath.Join(dir, urlFile)); err == nil {
		t.Errorf("serve left its url file: it did not stop cleanly\n%s", &out)
	}
	pids := regexp.MustCompile(`child process (\d+)`).FindAllStringSubmatch(out.String(), -1)
	if len(pids) != 2 {
		t.Fatalf("the demo named %d child processes, want serve and worker\n%s", len(pids), &out)
	}
	for _, m := range pids {
		pid, _ := strconv.Atoi(m[1])
		if supervisor.Alive(pid) {
			t.Errorf("child process %d outlived the demo", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
