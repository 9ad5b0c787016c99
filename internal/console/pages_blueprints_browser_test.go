package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/contract"
)

// TestPages_Blueprints: a member finds the project's blueprints from the Agents page and
// makes an Agent's profile from one; the Agent's page shows what it may use and the
// blueprint, and says so once the blueprint changed; a form sent after the blueprint
// changed is refused on the blueprint's form with the teaching.
func TestPages_Blueprints(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	spec := contract.BlueprintSpec{Description: "Marks topics; explores nothing.", Profile: contract.ProfileSpec{
		Provider: contract.ProviderOpenAI, ModelURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5",
		Allow: &contract.AllowList{Actions: []string{"mark", contract.ActionAsk}}}}
	if _, err := r.a.SetBlueprint(ctx, admin, "default", "marker", spec); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.ID("blueprints-link")),
		chromedp.Click(chromedp.ID("blueprints-link")), chromedp.WaitVisible(chromedp.ID("blueprint-marker")))
	if got := r.b.Text("#blueprint-marker"); !strings.Contains(got, "Marks topics") || !strings.Contains(got, "mark, docket.ask") ||
		!strings.Contains(got, "openai qwen2.5") {
		t.Errorf("the blueprint shows %q, want its description, model and Actions", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Blueprints page: %q", ps)
	}
	r.b.Screenshot(screenshots, "blueprints")

	// A form sent after the blueprint changed is refused where it was filled in.
	spec.Profile.Model = "qwen3"
	if _, err := r.a.SetBlueprint(ctx, admin, "default", "marker", spec); err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.Click(chromedp.ID("from-marker")), chromedp.WaitVisible(chromedp.ID("blueprint-error")))
	if got := r.b.Text("#blueprint-error"); !strings.Contains(got, "set again since you read it") {
		t.Errorf("the stale form is refused with %q, want it said that the blueprint changed", got)
	}

	// The page as it is now makes the profile.
	r.b.Do(chromedp.SendKeys(chromedp.ID("key-marker"), "agents/calc/model.key"),
		chromedp.Click(chromedp.ID("from-marker")), chromedp.WaitVisible(chromedp.ID("allow")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Profile set from the blueprint") {
		t.Errorf("after the form the notice is %q", got)
	}
	if got := r.b.Text("#allow"); !strings.Contains(got, "any Case Type") || !strings.Contains(got, "mark, docket.ask") {
		t.Errorf("the Agent may use %q, want any Case Type and the blueprint's Actions", got)
	}
	if got := r.b.Text("#blueprint"); !strings.Contains(got, "marker at sha256:") {
		t.Errorf("the Agent's blueprint shows %q, want marker and its digest", got)
	}
	p, err := r.a.AgentProfile(ctx, admin, "default", "calc")
	if err != nil || p.Model != "qwen3" || p.KeyFile != "agents/calc/model.key" || !p.Enabled || p.BlueprintState != contract.BlueprintCurrent {
		t.Fatalf("profile = %+v, %v; want marker's copy with the key file, enabled", p, err)
	}

	// Changing the blueprint leaves the profile, and the Agent's page says so.
	spec.Profile.Model = "qwen3.5"
	if _, err := r.a.SetBlueprint(ctx, admin, "default", "marker", spec); err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+string(p.Agent)), chromedp.WaitVisible(chromedp.ID("blueprint-changed")))
	if got := r.b.Text("#runtime"); !strings.Contains(got, "qwen3") || strings.Contains(got, "qwen3.5") {
		t.Errorf("the runtime shows %q, want the copied model qwen3", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page from a blueprint: %q", ps)
	}
	r.b.Screenshot(screenshots, "agent-blueprint")
}
