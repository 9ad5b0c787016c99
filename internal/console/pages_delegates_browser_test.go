package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// proposeAs sends a delegate's consent call with a reason and returns its card.
func (r *pagesRig) proposeAs(t *testing.T, dlg, path, body, reason string) contract.Card {
	t.Helper()
	resp, b := r.do(t, request{method: "POST", path: path, bearer: dlg, body: body, header: map[string]string{contract.ReasonHeader: reason}})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s as the delegate = %d %s, want 202", path, resp.StatusCode, b)
	}
	return decode[contract.CardAnswer](t, b).Card
}

// TestPages_Delegates: a member makes a delegate on the Delegates page and sees its
// credential once; the delegate's consent call appears on Needs you as a card without a
// reload; the member confirms it there and sees the call's answer once, and the call
// ran as the member; a second card is declined there; the Delegates page lists both
// cards; revoking the delegate there ends its credential and voids its open card.
func TestPages_Delegates(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	page := r.URL + "/projects/default/delegates"
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("delegates-none")))
	r.b.Do(chromedp.SetValue(chromedp.ID("delegate-name"), "asst"), chromedp.SetValue(chromedp.ID("delegate-life"), "8h"),
		chromedp.Click(chromedp.ID("create-delegate")), chromedp.WaitVisible(chromedp.ID("delegate-token")))
	dlg := browsertest.Run(r.b, chromedp.Value(chromedp.ID("delegate-token")))
	if !strings.HasPrefix(dlg, contract.PrefixDelegate) {
		t.Fatalf("the credential shown is %q, want a %s credential", dlg, contract.PrefixDelegate)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Delegates page with a credential: %q", ps)
	}
	r.b.Screenshot(screenshots, "delegates-created")
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("create-delegate")))
	if got := r.b.Text("main"); strings.Contains(got, dlg) || strings.Contains(got, "Credential of") {
		t.Error("the Delegates page read again shows the credential")
	}

	// Needs you takes the card live; confirming runs it once, as the member.
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID("cards")))
	card := r.proposeAs(t, dlg, "/api/v1/projects/default/agents", `{"name":"helper"}`, "a second Agent for the review")
	r.b.Do(chromedp.WaitVisible(chromedp.ID(card.ID + "-confirm")))
	got := r.b.Text("#" + card.ID)
	for _, want := range []string{"agent.create", "delegate asst of ada", "a second Agent for the review", `{"name":"helper"}`, "absent"} {
		if !strings.Contains(got, want) {
			t.Errorf("the card on Needs you reads %q, want %q in it", got, want)
		}
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Needs you with a card: %q", ps)
	}
	r.b.Screenshot(screenshots, "needs-you-card")
	r.b.Do(chromedp.Click(chromedp.ID(card.ID+"-confirm")), chromedp.WaitVisible(chromedp.ID("card-result")))
	result := browsertest.Run(r.b, chromedp.Value(chromedp.ID("card-result")))
	if !strings.Contains(result, contract.PrefixAgent) || !strings.Contains(r.b.Text("#card-confirmed-h"), "(201)") {
		t.Errorf("the confirm's answer is %q, want the new Agent's token and 201", result)
	}
	r.b.Screenshot(screenshots, "needs-you-card-confirmed")
	as, err := r.a.Directory().Agents(t.Context(), mustCaller(t, r.testServer), "default")
	if err != nil || len(as) != 2 {
		t.Fatalf("Agents after the confirm = %+v, %v; want calc and helper", as, err)
	}

	// A second card is declined with a reason.
	other := r.proposeAs(t, dlg, "/api/v1/projects/default/connections", `{"name":"w2"}`, "a worker for the review")
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID(other.ID+"-decline")))
	r.b.Do(chromedp.SetValue(chromedp.ID(other.ID+"-reason"), "use the existing worker"),
		chromedp.Click(chromedp.ID(other.ID+"-decline")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "declined") {
		t.Errorf("after declining, the notice is %q", got)
	}
	third := r.proposeAs(t, dlg, "/api/v1/projects/default/connections", `{"name":"w3"}`, "another worker")

	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("card-"+third.ID)))
	for id, want := range map[string]string{card.ID: "confirmed (201)", other.ID: "use the existing worker", third.ID: "open"} {
		if got := r.b.Text("#card-" + id); !strings.Contains(got, want) {
			t.Errorf("card %s on the Delegates page reads %q, want %q", id, got, want)
		}
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Delegates page with cards: %q", ps)
	}
	r.b.Screenshot(screenshots, "delegates")

	r.b.Do(chromedp.Click(chromedp.ID("revoke-asst")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "revoked") {
		t.Errorf("after revoking, the notice is %q", got)
	}
	if got := r.b.Text("#card-" + third.ID); !strings.Contains(got, "void") {
		t.Errorf("the open card after its delegate was revoked reads %q, want void", got)
	}
	if resp, _ := r.do(t, request{method: "GET", path: "/api/v1/whoami", bearer: dlg}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked delegate's read = %d, want 401", resp.StatusCode)
	}
}

