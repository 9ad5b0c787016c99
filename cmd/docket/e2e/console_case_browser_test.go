package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/console/browsertest"
)

// TestConsole_VerifiedCalculationCase runs the verified calculation across real
// processes (docket serve, docket worker, docket agent run with the example's script) and
// reads its Case in a real browser: the Case page shows the Case closed, certified, its
// pins and receipt, and the acceptance's derivation — calculation_verified derived by its
// rule from calculation_result and output_file, the fact the read Tool attested — as a
// tree and as a graph, with the Case's Operations and events in its timeline; the Board
// page finds the attested facts and the Events page the Case's events.
func TestConsole_VerifiedCalculationCase(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s := runVerifiedCalculation(t, "")

	b := browsertest.New(t)
	b.SignIn(s.url, "admin", "correct horse battery")
	b.Do(chromedp.Navigate(s.url+"/projects/default/cases?certified=yes"), chromedp.WaitVisible(chromedp.CSS("table.cases")))
	if got := b.Text("#cases"); !strings.Contains(got, "verified_calculation") || !strings.Contains(got, `job_id = "calc-001"`) {
		t.Errorf("the certified Cases are %q, want the calculation's", got)
	}
	b.Screenshot(consoleShots, "cases")
	b.Do(chromedp.Click(chromedp.CSS("#cases a")), chromedp.WaitVisible(chromedp.CSS(".why-tree")))

	record := b.Text("#case-state")
	for _, want := range []string{"closed", "completed", "yes", "docket.verified-calculation@1.0.0", "Contract digest", "Business-key digest", "sha256:"} {
		if !strings.Contains(record, want) {
			t.Errorf("the Case's record is %q, want it to show %q", record, want)
		}
	}
	// The tree's root is the acceptance, derived by its rule; output_file is one of its
	// premises, attested by the Tool that read the file back.
	root := b.Text(".why-tree > li > details > summary")
	for _, want := range []string{`calculation_verified(job_id: "calc-001")`, "derived by rule docket.verified-calculation/calculation_verified", "attested"} {
		if !strings.Contains(root, want) {
			t.Errorf("the derivation's root is %q, want it to show %q", root, want)
		}
	}
	premises := b.Text(".why-tree > li > details > ul")
	for _, want := range []string{`output_file(job_id: "calc-001", subtotal: 259800, total: 262800)`,
		"attested by Tool docket.workspace.read_json@1", "Action verify_result", "Source workspace",
		"calculation_result(", "derived by rule docket.verified-calculation/calculation_result"} {
		if !strings.Contains(premises, want) {
			t.Errorf("the acceptance's premises are %q, want them to show %q", premises, want)
		}
	}
	if strings.Contains(premises, "Source workspace (file), Source workspace") {
		t.Errorf("the premises name their Source twice: %q", premises)
	}
	// The graph draws the same tree: an edge from the acceptance down to output_file.
	titles := browsertest.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".why-graph svg title")].map(t => t.textContent)`))
	if len(titles) < 3 || !strings.HasPrefix(titles[0], "calculation_verified(") ||
		!strings.Contains(strings.Join(titles, "\n"), "output_file(job_id: \"calc-001\", subtotal: 259800, total: 262800) · attested · attested by docket.workspace.read_json@1") {
		t.Errorf("the graph's nodes are %q, want calculation_verified over output_file attested by the read Tool", titles)
	}
	if n := browsertest.Run(b, chromedp.Evaluate[int](`document.querySelectorAll(".why-graph svg line").length`)); n != len(titles)-1 {
		t.Errorf("the graph has %d edges for %d nodes, want a tree", n, len(titles))
	}
	if got := b.Text("dl.receipt"); !strings.Contains(got, "completed") || !strings.Contains(got, "true") || !strings.Contains(got, "sha256:") {
		t.Errorf("the receipt is %q, want completed, certified, with its explanation digest", got)
	}
	timeline := b.Text("#timeline")
	for _, want := range []string{"write_result", "verify_result", "done", event.CaseOpened, event.CaseClosed} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline is %q, want it to show %q", timeline, want)
		}
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the Case page: %q", ps)
	}
	b.Screenshot(consoleShots, "case")

	// The acceptance's own page shows the same tree from the Board.
	b.Do(chromedp.Click(chromedp.CSS(".why-tree > li > details > summary a.node-link")), chromedp.WaitVisible(chromedp.CSS(".why-graph")))
	if got := b.Text("h1"); got != `Why calculation_verified(job_id: "calc-001")` {
		t.Errorf("the acceptance's page is %q", got)
	}
	if got := b.Text(".why-tree"); !strings.Contains(got, "attested by Tool docket.workspace.read_json@1 (Action verify_result") {
		t.Errorf("the acceptance's page shows %q, want output_file attested by the read Tool", got)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the fact page: %q", ps)
	}
	b.Screenshot(consoleShots, "fact")

	b.Do(chromedp.Navigate(s.url+"/projects/default/board?predicate=output_file"), chromedp.WaitVisible(chromedp.CSS("table.board")))
	if got := b.Text("table.board tbody"); !strings.Contains(got, "attested") || !strings.Contains(got, "Tool docket.workspace.read_json@1") {
		t.Errorf("the Board's output_file facts are %q, want them attested by a Tool", got)
	}
	b.Do(chromedp.Navigate(s.url+"/projects/default/board?predicate=calculation_input"), chromedp.WaitVisible(chromedp.CSS("table.board")))
	b.Screenshot(consoleShots, "board-calculation")
	b.Do(chromedp.Navigate(s.url+"/projects/default/events?case=case-1"), chromedp.WaitVisible(chromedp.CSS("table.events")))
	if got := b.Text("#events"); !strings.Contains(got, event.CaseClosed) || !strings.Contains(got, event.ActionCompleted) {
		t.Errorf("the Case's events are %q, want its close and its executed Actions", got)
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
}
