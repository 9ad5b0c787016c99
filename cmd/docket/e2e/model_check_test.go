package e2e

import (
	"html"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
)

// TestStart_ModelCheck points an Agent at a closed port. The first-use form refuses to
// save it and shows the cause (connection refused) rather than starting a runtime that
// cannot work; docket agent profile set refuses it the same way. Forced through with the
// form's "save without checking" box, the task posted to the Agent fails with
// model_transport, and the cause — provider and the endpoint's error — is on the task
// (docket task show), on the Agent's page and the Operations page in the console, and in
// docket doctor, which fails.
func TestStart_ModelCheck(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/v1"
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	s := newStartEnv(t)
	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	base := "http://" + addr
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) string {
		t.Helper()
		resp, err := cl.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		return readAll(t, resp)
	}
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin") // as a browser sends a form of the page it shows
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, html.UnescapeString(readAll(t, resp))
	}
	get("/?key=" + key)
	csrf := between(get(workbench.ModelPath), `name="csrf" value="`, `"`)
	if csrf == "" {
		t.Fatal("the first-use form carries no CSRF token")
	}
	form := url.Values{"csrf": {csrf}, "agent": {"assistant"}, "provider": {"openai"}, "url": {dead}, "model": {"m"}, "key": {""}}

	// The form refuses to save a model nothing answers for, with the cause.
	status, body := post(workbench.ModelPath, form)
	if status != http.StatusBadRequest || !strings.Contains(body, "connection refused") || !strings.Contains(body, "start the model server, or fix the model URL") {
		t.Fatalf("POST %s with a closed port = %d, want 400 with the cause:\n%s", workbench.ModelPath, status, between(body, `id="model-error">`, "</p>"))
	}
	var ps []contract.AgentProfile
	s.docketJSON(t, &ps, "agent", "profile", "list")
	if len(ps) != 0 {
		t.Fatalf("a refused form saved profiles %+v", ps)
	}
	// So does docket agent profile set.
	s.docket(t, nil, "agent", "create", "other")
	set := exec.Command("docket", "agent", "profile", "set", "other", "--provider", "openai", "--model-url", dead, "--model", "m")
	set.Env = s.env
	out, err := set.CombinedOutput()
	if set.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "model_transport") || !strings.Contains(string(out), "connection refused") || !strings.Contains(string(out), "--no-check") {
		t.Errorf("docket agent profile set with a closed port = %v\n%s\nwant exit 1, model_transport with the cause, and --no-check", err, out)
	}

	// Forced through, the profile is saved and its runtime runs; its task fails with the cause.
	form.Set("no_check", "1")
	if status, body := post(workbench.ModelPath, form); status != http.StatusSeeOther {
		t.Fatalf("POST %s with no_check = %d, want 303:\n%s", workbench.ModelPath, status, body)
	}
	p := s.profiles(t, "the assistant's runtime running", running(workbench.DefaultAgent))[workbench.DefaultAgent]
	var posted contract.Task
	s.docketJSON(t, &posted, "task", "post", "--agent", workbench.DefaultAgent, "Say hello.")
	tk := s.finished(t, posted.ID)
	if tk.State != contract.TaskFailed || tk.Result == nil || tk.Result.ErrorCode != contract.CodeModelTransport || !strings.Contains(tk.Result.Teaching, "connection refused") {
		t.Fatalf("the task = %s %+v, want failed with model_transport and the cause", tk.State, tk.Result)
	}

	// The Agent's page shows the code and the cause, not only a code.
	if status, body := post("/signin", url.Values{"name": {"admin"}, "passphrase": {"correct horse battery"}}); status != http.StatusSeeOther {
		t.Fatalf("sign in = %d:\n%s", status, body)
	}
	page := html.UnescapeString(get("/projects/default/agents/" + string(p.Agent)))
	task := between(page, `id="task-`+string(tk.ID), `</div>`)
	for _, want := range []string{"model_transport", "openai", "connection refused"} {
		if !strings.Contains(task, want) {
			t.Errorf("the Agent page's task does not say %q:\n%s", want, task)
		}
	}
	ops := html.UnescapeString(get("/projects/default/operations"))
	if mf := between(ops, `id="model-failure-`+string(tk.ID), `</p>`); !strings.Contains(mf, "model_transport") || !strings.Contains(mf, "connection refused") {
		t.Errorf("the Operations page does not name the failed run's cause:\n%s", between(ops, `id="model-failures"`, `</div>`))
	}

	// docket doctor fails, naming the Agent, its task and the cause.
	doctor := exec.Command("docket", "doctor")
	doctor.Env = s.env
	out, err = doctor.Output()
	if doctor.ProcessState.ExitCode() != 1 || !regexp.MustCompile(`FAIL model +agent assistant: its last task `+string(tk.ID)+` failed: model_transport: .*connection refused`).Match(out) {
		t.Errorf("docket doctor = %v\n%s\nwant it failing on the model, with the cause", err, out)
	}
	s.stop(t, start)
}
