package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

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

// TestDemo_Interrupt interrupts a demo while the model is thinking, as Ctrl-C does: the
// demo stops its children cleanly (serve removes its url file on a clean exit) and
// exits with a failure, leaving no process behind.
func TestDemo_Interrupt(t *testing.T) {
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
	cmd.Env = workbench.ChildEnviron(nil)
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
