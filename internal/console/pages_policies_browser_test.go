package console_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// A delegation policy a member pastes into the Policies page, and a malformed one: a
// class with both a path and an agent.
const (
	pageDelegation = "[[delegation_policy.class]]\nname   = \"marks\"\naction = \"mark\"\nagent  = \"calc\"\n"
	pageMalformed  = "[[delegation_policy.class]]\nname   = \"both\"\naction = \"mark\"\npath   = \"docs/*\"\nagent  = \"calc\"\n"
	pageAttended   = "[autonomy_policy]\ndefault_level = \"attended\"\nrequire_acknowledgement = true\nacknowledgement = \"An unattended Agent writes at any hour with no person watching.\"\n"
)

// TestPages_PoliciesPublish: a delegation policy published from the Policies page is
// version 2, in force, with its text and a diff against the built-in one; a malformed
// one is shown again with its file:line refusal and publishes nothing. The page says how
// long artifacts are kept: the server's retention, then the artifact policy's.
func TestPages_PoliciesPublish(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	page := r.URL + "/projects/default/policies"
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("policy-delegation")))
	if got := r.b.Text("#policy-delegation tbody"); !strings.Contains(got, "built in") || !strings.Contains(got, "in force") {
		t.Errorf("the delegation versions read %q, want the built-in version 1 in force", got)
	}

	publish := func(file, text string) {
		t.Helper()
		r.b.Do(chromedp.SetValue(chromedp.ID("policy-file"), file), chromedp.SetValue(chromedp.ID("policy-body"), text),
			chromedp.Click(chromedp.ID("publish")), chromedp.WaitVisible(chromedp.CSS(".notice, #publish-error")))
	}
	publish("bad.toml", pageMalformed)
	got := r.b.Text("#publish-error")
	if !regexp.MustCompile(`bad\.toml:\d+`).MatchString(got) {
		t.Errorf("a malformed policy is refused with %q, want its file:line", got)
	}
	if v := browsertest.Run(r.b, chromedp.Value(chromedp.ID("policy-body"))); v != pageMalformed {
		t.Errorf("after the refusal the form holds %q, want the text pasted", v)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Policies page with a refusal: %q", ps)
	}
	r.b.Screenshot(screenshots, "policies-refused")

	publish("delegation.toml", pageDelegation)
	if got := r.b.Text(".notice"); !strings.Contains(got, "Published a new policy version") {
		t.Errorf("after publishing, the notice is %q", got)
	}
	if got := r.b.Text("#policy-delegation-2"); !strings.Contains(got, "ada") || strings.Contains(got, "member:") || !strings.Contains(got, "in force") {
		t.Errorf("version 2 reads %q, want published by the member ada, by name, and in force", got)
	}
	if got := r.b.Text("#policy-delegation-1"); strings.Contains(got, "in force") {
		t.Errorf("version 1 reads %q after version 2, want it no longer in force", got)
	}
	if got := r.b.Text("#policy-text"); !strings.Contains(got, `agent  = "calc"`) {
		t.Errorf("the text shown is %q, want version 2's", got)
	}
	pv, err := r.a.Policy(t.Context(), mustCaller(t, r.testServer), "default", contract.PolicyDelegation, 0)
	if err != nil || pv.Version != 2 {
		t.Fatalf("the delegation policy in force = %+v, %v; want version 2", pv, err)
	}
	r.b.Screenshot(screenshots, "policies")

	r.b.Do(chromedp.Click(chromedp.Search(`//a[@aria-label="Diff of delegation version 2 against the one before"]`)), chromedp.WaitVisible(chromedp.ID("policy-diff")))
	if got := r.b.Text("#policy-diff"); !strings.Contains(got, `+ agent  = "calc"`) {
		t.Errorf("the diff of 1 to 2 reads %q, want the added class", got)
	}

	// The artifact retention: the server's until the project publishes its own.
	if got := r.b.Text("#artifact-retention"); !strings.Contains(got, "read for 30 days, the server's retention") {
		t.Errorf("the artifact retention reads %q, want the server's 30 days", got)
	}
	publish("artifact.toml", "[artifact_policy]\nretention_days = 7\n")
	if got := r.b.Text("#artifact-retention"); !strings.Contains(got, "read for 7 days, as the project's artifact policy in force sets") {
		t.Errorf("after publishing an artifact policy the retention reads %q, want the project's 7 days", got)
	}
	if got := r.b.Text("#policy-artifact-2"); !strings.Contains(got, "in force") {
		t.Errorf("artifact version 2 reads %q, want it in force", got)
	}
}

