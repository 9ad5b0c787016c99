package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/contract"
)

// TestPages_NeedsYouBoardAct: a manual Agent's ApplyBatch waits on Needs you as a request
// that shows the call, the Agent and the exact arguments its digest covers; approving it
// from the page applies the batch.
func TestPages_NeedsYouBoardAct(t *testing.T) {
	r := newPagesRig(t)
	if _, err := r.a.SetAgentLevel(t.Context(), mustCaller(t, r.testServer), "default", "calc", contract.SetLevelRequest{Level: "manual"}); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#requests-empty")))

	res, err := r.agent.Call(t.Context(), contract.ToolApplyBatch,
		json.RawMessage(`{"operations":[{"op":"assert_fact","atom":{"predicate":"noted","args":{"topic":"by hand"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(res.Text), &tr); err != nil || len(tr.Operations) == 0 || tr.Operations[0].State != contract.OpWaitingForDecision {
		t.Fatalf("a manual Agent's ApplyBatch = %s (%v), want an Operation waiting for a decision", res.Text, err)
	}
	q := r.pending(t)[0]
	r.b.Do(chromedp.WaitVisible(chromedp.ID(string(q.ID))))
	section := r.b.Text("#" + string(q.ID))
	for _, want := range []string{"ApplyBatch", "level manual", "calc", "Input", `"by hand"`, q.Digest} {
		if !strings.Contains(section, want) {
			t.Errorf("the request shows %q, want it to show %q", section, want)
		}
	}
	r.b.Do(chromedp.Click(chromedp.ID(string(q.ID)+"-approve")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Request approved") {
		t.Errorf("after approving, the notice is %q, want Request approved", got)
	}
	res, err = r.agent.Call(t.Context(), contract.ToolQueryBoard, json.RawMessage(`{"pattern":{"predicate":"noted","args":{"topic":"?t"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, `"by hand"`) {
		t.Errorf("after the approval the Board has no noted fact: %s", res.Text)
	}
}
