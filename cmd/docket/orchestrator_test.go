package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// noteCall is the delegate capability's Board-only Action that needs a decision.
func noteCall(path string) string {
	return `{"tool":"ApplyAction","arguments":{"action":"note","params":{"path":"` + path + `"}}}`
}

// decideCall is the built-in Action by which an orchestrator decides a request.
func decideCall(request, digest string) string {
	return `{"tool":"ApplyAction","arguments":{"action":"docket.decide","params":{"request":` + request + `,"digest":` + digest + `,"verdict":"approve"}}}`
}

// newPolicyRig is the docket rig with the delegate capability installed and the policy
// document text published as version 2 of its kind.
func newPolicyRig(t *testing.T, text string) *docketRig {
	t.Helper()
	r := newDocketRig(t)
	capability, err := filepath.Abs(filepath.Join("testdata", "delegate"))
	if err != nil {
		t.Fatal(err)
	}
	r.exec(t, exitOK, nil, "capability", "install", capability)
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r.exec(t, exitOK, nil, "policy", "publish", policy)
	return r
}

// requests lists the project's requests, as a member reads them.
func (r *docketRig) requests(t *testing.T) []contract.Request {
	t.Helper()
	out, _ := r.exec(t, exitOK, nil, "requests", "--all", "-o", "json")
	var rs []contract.Request
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("docket requests printed %q: %v", out, err)
	}
	return rs
}

// TestOrchestrator_AgainstServe: an orchestrator Agent driven by the scripted model, over
// the MCP gateway of a real docket serve, approves a request a class of the published
// delegation policy covers — the write runs once and the decision records the policy
// version — and is refused on one no class covers and on its own; a member then decides
// the first with docket decide and the orchestrator's own on the console's Needs you,
// in a real browser.
func TestOrchestrator_AgainstServe(t *testing.T) {
	r := newPolicyRig(t, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n")
	calcID, calc := r.agent(t, "calc")
	bossID, boss := r.agent(t, "boss", "--kind", "orchestrator")
	run := func(t *testing.T, id, token, conversation string, turns ...string) []string {
		t.Helper()
		js := `{"turns":[`
		for _, turn := range turns {
			js += `{"calls":[` + turn + `]},`
		}
		js += `{"final":"done"}]}`
		r.execRun(t, "--token-file", token, "--script", r.script(t, js), "--hold-wait", "1ms", "--conversation", conversation, "task")
		res, _ := r.conversation(t, id, conversation)
		return resultCodes(t, res)
	}
	codes := func(t *testing.T, got []string, want ...contract.Code) {
		t.Helper()
		w := make([]string, len(want))
		for i, c := range want {
			w[i] = string(c)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("codes the model read (-want +got):\n%s", diff)
		}
	}

	// calc asks to note docs/a.md; the orchestrator finds it in its View and approves it.
	codes(t, run(t, calcID, calc, "calc-1", noteCall("docs/a.md")), "")
	codes(t, run(t, bossID, boss, "boss-1", `{"as":"q","tool":"QueryBoard","arguments":{}}`,
		decideCall(`{"$ref":"q.view.decisions.items.0.id"}`, `{"$ref":"q.view.decisions.items.0.digest"}`)), "", "")
	rs := r.requests(t)
	if len(rs) != 1 || rs[0].State != contract.RequestApproved || rs[0].DecidedBy != contract.Principal("agent:"+bossID) || rs[0].Policy != 2 {
		t.Fatalf("requests after the orchestrator's decision = %+v, want one approved by agent:%s under policy version 2", rs, bossID)
	}
	if n := r.countEvents(t, event.ActionApplied, "agent:"+calcID); n != 1 {
		t.Errorf("the approved note ran %d times, want once", n)
	}

	// A note outside docs/ is no class's, and the orchestrator's own request is never its.
	codes(t, run(t, calcID, calc, "calc-2", `{"tool":"QueryBoard","arguments":{}}`, noteCall("src/b.go")), "", "")
	codes(t, run(t, bossID, boss, "boss-2", noteCall("docs/c.md")), "")
	var uncovered, own contract.Request
	for _, q := range r.requests(t) {
		switch {
		case q.State != contract.RequestPending:
		case q.RequestedBy == contract.Principal("agent:"+calcID):
			uncovered = q
		case q.RequestedBy == contract.Principal("agent:"+bossID):
			own = q
		}
	}
	if uncovered.ID == "" || own.ID == "" {
		t.Fatalf("requests = %+v, want calc's and boss's pending", r.requests(t))
	}
	quote := func(s string) string { return fmt.Sprintf("%q", s) }
	codes(t, run(t, bossID, boss, "boss-3",
		decideCall(quote(string(uncovered.ID)), quote(uncovered.Digest)),
		decideCall(quote(string(own.ID)), quote(own.Digest))),
		contract.CodeNotDelegated, contract.CodeSelfDecision)

	// A member decides the uncovered request with docket decide, and the orchestrator's
	// own in the console, on Needs you.
	out, _ := r.exec(t, exitOK, nil, "decide", string(uncovered.ID), "approve", "--digest", uncovered.Digest)
	if want := string(uncovered.ID) + " approved by member:"; !strings.HasPrefix(out, want) {
		t.Errorf("docket decide printed %q, want %q…", out, want)
	}
	if n := r.countEvents(t, event.ActionApplied, "agent:"+calcID); n != 2 {
		t.Errorf("calc's notes ran %d times after the member's approval, want twice", n)
	}
	base, err := os.ReadFile(filepath.Join(r.home, urlFile))
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	url := strings.TrimSpace(string(base))
	b.SignIn(url, "admin", "correct horse battery")
	b.Do(chromedp.Navigate(url+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID(string(own.ID)+"-approve")))
	if got := b.Text("#" + string(own.ID)); !strings.Contains(got, "agent:"+bossID) && !strings.Contains(got, "boss") {
		t.Errorf("Needs you shows the orchestrator's request as %q, want it named as boss's", got)
	}
	b.Do(chromedp.Click(chromedp.ID(string(own.ID)+"-approve")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := b.Text(".notice"); !strings.Contains(got, "approved") {
		t.Errorf("after approving on Needs you, the notice is %q", got)
	}
	for _, q := range r.requests(t) {
		if q.ID == own.ID && (q.State != contract.RequestApproved || !strings.HasPrefix(string(q.DecidedBy), "member:")) {
			t.Errorf("the orchestrator's own request after the console = %+v, want approved by a member", q)
		}
	}
	if n := r.countEvents(t, event.ActionApplied, "agent:"+bossID); n != 1 {
		t.Errorf("the member-approved note ran %d times, want once", n)
	}
}
