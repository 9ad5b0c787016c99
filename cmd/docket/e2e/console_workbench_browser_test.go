package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"

	"github.com/docketrun/docket/internal/contract"
)

// shippedScript is the example's own script.json, reading the job's input from in: the
// scripted model ends its turn while the write waits for a person, and goes on — verify,
// close — when the conversation is woken with the write's outcome.
func shippedScript(t *testing.T, in string) string {
	t.Helper()
	b, err := os.ReadFile("../../../examples/verified-calculation/script.json")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "data/input.json", in)
}

// TestConsole_WorkbenchTaskWakes: a person gives an Agent the verified calculation as a
// task from its page in a real browser; the Agent's runtime (docket agent serve, started
// by hand, with the scripted model) takes it by long-poll; the page shows the task waiting
// on the write; the person approves on Needs you; the conversation resumes by itself and
// the Case closes certified — nobody re-runs anything.
func TestConsole_WorkbenchTaskWakes(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s, _, b := calculationConsole(t, approvedCalculation(t))
	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "calc")
	dir := t.TempDir()
	tok, script := filepath.Join(dir, "calc.token"), filepath.Join(dir, "script.json")
	writeFile(t, tok, at.Token, 0o600)
	writeFile(t, script, shippedScript(t, "data/input.json"), 0o600)
	startProc(t, s.env, "agent", "serve", "--token-file", tok, "--script", script, "--hold-wait", "1s")
	giveTaskAndApprove(t, s, b, s.url, at.Agent.ID, true)
}

// TestConsole_WorkbenchUnderStart: the same as a person meets it under a real docket
// start. The Agent's profile names the scripted provider with the example's own script, and docket start supervises its runtime; the person opens the printed URL,
// signs in, types the verified-calculation task into the Agent's page and approves the
// write on Needs you; the conversation resumes by itself and the Case closes certified —
// nobody re-runs anything.
func TestConsole_WorkbenchUnderStart(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s := newStartEnv(t)
	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	s.setUpCalculation(t, approvedCalculation(t))
	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "calc")
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, shippedScript(t, "data/calc-001.json"), 0o600)
	s.docket(t, nil, "agent", "profile", "set", "calc", "--provider", "scripted", "--script", script)
	s.profiles(t, "calc's runtime running", running("calc"))

	base := "http://" + addr
	b := browsertest.New(t)
	b.Do(chromedp.Navigate(base + "/?key=" + key))
	b.SignIn(base, "admin", "correct horse battery")
	giveTaskAndApprove(t, s.serveEnv, b, base, at.Agent.ID, false)
	if out, err := os.ReadFile(filepath.Join(s.ws, "out", "result.json")); err != nil || !strings.Contains(string(out), "262800") {
		t.Errorf("out/result.json = %s (%v), want the derived total written after the approval", out, err)
	}
	s.stop(t, start)
}

// giveTaskAndApprove is what a person does in the browser b signed in to the console at
// base: gives agent the verified calculation for job calc-001 as a task from its page,
// sees the conversation live and the write waiting, approves the write on Needs you, and
// sees the conversation resume by itself to a Case closed certified, while s's CLI shows
// that the write was made once. With shots it writes the screenshots docs/console.md
// shows. The agent's runtime plays the example's script (shippedScript).
func giveTaskAndApprove(t *testing.T, s *serveEnv, b *browsertest.Browser, base string, agent contract.AgentID, shots bool) {
	t.Helper()
	page := base + "/projects/default/agents/" + string(agent)
	b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("task-form")),
		chromedp.SendKeys(chromedp.ID("task-text"), "Verify job calc-001."),
		chromedp.SendKeys(chromedp.ID("task-case-type"), "verified_calculation"),
		chromedp.SendKeys(chromedp.ID("task-key"), `{"job_id": "calc-001"}`),
		chromedp.Click(chromedp.ID("post-task")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	var ts []contract.Task
	s.docketJSON(t, &ts, "task", "list")
	if len(ts) != 1 {
		t.Fatalf("docket task list = %+v, want the task posted from the page", ts)
	}
	task := ts[0]

	// The page, left open, shows the conversation as it runs, and the write it waits on.
	b.Do(chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"))
	waiting := "task-" + string(task.ID) + "-waiting-1"
	b.Do(chromedp.WaitVisible(chromedp.ID(waiting)),
		chromedp.WaitVisible(chromedp.Search(`//ol[@id="live-turns"]//code[text()="OpenCase"]`)),
		chromedp.WaitVisible(chromedp.CSS("#live-waits p.waits")))
	if got := b.Text("#" + waiting); !strings.Contains(got, "waits on ApplyAction") {
		t.Errorf("the waiting task reads %q, want what it waits on", got)
	}
	if got := b.Text("#live-waits"); !strings.Contains(got, "waiting for a decision") {
		t.Errorf("the conversation says it waits on %q, want the write waiting for a decision", got)
	}
	if got := b.Text("#live-turns"); !strings.Contains(got, "write_result") || !strings.Contains(got, "waiting for decision") {
		t.Errorf("the conversation shows %q, want the write call and the turn ended on it", got)
	}
	if got := browsertestMark(b); got != "same page" {
		t.Errorf("the conversation appeared after a reload (mark %q), want it live on the open page", got)
	}
	if shots {
		b.Screenshot(consoleShots, "workbench-waiting")
	}

	b.Do(chromedp.Navigate(base+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("section.request")),
		chromedp.Click(chromedp.CSS("button.approve")), chromedp.WaitVisible(chromedp.CSS(".notice")))

	// Nobody re-runs anything: the runtime is woken by the authority and finishes.
	done := "task-" + string(task.ID) + "-completed-2"
	b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID(done)))
	if got := b.Text("#" + done); !strings.Contains(got, "completed") || !strings.Contains(got, "closed as completed") {
		t.Errorf("the finished task reads %q, want its Case closed completed and the final answer", got)
	}
	if got := b.Text("#live-turns"); !strings.Contains(got, "CloseCase") || !strings.Contains(got, "closed as completed") {
		t.Errorf("the resumed conversation shows %q, want the close and the final answer", got)
	}
	if got := b.Text("#agent-cases"); !strings.Contains(got, "closed completed, certified") {
		t.Errorf("beside the conversation its Cases read %q, want the Case closed completed, certified", got)
	}
	if shots {
		b.Screenshot(consoleShots, "workbench-done")
	}
	if out := s.docket(t, nil, "case", "list"); !strings.Contains(out, "closed\tcompleted") {
		t.Errorf("docket case list = %q, want the Case closed as completed", out)
	}
	var ops []contract.OperationInfo
	s.docketJSON(t, &ops, "ops", "--agent", "calc")
	writes := 0
	for _, op := range ops {
		if strings.Contains(op.Label, "write_result") {
			writes++
		}
	}
	if writes != 1 {
		t.Errorf("calc made %d write_result Operations, want 1: nothing is sent twice", writes)
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
}

// browsertestMark is the mark a test left on the open page, "" after a reload.
func browsertestMark(b *browsertest.Browser) string {
	return browsertest.Run(b, chromedp.Evaluate[string]("window.docketMark || ''"))
}
