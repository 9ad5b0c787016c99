package console_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// pageBadCapability is a capability pasted into the Capabilities page with a rule that
// does not parse: its refusal names the rule file and line.
const (
	pageBadCapability = "id      = \"test.pasted\"\nversion = \"1.0.0\"\nrules   = [\"rules.dl\"]\n\n[[action]]\nname     = \"note\"\napproval = \"none\"\neffects  = [\"noted(topic: ?topic)\"]\n\n[[action.param]]\nname = \"topic\"\ntype = \"string\"\n"
	pageBadRules      = "# one rule\nnoted_twice(topic: T) :- noted(topic: T)\n"
)

// TestPages_CapabilityInstall: a package pasted into the Capabilities page with a broken
// rule is refused with its file:line and the text kept; the example's files uploaded are
// installed, and the release is listed with its Actions.
func TestPages_CapabilityInstall(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	page := r.URL + "/projects/default/capabilities"
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("install")))
	r.b.Do(chromedp.SetValue(chromedp.ID("install-manifest"), pageBadCapability), chromedp.SetValue(chromedp.ID("install-rules"), pageBadRules),
		chromedp.Click(chromedp.ID("install")), chromedp.WaitVisible(chromedp.CSS(".notice, #install-error")))
	got := r.b.Text("#install-error")
	if !regexp.MustCompile(`rules\.dl:\d+`).MatchString(got) {
		t.Errorf("a package with a broken rule is refused with %q, want the rule file's file:line", got)
	}
	if strings.Contains(r.b.Text("#releases"), "test.pasted") {
		t.Errorf("the refused package is listed: %q", r.b.Text("#releases"))
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Capabilities page with a refusal: %q", ps)
	}
	r.b.Screenshot(screenshots, "capabilities-refused")

	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "verified-calculation", "capability"))
	if err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("install")),
		chromedp.SetUploadFiles(chromedp.ID("install-files"), []string{filepath.Join(dir, "capability.toml"), filepath.Join(dir, "calculation.dl")}),
		chromedp.Click(chromedp.ID("install")), chromedp.WaitVisible(chromedp.CSS(".notice, #install-error")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Capability installed") {
		t.Fatalf("after the upload the notice is %q (refusal %q)", got, r.b.Text("#install-error"))
	}
	rel := r.b.Text("#release-docket\\.verified-calculation-1\\.0\\.0")
	for _, want := range []string{"load_input", "write_result", "verify_result", "docket.workspace.read_json@1"} {
		if !strings.Contains(rel, want) {
			t.Errorf("the installed release reads %q, want %q among its Actions", rel, want)
		}
	}
	r.b.Screenshot(screenshots, "capabilities-installed")
}
