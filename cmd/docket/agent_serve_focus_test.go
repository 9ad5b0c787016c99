package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/runner"
)

// TestAgentServe_TwoClientsNeverShareACase runs docket agent serve as a process against
// a real docket serve: two /task clients are two conversations over the Agent's one MCP
// session, and the second does not start out focused on the Case the first opened. A
// task without a sessionKey gets one back.
func TestAgentServe_TwoClientsNeverShareACase(t *testing.T) {
	r := newDocketRig(t)
	id, tok := r.agent(t, "focus")
	s := r.script(t, `{"turns":[{"calls":[`+queryBoard+`]},{"calls":[{"tool":"OpenCase","arguments":{"caseType":"exploration","businessKey":{"topic":"t"}}}]},{"final":"done"}]}`)
	post := r.serveTasks(t, tok, s)
	a := post(`{"text":"open a case"}`)
	if !strings.HasPrefix(a.SessionKey, "sk-") || a.ClosedCases == nil {
		t.Errorf("a task without a sessionKey = %+v, want one made and returned, and closedCases listed", a)
	}
	b := post(`{"text":"look","sessionKey":"client-b"}`)
	res, _ := r.conversation(t, id, b.Conversation)
	var first struct {
		View struct {
			Roots struct {
				Items []json.RawMessage `json:"items"`
			} `json:"roots"`
		} `json:"view"`
	}
	if len(res) == 0 {
		t.Fatal("client b's conversation has no tool results")
	}
	if err := json.Unmarshal([]byte(res[0].Content), &first); err != nil {
		t.Fatal(err)
	}
	if len(first.View.Roots.Items) != 0 {
		t.Errorf("client b's first QueryBoard is focused on %s, the Case of client a", first.View.Roots.Items)
	}
}

// serveTasks starts docket agent serve with the scripted model and returns a POST /task
// that fails the test unless the task is answered without an error.
func (r *docketRig) serveTasks(t *testing.T, tok, script string) func(body string) runner.TaskAnswer {
	t.Helper()
	ep := r.agentServe(t, tok, script)
	return func(body string) runner.TaskAnswer {
		t.Helper()
		status, a := ep.post(t, ep.key, body)
		if status != http.StatusOK || a.ErrorCode != "" {
			t.Fatalf("POST /task = %d %+v", status, a)
		}
		return a
	}
}

// taskEndpoint is a running docket agent serve: its process, and its POST /task with the
// key it printed.
type taskEndpoint struct {
	proc     *exec.Cmd
	url, key string
	lines    <-chan string // its stdout after the first line; closed when it exits
	stderr   *syncBuffer
}

// agentServe starts docket agent serve with the scripted model and the flags in extra;
// the test's end kills it.
func (r *docketRig) agentServe(t *testing.T, tok, script string, extra ...string) *taskEndpoint {
	t.Helper()
	srv := r.command(t, nil, append([]string{"agent", "serve", "--token-file", tok, "--script", script}, extra...)...)
	var stderr syncBuffer
	srv.Stderr = &stderr
	lines := startLines(t, srv, srv.StdoutPipe)
	t.Cleanup(func() {
		srv.Process.Kill()
		drain(lines)
		srv.Wait()
		if t.Failed() {
			t.Logf("docket agent serve:\n%s", stderr.String())
		}
	})
	first := <-lines
	m := regexp.MustCompile(`POST (http://\S+/task) with the bearer key in (\S+)$`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("docket agent serve printed %q, want its endpoint and the file of its key", first)
	}
	b, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	var te runner.TaskEndpoint
	if err := json.Unmarshal(b, &te); err != nil {
		t.Fatal(err)
	}
	if te.URL != m[1] || te.Key == "" {
		t.Fatalf("the task file holds %+v, want the endpoint %s and a key", te, m[1])
	}
	return &taskEndpoint{proc: srv, url: m[1], key: te.Key, lines: lines, stderr: &stderr}
}

// post sends body to POST /task with bearer key and returns the status and answer.
func (ep *taskEndpoint) post(t *testing.T, key, body string) (int, runner.TaskAnswer) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ep.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /task: %v", err)
	}
	defer resp.Body.Close()
	var a runner.TaskAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("POST /task answered %d with a body that does not decode: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, a
}

// TestAgentServe_NeverPrintsItsKey: docket agent serve, run as a process without
// --task-file, writes its per-run key to a private file and never to its output, before,
// during or after serving a task.
func TestAgentServe_NeverPrintsItsKey(t *testing.T) {
	r := newDocketRig(t)
	_, tok := r.agent(t, "quiet")
	ep := r.agentServe(t, tok, r.script(t, `{"turns":[{"final":"done"}]}`))
	if status, a := ep.post(t, ep.key, `{"text":"say done"}`); status != http.StatusOK || a.ErrorCode != "" {
		t.Fatalf("POST /task = %d %+v", status, a)
	}
	if err := ep.proc.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	out := drain(ep.lines)
	if err := ep.proc.Wait(); err != nil {
		t.Fatalf("docket agent serve at interrupt: %v\n%s", err, ep.stderr.String())
	}
	for name, text := range map[string]string{"stdout": out, "stderr": ep.stderr.String()} {
		if strings.Contains(text, ep.key) {
			t.Errorf("docket agent serve printed its key on %s:\n%s", name, text)
		}
	}
}
