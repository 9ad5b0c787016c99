package console_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// call has the rig's Agent make one gateway call that must be accepted.
func (r *pagesRig) call(t *testing.T, tool, args string) contract.ToolResult {
	t.Helper()
	res, err := r.agent.Call(t.Context(), tool, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(res.Text), &tr); err != nil || !tr.Accepted {
		t.Fatalf("%s %s = %s, %v; want it accepted", tool, args, res.Text, err)
	}
	return tr
}

// inOrder reports whether want appears in got in its order, other entries between.
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestPages_Board: the Board page searches facts by predicate and arguments from its form,
// each fact with its tier and who asserted it, and a fact's page shows why it holds, as a
// tree that opens and closes without JavaScript and as an SVG graph.
func TestPages_Board(t *testing.T) {
	r := newPagesRig(t)
	r.call(t, contract.ToolApplyBatch, `{"operations": [
		{"op": "assert_fact", "atom": {"predicate": "note", "args": {"text": "hello", "n": 1}}},
		{"op": "assert_fact", "atom": {"predicate": "note", "args": {"text": "bye", "n": 2}}}]}`)
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/board"), chromedp.WaitVisible(chromedp.ID("board-prompt")))
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Board page: %q", ps)
	}
	// The search form is reached from the keyboard in reading order, after the skip link,
	// the home link, the navigation (whatever pages it lists) and Sign out.
	nav := browsertest.Run(r.b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("nav[aria-label=Console] a")].map(a => a.href)`))
	if got := r.b.Focus(len(nav) + 6); !inOrder(got, []string{"input f-predicate", "textarea f-args", "button Search"}) {
		t.Errorf("Tab order %q does not reach the predicate, the arguments and Search in order", got)
	}
	r.b.Do(chromedp.SendKeys(chromedp.ID("f-predicate"), "note"),
		chromedp.SendKeys(chromedp.ID("f-args"), "n=2"),
		chromedp.Click(chromedp.Search(`//button[text()="Search"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[@class="count"][starts-with(text(), "1 fact.")]`)))
	row := r.b.Text("table.board tbody tr")
	for _, want := range []string{`note(n: 2, text: "bye")`, "asserted", "Agent calc"} {
		if !strings.Contains(row, want) {
			t.Errorf("the search's row is %q, want it to show %q", row, want)
		}
	}
	if got := browsertest.Run(r.b, chromedp.Location()); !strings.Contains(got, "predicate=note") || !strings.Contains(got, "args=n%3D2") {
		t.Errorf("the search is at %q, want its filters in the query", got)
	}
	r.b.Screenshot(screenshots, "board")

	r.b.Do(chromedp.Click(chromedp.Search(`//table[@class="board"]//a[text()="why"]`)), chromedp.WaitVisible(chromedp.CSS(".why-tree")))
	if got := r.b.Text("h1"); got != `Why note(n: 2, text: "bye")` {
		t.Errorf("the fact's page is %q", got)
	}
	if got := r.b.Text(".why-tree"); !strings.Contains(got, "asserted by Agent calc") {
		t.Errorf("the fact's tree is %q, want who asserted it", got)
	}
	if n := browsertest.Run(r.b, chromedp.Evaluate[int](`document.querySelectorAll(".why-graph svg rect").length`)); n != 1 {
		t.Errorf("the fact's graph has %d nodes, want 1", n)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("fact page: %q", ps)
	}
}

// TestPages_Cases: the Cases page lists the project's Cases and filters them with a form
// of query parameters; a Case's page shows its pins, its receipt once closed, and its
// events as a timeline, which grows while the page is open.
func TestPages_Cases(t *testing.T) {
	r := newPagesRig(t)
	r.call(t, contract.ToolOpenCase, `{"caseType": "exploration", "businessKey": {"topic": "tides"}}`)
	r.call(t, contract.ToolOpenCase, `{"caseType": "exploration", "businessKey": {"topic": "winds"}}`)
	r.call(t, contract.ToolCloseCase, `{"caseId": "case-1", "disposition": "abandoned", "reason": "out of scope"}`)
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/cases"), chromedp.WaitVisible(chromedp.CSS("table.cases")))
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Cases page: %q", ps)
	}
	if got := r.b.Text("#cases"); !strings.Contains(got, "case-1") || !strings.Contains(got, "case-2") {
		t.Errorf("the Cases are %q, want both", got)
	}
	r.b.Do(chromedp.SetValue(chromedp.ID("f-status"), "running"),
		chromedp.Click(chromedp.Search(`//button[text()="Filter"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[@class="count"][starts-with(text(), "1 of 2")]`)))
	if got := r.b.Text("#cases"); strings.Contains(got, "case-1") || !strings.Contains(got, "case-2") {
		t.Errorf("the running Cases are %q, want case-2 alone", got)
	}

	r.b.Do(chromedp.Click(chromedp.Search(`//a[code[text()="case-2"]]`)), chromedp.WaitVisible(chromedp.ID("timeline")))
	for _, want := range []string{"exploration", `topic = "winds"`, "running", "Business-key digest", "sha256:"} {
		if got := r.b.Text("#case-state"); !strings.Contains(got, want) {
			t.Errorf("the Case's record is %q, want it to show %q", got, want)
		}
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Case page: %q", ps)
	}
	r.b.Do(chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"))
	r.call(t, contract.ToolCloseCase, `{"caseId": "case-2", "disposition": "abandoned", "reason": "calm"}`)
	r.b.Do(chromedp.WaitVisible(chromedp.Search(`//ol[@id="timeline"]//code[text()="case.closed"]`)),
		chromedp.WaitVisible(chromedp.Search(`//div[@id="case-state"]//span[text()="closed"]`)))
	if got := browsertest.Run(r.b, chromedp.Evaluate[string]("window.docketMark")); got != "same page" {
		t.Errorf("the close arrived after a reload (mark %q), want it merged into the open page", got)
	}
	r.b.Do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("dl.receipt")))
	if got := r.b.Text("dl.receipt"); !strings.Contains(got, "abandoned: calm") {
		t.Errorf("the receipt is %q, want the disposition and reason", got)
	}
}

