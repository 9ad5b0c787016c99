package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
)

// consoleShots is where these tests write the screenshots docs/console.md shows.
const consoleShots = "../../../docs/console"

// approvedCalculation copies the verified-calculation capability into a temporary
// directory with write_result's approval raised to a person, as docket demo --approve does.
func approvedCalculation(t *testing.T) string {
	t.Helper()
	src := "../../../examples/verified-calculation/capability"
	dir := t.TempDir()
	for _, name := range []string{"capability.toml", "calculation.dl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if name == "capability.toml" {
			head, tail, ok := strings.Cut(text, `name          = "write_result"`)
			if !ok || !strings.Contains(tail, `approval      = "none"`) {
				t.Fatalf("%s has no write_result with approval none to raise", src)
			}
			text = head + `name          = "write_result"` + strings.Replace(tail, `approval      = "none"`, `approval      = "person"`, 1)
		}
		writeFile(t, filepath.Join(dir, name), text, 0o644)
	}
	return dir
}

// TestConsole_ApproveRunsWriteAndCertifies runs the verified calculation with its write
// needing a person, across real processes (docket serve and docket worker) and an agent
// on the MCP gateway, with the member in a real browser: the write's Request appears on
// Needs you without a reload, with its Case; approving it from the page runs the write on
// the worker, which the Operations page shows live; the Case then closes as completed,
// which the authority allows only when its root is certified.
func TestConsole_ApproveRunsWriteAndCertifies(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s, gw, b := calculationConsole(t, approvedCalculation(t))
	b.Do(chromedp.Navigate(s.url+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#requests-empty")))

	if res := call(t, gw, "ApplyAction", `{"action": "load_input", "params": {"path": "data/input.json"}}`); !res.Accepted {
		t.Fatalf("load_input = %+v", res)
	}
	opened := call(t, gw, "OpenCase", `{"caseType": "verified_calculation", "businessKey": {"job_id": "calc-001"}}`)
	var oc struct {
		Case contract.Case `json:"case"`
	}
	if err := json.Unmarshal(opened.Result, &oc); err != nil || oc.Case.CaseID == "" {
		t.Fatalf("OpenCase = %s, %v", opened.Result, err)
	}
	caseID := string(oc.Case.CaseID)
	write, err := gw.Call(t.Context(), "ApplyAction", json.RawMessage(`{"caseId": "`+caseID+`", "action": "write_result", "params": {"job_id": "calc-001", "path": "out/result.json"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(write.Text, `"waiting_for_decision"`) {
		t.Fatalf("write_result = %s, want it waiting for a decision", write.Text)
	}

	// The page was open before the call; the Request arrives over its event stream.
	b.Do(chromedp.WaitVisible(chromedp.CSS("section.request")))
	req := b.Text("section.request")
	for _, want := range []string{"write_result", "verified_calculation", caseID, `job_id = "calc-001"`, "docket.workspace.write_json@1",
		"args.total", "262800", "sha256:"} {
		if !strings.Contains(req, want) {
			t.Errorf("Needs you shows %q, want it to show %q", req, want)
		}
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Needs you with a Case: %q", ps)
	}
	b.Screenshot(consoleShots, "needs-you-case")
	b.Do(chromedp.Click(chromedp.CSS("button.approve")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := b.Text(".notice"); !strings.Contains(got, "approved") {
		t.Errorf("after approving, the notice is %q", got)
	}

	// The Operations page, open while the worker runs the write, shows it settle.
	op := "op-" + s.agent + "." + strconv.FormatInt(write.Ordinal, 10)
	b.Do(chromedp.Navigate(s.url+"/projects/default/operations"),
		chromedp.WaitVisible(chromedp.Search(`//tr[@id="`+op+`"]//span[text()="done"]`)))
	b.Screenshot(consoleShots, "operations-done")
	written, err := os.ReadFile(filepath.Join(s.files, "out", "result.json"))
	if err != nil || !strings.Contains(string(written), "262800") {
		t.Errorf("out/result.json = %s, %v; want the approved total 262800", written, err)
	}

	// The approved write ran while the agent was not waiting on it; its outcome reaches
	// the agent with the refusal of its next write, which it then sends again.
	verify := `{"caseId": "` + caseID + `", "action": "verify_result"}`
	if res := call(t, gw, "ApplyAction", verify); res.ErrorCode != contract.CodePreviousResultUndelivered || !strings.Contains(string(res.Result), "write_result") {
		t.Fatalf("verify_result before the agent saw the write = %+v, want %s with the write's outcome", res, contract.CodePreviousResultUndelivered)
	}
	if res := call(t, gw, "ApplyAction", verify); !res.Accepted {
		t.Fatalf("verify_result = %+v", res)
	}
	if res := call(t, gw, "CloseCase", `{"caseId": "`+caseID+`", "disposition": "completed"}`); !res.Accepted {
		t.Errorf("CloseCase completed = %+v, want the certified Case closed", res)
	}
	if out := s.docket(t, nil, "case", "list"); !strings.Contains(out, "closed\tcompleted") {
		t.Errorf("docket case list = %q, want the Case closed as completed", out)
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
}

// TestConsole_ReconcileNeedsPerson: an Operation whose worker was killed after its claim
// needs a person; the Operations page names why and settles it with the member's note.
func TestConsole_ReconcileNeedsPerson(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s, follow, _ := killAfterClaim(t)
	follow.waitLine(t, `"state":"needs_person"`)
	b := browsertest.New(t)
	b.SignIn(s.url, "admin", "correct horse battery")
	b.Do(chromedp.Navigate(s.url+"/projects/default/operations"), chromedp.WaitVisible(chromedp.CSS("form.reconcile")))
	row := b.Text("tr[id^=op-]")
	if !strings.Contains(row, "needs_person") || !strings.Contains(row, "lease") {
		t.Errorf("the Operation's row is %q, want needs_person and why (the lost lease)", row)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the Operations page with a reconcile form: %q", ps)
	}
	b.Screenshot(consoleShots, "operations-needs-person")
	b.Do(chromedp.Click(chromedp.CSS(`form.reconcile input[value=failed]`)),
		chromedp.SendKeys(chromedp.CSS("form.reconcile textarea"), "killed before it answered"),
		chromedp.Click(chromedp.CSS("form.reconcile button")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := b.Text(".notice"); !strings.Contains(got, "failed") {
		t.Errorf("after reconciling, the notice is %q, want failed", got)
	}
	follow.waitLine(t, `"state":"failed"`)
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
}

// TestConsole_ThroughStart: the URL docket start prints opens the console in a browser,
// and the browser keeps working through the run gate with the cookie it traded the key
// for: it signs in with a form, a Request an agent raises arrives on Needs you over the
// event stream, and the decision form posts through.
func TestConsole_ThroughStart(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	home := filepath.Join(t.TempDir(), "home")
	env := append(os.Environ(), "DOCKET_HOME="+home)
	start := startProc(t, append(env, "DOCKET_PASSPHRASE=correct horse battery"), "start", "--listen", "127.0.0.1:0")
	start.waitLine(t, "docket start: open http://")
	var printed string
	for line := range strings.Lines(start.log()) {
		if _, u, ok := strings.Cut(line, "docket start: open "); ok {
			printed = strings.TrimSpace(u)
		}
	}
	base, _, _ := strings.Cut(printed, "/?key=")
	s := &serveEnv{home: home, env: env}
	s.docket(t, nil, "doctor", "--wait", "30s")
	// The capability whose write waits for a person; decide_test.go in cmd/docket reads it too.
	s.docket(t, nil, "capability", "install", filepath.Join("..", "testdata", "requests"))
	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "one")
	serveURL, err := os.ReadFile(filepath.Join(home, datadir.URLFile))
	if err != nil {
		t.Fatal(err)
	}
	s.url, s.token = strings.TrimSpace(string(serveURL)), at.Token

	b := browsertest.New(t)
	// With no Agent profile yet, the first visit asks for the default model; the person
	// goes on to the console without one.
	b.Do(chromedp.Navigate(printed), chromedp.WaitVisible(chromedp.CSS("input#model")),
		chromedp.Click(chromedp.CSS("a#skip")), chromedp.WaitVisible(chromedp.CSS("#passphrase")))
	if got := browsertest.Run(b, chromedp.Location()); strings.Contains(got, "key=") {
		t.Errorf("after opening the printed URL the address is %q, want the key gone from it", got)
	}
	b.SignIn(base, "admin", "correct horse battery")
	b.Do(chromedp.Navigate(base+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#requests-empty")))

	if res := call(t, s.gateway(t), "ApplyAction", `{"action": "mark", "params": {"topic": "a"}}`); !res.Accepted {
		t.Fatalf("ApplyAction mark = %+v", res)
	}
	b.Do(chromedp.WaitVisible(chromedp.CSS("section.request")),
		chromedp.Click(chromedp.CSS("button.approve")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := b.Text(".notice"); !strings.Contains(got, "approved") {
		t.Errorf("after approving through docket start's gate, the notice is %q", got)
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems through the gate: %q", ps)
	}
}
