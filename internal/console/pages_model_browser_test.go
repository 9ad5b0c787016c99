package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_AgentModelSettings: an Agent's page sets how its runtime sends model
// requests — thinking, attempts, the total retry wait, the first-byte and idle deadlines —
// as docket agent profile set does; the profile keeps the rest, and the page reads the
// settings back. A value out of bounds is refused on the form, naming the field, with
// what was typed kept and nothing saved (docs/console.md, "An Agent's page").
func TestPages_AgentModelSettings(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	p, err := r.a.SetAgentProfile(ctx, admin, "default", "calc", contract.ProfileSpec{Provider: "openai", ModelURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5", MaxTurns: 7, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	page := r.URL + "/projects/default/agents/" + string(p.Agent)
	r.signIn(t)
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("model-settings")))
	if got := r.b.Text("#model-settings summary"); !strings.Contains(got, "thinking default, attempts default, retry wait default, first byte default, idle default") {
		t.Errorf("the model settings read %q, want every one the default", got)
	}
	r.b.Do(chromedp.Click(chromedp.CSS("#model-settings summary")), chromedp.WaitVisible(chromedp.ID("model-thinking")),
		chromedp.SetValue(chromedp.ID("model-thinking"), "on"),
		chromedp.SetValue(chromedp.ID("model-attempts"), "8"),
		chromedp.SetValue(chromedp.ID("model-retry-wait"), "60"),
		chromedp.SetValue(chromedp.ID("model-first-byte"), "90"),
		chromedp.SetValue(chromedp.ID("model-idle"), "45"),
		chromedp.Click(chromedp.ID("model-save")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Model settings saved") {
		t.Errorf("after saving, the notice is %q", got)
	}
	got, err := r.a.AgentProfile(ctx, admin, "default", "calc")
	if err != nil {
		t.Fatal(err)
	}
	if got.Thinking != contract.ThinkingOn || got.ModelAttempts != 8 || got.ModelRetryWaitSeconds != 60 || got.ModelFirstByteSeconds != 90 || got.ModelIdleSeconds != 45 ||
		got.Model != "qwen2.5" || got.MaxTurns != 7 || !got.Enabled {
		t.Errorf("after saving the profile is %+v, want thinking on, 8 attempts, 60 s, 90 s, 45 s and the rest kept", got.ProfileSpec)
	}
	if sum := r.b.Text("#model-settings summary"); !strings.Contains(sum, "thinking on, attempts 8, retry wait 60 s, first byte 90 s, idle 45 s") {
		t.Errorf("after saving the model settings read %q", sum)
	}
	r.b.Do(chromedp.Click(chromedp.CSS("#model-settings summary")), chromedp.WaitVisible(chromedp.ID("model-thinking")))
	for id, want := range map[string]string{"model-thinking": "on", "model-attempts": "8", "model-retry-wait": "60", "model-first-byte": "90", "model-idle": "45"} {
		if v := browsertest.Run(r.b, chromedp.Value(chromedp.ID(id))); v != want {
			t.Errorf("the form reads %s = %q back, want %q", id, v, want)
		}
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page with its model settings open: %q", ps)
	}
	r.b.Screenshot(screenshots, "agent-model")

	// Past its bound: refused on the form, by the field's name, nothing saved.
	r.b.Do(chromedp.SetValue(chromedp.ID("model-attempts"), "99"),
		chromedp.SetValue(chromedp.ID("model-idle"), "30"),
		chromedp.Click(chromedp.ID("model-save")),
		chromedp.WaitVisible(chromedp.ID("model-error")))
	if msg := r.b.Text("#model-error"); !strings.Contains(msg, `Attempts "99" is not a whole number from 0 to 20`) {
		t.Errorf("the refusal reads %q, want it to name Attempts and its bounds", msg)
	}
	if v := browsertest.Run(r.b, chromedp.Value(chromedp.ID("model-attempts"))); v != "99" {
		t.Errorf("after the refusal the attempts read %q, want what was typed", v)
	}
	if n := browsertest.Run(r.b, chromedp.Evaluate[int](`document.querySelectorAll('#model-attempts[aria-invalid="true"]').length`)); n != 1 {
		t.Errorf("the attempts field is not marked invalid after its refusal")
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page with a refused model form: %q", ps)
	}
	r.b.Screenshot(screenshots, "agent-model-refused")
	if sum := r.b.Text("#model-settings summary"); !strings.Contains(sum, "attempts 8,") || !strings.Contains(sum, "idle 45 s") {
		t.Errorf("after the refusal the model settings read %q, want those saved, not those typed", sum)
	}
	if again, err := r.a.AgentProfile(ctx, admin, "default", "calc"); err != nil || again.ModelAttempts != 8 || again.ModelIdleSeconds != 45 {
		t.Errorf("after the refusal the profile is %+v, %v; want it as saved before", again.ProfileSpec, err)
	}
}
