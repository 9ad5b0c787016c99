package console_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_OlderLinkByKeyboard: with one Agent more than a page holds, the Agents page
// shows the newest page and a link to the older Agents that Tab reaches and Enter
// follows, with JavaScript off: the next page is the server's (docs/console.md, "Long
// lists").
func TestPages_OlderLinkByKeyboard(t *testing.T) {
	r := newPagesRig(t) // calc, the oldest Agent
	for i := range console.MaxRowsShown {
		if _, err := r.a.Directory().CreateAgent(t.Context(), mustCaller(t, r.testServer), "default", contract.CreateAgentRequest{Name: fmt.Sprintf("a%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	r.signIn(t)
	r.b.DisableScript()
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.ID("create-agent")))
	if got := r.b.Text("#agent-rows"); strings.Contains(got, "calc") || !strings.Contains(got, fmt.Sprintf("a%02d", console.MaxRowsShown-1)) {
		t.Errorf("the first page of Agents reads %q, want the newest without calc", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agents page with an older link: %q", ps)
	}
	// Each Agent's row holds its link and two buttons; the older link comes after them.
	order := r.b.Focus(20 + 3*console.MaxRowsShown)
	i := slices.Index(order, "a Older Agents")
	if i < 0 {
		t.Fatalf("Tab never reaches the older link; the focus went through %q", order[len(order)-5:])
	}
	// Loaded again, the page's focus starts from the top; Tab to the link, then Enter.
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.ID("create-agent")))
	for range i + 1 {
		r.b.Do(chromedp.KeyEvent("\t"))
	}
	r.b.Do(chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.Search(`//a[@rel="first"]`)))
	// The newer Agents are named a00, a01, …; an Agent's id may hold "a00" too
	// (agt_…a007), so a name is matched as a word.
	if got := r.b.Text("#agent-rows"); !strings.Contains(got, "calc") || regexp.MustCompile(`\ba\d\d\b`).MatchString(got) {
		t.Errorf("the page of older Agents reads %q, want calc alone", got)
	}
	if got := r.b.Text("nav.pager"); !strings.Contains(got, fmt.Sprintf("Agents %d to %d of %d", console.MaxRowsShown+1, console.MaxRowsShown+1, console.MaxRowsShown+1)) {
		t.Errorf("the pager of the older page reads %q", got)
	}
}
