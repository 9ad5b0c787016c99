package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/console/browsertest"
)

// calculationConsole runs docket serve (with serveArgs) with the verified calculation from
// capDir and a real docket worker holding laptop's lease with the workspace Tools locked,
// and returns it with agent one on the MCP gateway and a browser signed in as admin.
func calculationConsole(t *testing.T, capDir string, serveArgs ...string) (*serveEnv, *mcpclient.Client, *browsertest.Browser) {
	t.Helper()
	s := newServeEnv(t, "", capDir, "workspace",
		[]string{"calculation_input", "output_file"}, `{"format": "docket-worker-tools/1", "tools": {}}`, serveArgs...)
	s.lock(t, "docket.workspace.read_json@1", "docket.workspace.write_json@1")
	s.startWorker(t).waitLine(t, "lease acquired")
	gw := s.gateway(t)
	b := browsertest.New(t)
	b.SignIn(s.url, "admin", "correct horse battery")
	return s, gw, b
}

// TestConsole_WorkersAndCapabilities runs docket serve and a real docket worker: the
// Workers page shows the worker's lease held (its instance, generation and heartbeat),
// the Tools locked with their digests, the Source's public part, and — without a reload
// — the read it claimed and reported; the Capabilities page shows the verified
// calculation's release, its Case Type and its Actions with their parameters, bindings
// and approval, and its rules. An Agent created from the page last has a token that
// docket serve, logging at debug, never writes.
func TestConsole_WorkersAndCapabilities(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s, gw, b := calculationConsole(t, "../../../examples/verified-calculation/capability", "--log-level", "debug")

	// The page is open before the read runs: its claim and report arrive live.
	b.Do(chromedp.Navigate(s.url+"/projects/default/workers"), chromedp.WaitVisible(chromedp.ID("work-empty")),
		chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"))
	if res := call(t, gw, "ApplyAction", `{"action": "load_input", "params": {"path": "data/input.json"}}`); !res.Accepted {
		t.Fatalf("load_input = %+v", res)
	}
	b.Do(chromedp.WaitVisible(chromedp.Search(`//table[contains(@class,"work")]//span[text()="done"]`)))
	if got := browsertest.Run(b, chromedp.Evaluate[string]("window.docketMark")); got != "same page" {
		t.Errorf("the claim appeared after a reload (mark %q), want it merged into the open page", got)
	}
	worker := b.Text("section.worker")
	for _, want := range []string{"laptop", "lease held", "Instance", "Generation", "Last heartbeat", "Expires",
		"docket.workspace.read_json@1", "docket.workspace.write_json@1", "sha256:", "workspace", "file", "calculation_input", "output_file"} {
		if !strings.Contains(worker, want) {
			t.Errorf("the Workers page shows %q, want it to show %q", worker, want)
		}
	}
	b.Do(chromedp.WaitVisible(chromedp.CSS("table.work")))
	work := b.Text("table.work tbody")
	for _, want := range []string{s.agent + ".1", "load_input", "docket.workspace.read_json@1", "laptop", "reported", "done"} {
		if !strings.Contains(work, want) {
			t.Errorf("the recent claims show %q, want them to show %q", work, want)
		}
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the Workers page: %q", ps)
	}
	b.Screenshot(consoleShots, "workers")

	b.Do(chromedp.Navigate(s.url+"/projects/default/capabilities"), chromedp.WaitVisible(chromedp.CSS("section.release")))
	rel := b.Text("section.release")
	for _, want := range []string{"docket.verified-calculation@", "sha256:", "verified_calculation", "calculation_verified",
		"load_input", "write_result", "verify_result", "approval: none", "Runs docket.workspace.write_json@1 (write)",
		"calculation_input", "Sources docket.verified-calculation needs"} {
		if !strings.Contains(rel, want) {
			t.Errorf("the Capabilities page shows %q, want it to show %q", rel, want)
		}
	}
	// write_result's subtotal and total are bound by the Board, its path passed by the model.
	params := b.Text("#action-write_result table.params")
	for _, want := range []string{"subtotal", "the Board, from ?subtotal", "total", "the Board, from ?total", "path", "the model"} {
		if !strings.Contains(params, want) {
			t.Errorf("write_result's parameters show %q, want %q", params, want)
		}
	}
	b.Do(chromedp.Click(chromedp.CSS("details.rules summary")), chromedp.WaitVisible(chromedp.CSS("details.rules pre")))
	if got := b.Text("details.rules pre"); !strings.Contains(got, "calculation_verified") {
		t.Errorf("the rules show %q, want the rule that derives calculation_verified", got)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the Capabilities page: %q", ps)
	}
	b.Screenshot(consoleShots, "capabilities")

	b.Do(chromedp.Navigate(s.url+"/projects/default/agents"),
		chromedp.SendKeys(chromedp.ID("agent-name"), "pager"),
		chromedp.Click(chromedp.ID("create-agent")),
		chromedp.WaitVisible(chromedp.ID("agent-token")))
	token := browsertest.Run(b, chromedp.Value(chromedp.ID("agent-token")))
	if !strings.HasPrefix(token, "dkt_agt_") {
		t.Fatalf("the Agents page shows the token %q, want an agent token", token)
	}
	if strings.Contains(s.srv.log(), token) {
		t.Errorf("docket serve logged the token the page showed")
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
	for _, resp := range b.Responses() {
		if strings.HasPrefix(resp.URL, s.url+"/") && !strings.Contains(resp.CSP, "frame-ancestors 'none'") {
			t.Errorf("%s (%d) has Content-Security-Policy %q, want the console's", resp.URL, resp.Status, resp.CSP)
		}
	}
}
