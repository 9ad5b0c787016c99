package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// TestHook_ClaudeCode runs the real Claude Code CLI (DOCKET_CLAUDE names it; .ci/run
// installs the pinned npm package) headless in a temporary git repository, against a
// loopback Anthropic-compatible server that answers with tool_use blocks, and with
// Docket's hook installed by docket hook install against a real docket serve: Bash
// go test and an Edit under docs/ are decided by the orchestrator under the delegation
// policy, an Edit outside docs/ by a member who denies it — it does not run and Claude
// Code lists it under permission_denials — a Bash with shell syntax by a member who lets
// it run, two Reads run at once freely, and the whole record verifies.
func TestHook_ClaudeCode(t *testing.T) {
	claude := os.Getenv("DOCKET_CLAUDE")
	if claude == "" {
		t.Skip("DOCKET_CLAUDE does not name a Claude Code binary; .ci/run installs the pinned @anthropic-ai/claude-code and sets it")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: %v", tool, err)
		}
	}
	r := newDocketRig(t)
	// The orchestrator may decide Edits under docs/ and go test runs; Read runs freely for
	// coder; the rest waits for a decision.
	for _, name := range []string{"delegation.toml", "hook.toml"} {
		p, err := filepath.Abs(filepath.Join("..", "..", "internal", "authority", "testdata", "hook", name))
		if err != nil {
			t.Fatal(err)
		}
		r.exec(t, exitOK, nil, "policy", "publish", p)
	}
	bossID, bossToken := r.agent(t, "boss", "--kind", "orchestrator")

	repo := newHookRepo(t)
	out, _ := r.exec(t, exitOK, nil, "hook", "install", "claude-code", "--agent", "coder", "--wait", "2m", repo, "-o", "json")
	var installed struct {
		Agent     contract.Agent `json:"agent"`
		TokenFile string         `json:"tokenFile"`
	}
	if err := json.Unmarshal([]byte(out), &installed); err != nil {
		t.Fatalf("hook install printed %q: %v", out, err)
	}
	if fi, err := os.Stat(installed.TokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, %v; want mode 0600", installed.TokenFile, fi, err)
	}
	if st := git(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("hook install left files git sees:\n%s", st)
	}

	docs, main := filepath.Join(repo, "docs", "guide.md"), filepath.Join(repo, "main.go")
	model := newClaudeModel(t, [][]claudeToolUse{
		{{"Bash", map[string]any{"command": "go test ./...", "description": "Run the tests"}}},
		{{"Read", map[string]any{"file_path": docs}}, {"Read", map[string]any{"file_path": main}}}, // two at once
		{{"Edit", map[string]any{"file_path": docs, "old_string": "draft", "new_string": "final"}}},
		{{"Edit", map[string]any{"file_path": main, "old_string": "func main() {}", "new_string": "func main() { panic(1) }"}}},
		{{"Bash", map[string]any{"command": "go vet ./... && echo vetted", "description": "Vet"}}},
	})

	// The deciders: each request the hook raises is decided as it is created — by the
	// orchestrator through docket.decide when a class covers it, else by a member.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	member := r.memberClient(t)
	wg.Go(func() {
		err := member.api.FollowEvents(ctx, "default", 0, func(e contract.Event) error {
			if e.Type != event.RequestCreated {
				return nil
			}
			var req contract.Request
			if err := json.Unmarshal(e.Data, &req); err != nil {
				return err
			}
			if req.Vector.Action != contract.ActionHook {
				return nil
			}
			args := req.Vector.Args
			covered := req.Vector.Tool == "Bash" && strings.HasPrefix(args["command"].Str(), "go test") ||
				req.Vector.Tool == "Edit" && strings.HasPrefix(args["path"].Str(), "docs/")
			if covered {
				js := fmt.Sprintf(`{"turns":[{"calls":[%s]},{"final":"decided"}]}`, decideCall(jsonString(string(req.ID)), jsonString(req.Digest)))
				r.execRun(t, "--token-file", bossToken, "--script", r.script(t, js), "--conversation", "decide-"+string(req.ID), "decide")
				return nil
			}
			if req.Vector.Tool == "Bash" { // shell syntax: a member reads it and lets it run
				r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
				return nil
			}
			r.exec(t, exitOK, nil, "decide", string(req.ID), "deny", "--digest", req.Digest, "--reason", "outside docs/: not today")
			return nil
		})
		if err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})

	run, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a bound for a hung CLI, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(run, claude, "-p", "Run the tests, then finish the guide.", "--output-format", "json", "--tools", "Bash,Edit,Read")
	cmd.Dir = repo
	cmd.Env = claudeEnv(t, model.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s\nmodel saw:\n%s", err, stdout.String(), stderr.String(), model.log())
	}
	t.Logf("the model saw:\n%s\nclaude printed:\n%s", model.log(), stdout.String())
	var res struct {
		IsError           bool `json:"is_error"`
		PermissionDenials []struct {
			ToolName  string         `json:"tool_name"`
			ToolUseID string         `json:"tool_use_id"`
			ToolInput map[string]any `json:"tool_input"`
		} `json:"permission_denials"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("claude printed %q: %v", stdout.String(), err)
	}
	var denied []string
	for _, d := range res.PermissionDenials {
		denied = append(denied, d.ToolName+" "+fmt.Sprint(d.ToolInput["file_path"]))
	}
	if diff := cmp.Diff([]string{"Edit " + main}, denied); diff != "" {
		t.Errorf("permission_denials (-want +got):\n%s\nmodel saw:\n%s", diff, model.log())
	}
	if b, err := os.ReadFile(docs); err != nil || !strings.Contains(string(b), "final") {
		t.Errorf("docs/guide.md = %q, %v; the approved Edit did not run", b, err)
	}
	if b, err := os.ReadFile(main); err != nil || string(b) != hookRepoMain {
		t.Errorf("main.go = %q, %v; the denied Edit ran", b, err)
	}

	calls, err := member.api.HookCalls(t.Context(), "default", installed.Agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	boss, admin := contract.NewPrincipal(contract.PrincipalAgent, bossID), member.whoami(t)
	type row struct {
		Tool, What, Decision string
		By                   contract.Principal
		Ran                  bool
	}
	var got []row
	for _, c := range calls {
		got = append(got, row{c.Tool, c.Path + c.Command, c.Decision, c.DecidedBy, c.Outcome != nil})
	}
	want := []row{
		{"Bash", "go test ./...", "approved", boss, true},
		{"Read", "docs/guide.md", "free", "", true},
		{"Read", "main.go", "free", "", true},
		{"Edit", "docs/guide.md", "approved", boss, true},
		{"Edit", "main.go", "denied", admin, false},
		{"Bash", "go vet ./... && echo vetted", "approved", admin, true},
	}
	// The two Reads ran at once: their order in the record is the order they reached it.
	slices.SortStableFunc(got[1:3], func(a, b row) int { return strings.Compare(a.What, b.What) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the coder's calls (-want +got):\n%s", diff)
	}
	r.exec(t, exitOK, nil, "events", "verify")
}

const hookRepoMain = "package main\n\nfunc main() {}\n"

// newHookRepo returns a git repository with a Go module whose test passes, a guide under
// docs/ and a main.go, committed.
func newHookRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/hooked\n\ngo 1.21\n",
		"main.go":       hookRepoMain,
		"main_test.go":  "package main\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
		"docs/guide.md": "# Guide\n\nThis guide is a draft.\n",
	}
	for name, text := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "start")
	return repo
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// claudeEnv is Claude Code's environment: the loopback model, a dummy key, no other
// traffic, a fresh HOME, and Go's build cache kept so go test does not rebuild the world.
func claudeEnv(t *testing.T, base string) []string {
	t.Helper()
	cache, err := exec.CommandContext(t.Context(), "go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir(),
		"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=sk-ant-dummy-for-a-loopback-server",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"GOCACHE=" + strings.TrimSpace(string(cache)), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod",
	}
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always encodes
	}
	return string(b)
}

// memberClient is the rig's member, in this process.
func (r *docketRig) memberClient(t *testing.T) *client {
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
	return cl
}

func (c *client) whoami(t *testing.T) contract.Principal {
	t.Helper()
	var w struct {
		Kind contract.PrincipalKind `json:"kind"`
		ID   string                 `json:"id"`
	}
	if err := c.do(t.Context(), http.MethodGet, "/api/v1/whoami", nil, &w); err != nil {
		t.Fatal(err)
	}
	return contract.NewPrincipal(w.Kind, w.ID)
}

// claudeToolUse is one tool call the fake model makes.
type claudeToolUse struct {
	Name  string
	Input map[string]any
}

// claudeModel is a loopback server of the Anthropic Messages API: it answers the coding
// agent's n-th turn (n counted by the assistant turns it sends back) with the n-th turn
// of its script — one tool use, or several the coding agent may run at once — and then
// with a closing text. A request without tools gets a short text.
type claudeModel struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // one line per request; each answer's message id is its index
}

func newClaudeModel(t *testing.T, script [][]claudeToolUse) *claudeModel {
	t.Helper()
	m := &claudeModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !strings.HasPrefix(req.URL.Path, "/v1/messages") || strings.Contains(req.URL.Path, "count_tokens") {
			m.note(req.Method + " " + req.URL.Path + " (answered 404)")
			http.NotFound(w, req)
			return
		}
		var in struct {
			Stream   bool              `json:"stream"`
			Tools    []json.RawMessage `json:"tools"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		turn := 0
		var last []string
		for _, msg := range in.Messages {
			if msg.Role == "assistant" {
				turn++
			}
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if msg.Role == "user" && json.Unmarshal(msg.Content, &blocks) == nil {
				last = last[:0]
				for _, b := range blocks {
					if b.Type == "tool_result" {
						last = append(last, fmt.Sprintf("%.160s", b.Content))
					}
				}
			}
		}
		var blocks []map[string]any
		stop := "end_turn"
		switch {
		case m.requests() > 4*len(script): // a coding agent that went round in circles: end it, and the test says why
			blocks = []map[string]any{{"type": "text", "text": "giving up"}}
		case len(in.Tools) == 0:
			blocks = []map[string]any{{"type": "text", "text": "ok"}}
		case turn < len(script):
			for i, u := range script[turn] {
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d_%d", turn+1, i), "name": u.Name, "input": u.Input})
			}
			stop = "tool_use"
		default:
			blocks = []map[string]any{{"type": "text", "text": "done"}}
		}
		var names []string
		for _, b := range blocks {
			names = append(names, fmt.Sprint(b["name"]))
		}
		// Claude Code merges the messages of one id into one turn: each answer has its own.
		id := fmt.Sprintf("msg_%03d", m.note(fmt.Sprintf("turn %d stream=%v tools=%d results=%q -> %v", turn, in.Stream, len(in.Tools), last, names)))
		if in.Stream {
			writeSSE(w, id, blocks, stop)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-test",
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 5}}); err != nil {
			m.note("encode: " + err.Error())
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// note logs one line and returns how many came before it.
func (m *claudeModel) note(s string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, s)
	return len(m.seen) - 1
}

func (m *claudeModel) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}

func (m *claudeModel) log() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, "\n")
}

// writeSSE streams content blocks as the Messages API's server-sent events.
func writeSSE(w http.ResponseWriter, id string, blocks []map[string]any, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	type event struct {
		name string
		data any
	}
	events := []event{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": "claude-test", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}}}}
	for i, block := range blocks {
		start := map[string]any{"type": block["type"]}
		var delta map[string]any
		switch block["type"] {
		case "tool_use":
			start["id"], start["name"], start["input"] = block["id"], block["name"], map[string]any{}
			in, err := json.Marshal(block["input"])
			if err != nil {
				panic(err) // the script's inputs are plain JSON
			}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
		default:
			start["text"] = ""
			delta = map[string]any{"type": "text_delta", "text": block["text"]}
		}
		events = append(events,
			event{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}},
			event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}},
			event{"content_block_stop", map[string]any{"type": "content_block_stop", "index": i}})
	}
	events = append(events,
		event{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}}},
		event{"message_stop", map[string]any{"type": "message_stop"}})
	for _, e := range events {
		b, err := json.Marshal(e.data)
		if err != nil {
			panic(err)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, b); err != nil {
			return // the client went away; its own error says so
		}
	}
}