// TestPages_Events: the Events page tails the log live, filters it with a form of query
// parameters, pages back, and checks the hash chain.
func TestPages_Events(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/events"), chromedp.WaitVisible(chromedp.CSS("table.events")))
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Events page: %q", ps)
	}
	r.b.Do(chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"))
	r.call(t, contract.ToolApplyBatch, `{"operations": [{"op": "assert_fact", "atom": {"predicate": "note", "args": {"text": "live"}}}]}`)
	r.b.Do(chromedp.WaitVisible(chromedp.Search(`//tbody[@id="events"]/tr[1]//code[text()="operation.changed" or text()="batch.applied" or text()="operation.admitted"]`)),
		chromedp.WaitVisible(chromedp.Search(`//tbody[@id="events"]//code[text()="batch.applied"]`)))
	if got := browsertest.Run(r.b, chromedp.Evaluate[string]("window.docketMark")); got != "same page" {
		t.Errorf("the event arrived after a reload (mark %q), want it merged into the open page", got)
	}
	r.b.Screenshot(screenshots, "events")

	r.b.Do(chromedp.SetValue(chromedp.ID("f-type"), event.BatchApplied),
		chromedp.Click(chromedp.Search(`//button[text()="Filter"]`)),
		chromedp.WaitVisible(chromedp.Search(`//caption[contains(text(), "type batch.applied")]`)))
	types := browsertest.Run(r.b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events td[data-label=Type]")].map(td => td.textContent)`))
	if len(types) != 1 || types[0] != event.BatchApplied {
		t.Errorf("filtered by type, the events are %q, want the one batch.applied", types)
	}

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/events?before=4"), chromedp.WaitVisible(chromedp.ID("ev-3")))
	seqs := browsertest.Run(r.b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events tr")].map(tr => tr.id)`))
	if !slices.Equal(seqs, []string{"ev-3", "ev-2", "ev-1"}) {
		t.Errorf("the events before 4 are %q, want 3, 2, 1", seqs)
	}
	r.b.Do(chromedp.Click(chromedp.Search(`//a[text()="Newer events"]`)), chromedp.WaitVisible(chromedp.ID("ev-4")))

	r.b.Do(chromedp.Click(chromedp.ID("check")), chromedp.WaitVisible(chromedp.ID("chain")))
	if got := r.b.Text("#chain"); !strings.HasPrefix(got, "The chain holds:") || !strings.Contains(got, "events, head") {
		t.Errorf("the chain check says %q, want it holding with its count and head", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Events page with the chain check: %q", ps)
	}
	r.b.Screenshot(screenshots, "events-chain")
}

// TestPages_RecordWithoutJavaScript: with JavaScript off, the Cases, Board and Events
// forms filter and search, a derivation tree opens and closes, and the chain check runs.
func TestPages_RecordWithoutJavaScript(t *testing.T) {
	r := newPagesRig(t)
	r.b.DisableScript()
	r.call(t, contract.ToolApplyBatch, `{"operations": [{"op": "assert_fact", "atom": {"predicate": "note", "args": {"text": "plain"}}}]}`)
	r.call(t, contract.ToolOpenCase, `{"caseType": "exploration", "businessKey": {"topic": "plain"}}`)
	r.signIn(t)

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/cases"),
		chromedp.SetValue(chromedp.ID("f-certified"), "not yet"),
		// The unfiltered list also shows "1 of 1": mark this page, so the wait below is
		// for the page the form loads.
		chromedp.Evaluate[chromedp.Void](`document.body.dataset.unfiltered = "1"`),
		chromedp.Click(chromedp.Search(`//button[text()="Filter"]`)),
		chromedp.WaitNotPresent(chromedp.Search(`//body[@data-unfiltered]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[@class="count"][starts-with(text(), "1 of 1")]`)))
	if got := browsertest.Run(r.b, chromedp.Location()); !strings.Contains(got, "certified=not+yet") {
		t.Errorf("the filtered Cases are at %q, want the filter in the query", got)
	}

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/board"),
		chromedp.SendKeys(chromedp.ID("f-predicate"), "note"),
		chromedp.Click(chromedp.Search(`//button[text()="Search"]`)),
		chromedp.WaitVisible(chromedp.Search(`//a[text()="why"]`)),
		chromedp.Click(chromedp.Search(`//a[text()="why"]`)),
		chromedp.WaitVisible(chromedp.CSS(".why-tree")))
	if got := r.b.Text("h1"); got != `Why note(text: "plain")` {
		t.Errorf("the fact's page without JavaScript is %q", got)
	}

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/events"),
		chromedp.Click(chromedp.Search(`//tbody[@id="events"]/tr[1]//summary`)),
		chromedp.WaitVisible(chromedp.Search(`//tbody[@id="events"]/tr[1]//pre`)),
		chromedp.Click(chromedp.ID("check")),
		chromedp.WaitVisible(chromedp.ID("chain")))
	if got := r.b.Text("#chain"); !strings.HasPrefix(got, "The chain holds:") {
		t.Errorf("the chain check without JavaScript says %q", got)
	}
	for _, resp := range r.b.Responses() {
		if strings.Contains(resp.URL, "/api/v1/events") {
			t.Errorf("with JavaScript off the page opened the event stream %s", resp.URL)
		}
	}
}