// TestPages_CardFormsNeedCSRF: a confirm or decline posted without the session's CSRF
// token is refused and the card stays open.
func TestPages_CardFormsNeedCSRF(t *testing.T) {
	r := newPagesRig(t)
	resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: r.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate: %d %s", resp.StatusCode, b)
	}
	card := r.proposeAs(t, decode[contract.DelegateToken](t, b).Token, "/api/v1/projects/default/agents", `{"name":"helper"}`, "why")
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID(card.ID+"-confirm")))
	for _, form := range []string{"confirm", "decline"} {
		r.b.Do(chromedp.SetAttributeValue(chromedp.Search(`//form[contains(@action,"/`+card.ID+`/`+form+`")]/input[@name="csrf"]`), "value", "forged"),
			chromedp.Click(chromedp.ID(card.ID+"-"+form)), chromedp.WaitVisible(chromedp.CSS("main p.refusal")))
		if got := r.b.Text("main"); !strings.Contains(got, "csrf_token") {
			t.Errorf("a %s without the CSRF token answered %q, want csrf_token", form, got)
		}
		r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID(card.ID+"-confirm")))
	}
	if c, err := r.a.Directory().Card(t.Context(), mustCaller(t, r.testServer), card.ID); err != nil || c.State != contract.CardOpen {
		t.Errorf("card after forged forms = %+v, %v; want open", c, err)
	}
}

// TestPages_CardVoid: a card whose subject changed after Needs you showed it is void when
// the member confirms it there: the page names what changed, and nothing ran.
func TestPages_CardVoid(t *testing.T) {
	r := newPagesRig(t)
	resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: r.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate: %d %s", resp.StatusCode, b)
	}
	dlg := decode[contract.DelegateToken](t, b).Token
	resp, b = r.do(t, request{method: "DELETE", path: "/api/v1/projects/default/agents/calc", bearer: dlg, header: map[string]string{contract.ReasonHeader: "calc is done"}})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("revoke calc as the delegate = %d %s, want 202", resp.StatusCode, b)
	}
	card := decode[contract.CardAnswer](t, b).Card
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID(card.ID+"-confirm")))
	if resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/calc/token", bearer: r.token}); resp.StatusCode != http.StatusOK {
		t.Fatalf("rotate calc: %d %s", resp.StatusCode, b)
	}
	r.b.Do(chromedp.Click(chromedp.ID(card.ID+"-confirm")), chromedp.WaitVisible(chromedp.CSS("main p.refusal")))
	if got := r.b.Text("main p.refusal"); !strings.Contains(got, "card_void") || !strings.Contains(got, "agent calc") {
		t.Errorf("confirming a card whose Agent changed shows %q, want card_void naming agent calc", got)
	}
	as, err := r.a.Directory().Agents(t.Context(), mustCaller(t, r.testServer), "default")
	if err != nil || len(as) != 1 || as[0].RevokedAt != nil {
		t.Errorf("Agents after a void card = %+v, %v; want calc live", as, err)
	}
}