// TestPages_PoliciesRunWindow: an attended Agent's write outside a run window is refused
// outside_run_window and not executed; a member opens a window on the Policies page and
// the same write is admitted. Raising it to unattended needs the stated risk acknowledged.
func TestPages_PoliciesRunWindow(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	if _, err := r.a.PublishPolicy(ctx, admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: pageAttended}); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/policies"), chromedp.WaitVisible(chromedp.CSS("table.autonomy")))
	r.b.Do(chromedp.SetValue(chromedp.CSS(`select[name="level"]`), "attended"),
		chromedp.Click(chromedp.Search(`//form[contains(@action,"/level")]//button`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "attended") {
		t.Errorf("after setting the level, the notice is %q", got)
	}

	write := func() contract.ToolResult {
		t.Helper()
		res, err := r.agent.Call(ctx, contract.ToolApplyAction, json.RawMessage(`{"action":"mark","params":{"topic":"w"}}`))
		if err != nil {
			t.Fatal(err)
		}
		var tr contract.ToolResult
		if err := json.Unmarshal([]byte(res.Text), &tr); err != nil {
			t.Fatalf("ApplyAction mark: %v\n%s", err, res.Text)
		}
		return tr
	}
	if tr := write(); tr.ErrorCode != contract.CodeOutsideRunWindow || tr.RequestExecuted == nil || *tr.RequestExecuted {
		t.Fatalf("an attended write outside a window = %s (executed %v), want outside_run_window, not executed", tr.ErrorCode, tr.RequestExecuted)
	}

	r.b.Do(chromedp.SetValue(chromedp.CSS(`input[name="minutes"]`), "30"),
		chromedp.Click(chromedp.Search(`//button[text()="Open a run window"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "Opened a run window")]`)))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Opened a run window") {
		t.Errorf("after opening a window, the notice is %q", got)
	}
	if got := r.b.Text("table.autonomy tbody"); !strings.Contains(got, "opened by ada") {
		t.Errorf("the autonomy table reads %q, want the window ada opened, by name", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Policies page with a run window: %q", ps)
	}
	r.b.Screenshot(screenshots, "policies-window")
	if tr := write(); len(tr.Operations) == 0 || tr.Operations[0].State != contract.OpWaitingForDecision {
		t.Fatalf("the same write inside the window = %s %+v, want admitted", tr.ErrorCode, tr.Operations)
	}

	r.b.Do(chromedp.SetValue(chromedp.CSS(`select[name="level"]`), "unattended"),
		chromedp.Click(chromedp.Search(`//form[contains(@action,"/level")]//button`)), chromedp.WaitVisible(chromedp.ID("autonomy-error")))
	if got := r.b.Text("#autonomy-error"); !strings.Contains(got, "acknowledg") {
		t.Errorf("raising to unattended without the acknowledgement is refused with %q", got)
	}
	if got := r.b.Text(".ack"); !strings.Contains(got, "no person watching") {
		t.Errorf("the level form shows %q, want the stated risk", got)
	}
	r.b.Do(chromedp.SetValue(chromedp.CSS(`select[name="level"]`), "unattended"), chromedp.Click(chromedp.CSS(`input[name="acknowledge"]`)),
		chromedp.Click(chromedp.Search(`//form[contains(@action,"/level")]//button`)),
		chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "now unattended")]`)))
	if a, err := r.a.AgentAutonomy(ctx, admin, "default", "calc"); err != nil || a.Level != "unattended" {
		t.Errorf("after acknowledging, calc's autonomy = %+v, %v; want unattended", a, err)
	}
}
