package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/contract"
)

// TestPages_CaseHolds: a member pauses a running Case from its page with a reason; the
// page lists the hold, with who placed it and why; the Agent's close is refused
// case_paused naming the hold; Release on the page resumes the Case, and the close runs.
func TestPages_CaseHolds(t *testing.T) {
	r := newPagesRig(t)
	r.call(t, contract.ToolOpenCase, `{"caseType": "exploration", "businessKey": {"topic": "tides"}}`)
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/cases/case-1"), chromedp.WaitVisible(chromedp.ID("no-holds")))
	r.b.Do(chromedp.SendKeys(chromedp.ID("hold-reason"), "checking the tide tables by hand"),
		chromedp.Click(chromedp.ID("pause-case")),
		chromedp.WaitVisible(chromedp.ID("hold-row-hold-1")))
	row := r.b.Text("#hold-row-hold-1")
	for _, want := range []string{"hold-1", "a member's", "checking the tide tables by hand"} {
		if !strings.Contains(row, want) {
			t.Errorf("the hold's row is %q, want it to show %q", row, want)
		}
	}
	if got := r.b.Text("#case-state"); !strings.Contains(got, "paused") {
		t.Errorf("the Case's record is %q, want it paused", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("paused Case page: %q", ps)
	}
	r.b.Screenshot(screenshots, "case-paused")

	res, err := r.agent.Call(t.Context(), contract.ToolCloseCase, json.RawMessage(`{"caseId": "case-1", "disposition": "abandoned", "reason": "done"}`))
	if err != nil {
		t.Fatal(err)
	}
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(res.Text), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Accepted || tr.ErrorCode != contract.CodeCasePaused || !strings.Contains(tr.Teaching, "checking the tide tables by hand") {
		t.Fatalf("the close of a paused Case = %s; want refused case_paused naming the hold", res.Text)
	}

	r.b.Do(chromedp.Click(chromedp.ID("release-hold-1")), chromedp.WaitVisible(chromedp.ID("no-holds")))
	if got := r.b.Text("#case-state"); !strings.Contains(got, "running") {
		t.Errorf("the Case's record after Release is %q, want it running", got)
	}
	r.call(t, contract.ToolCloseCase, `{"caseId": "case-1", "disposition": "abandoned", "reason": "done"}`)
}
