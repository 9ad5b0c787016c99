package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// cardRig is a test server with a delegate asst of member ada in project default.
type cardRig struct {
	*testServer
	dlg string // the delegate's credential
}

func newCardRig(t *testing.T) *cardRig {
	t.Helper()
	s := newTestServer(t, console.Config{})
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: s.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate: %d %s", resp.StatusCode, b)
	}
	return &cardRig{testServer: s, dlg: decode[contract.DelegateToken](t, b).Token}
}

// propose sends the delegate's consent call and returns the card it recorded.
func (r *cardRig) propose(t *testing.T, method, path, body string) contract.Card {
	t.Helper()
	resp, b := r.do(t, request{method: method, path: path, bearer: r.dlg, body: body, header: map[string]string{contract.ReasonHeader: "the work needs it"}})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%s %s as the delegate = %d %s, want 202", method, path, resp.StatusCode, b)
	}
	return decode[contract.CardAnswer](t, b).Card
}

func (r *cardRig) confirm(t *testing.T, bearer, id string) (*http.Response, []byte) {
	t.Helper()
	return r.do(t, request{method: "POST", path: "/api/v1/cards/" + id + "/confirm", bearer: bearer})
}

func (r *cardRig) card(t *testing.T, id string) contract.Card {
	t.Helper()
	resp, b := r.do(t, request{method: "GET", path: "/api/v1/cards/" + id, bearer: r.token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("show card %s: %d %s", id, resp.StatusCode, b)
	}
	return decode[contract.Card](t, b)
}

func (r *cardRig) agentNames(t *testing.T) []string {
	t.Helper()
	resp, b := r.do(t, request{method: "GET", path: "/api/v1/projects/default/agents", bearer: r.token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list agents: %d %s", resp.StatusCode, b)
	}
	var names []string
	for _, a := range decode[contract.Page[contract.Agent]](t, b).Items {
		names = append(names, a.Name)
	}
	return names
}

// TestCard_ConfirmRunsOnceAsTheMember: a delegate's agent create is a card that changes
// nothing; the member's confirm runs it once, recorded as the member, and hands the
// member the token the card never held; a second confirm, and the delegate's own, are
// refused.
func TestCard_ConfirmRunsOnceAsTheMember(t *testing.T) {
	r := newCardRig(t)
	card := r.propose(t, "POST", "/api/v1/projects/default/agents", `{"kind":"agent", "name":"helper"}`)
	if card.Body == nil || string(card.Body) != `{"kind":"agent","name":"helper"}` || card.Reason != "the work needs it" ||
		card.Subject != (contract.CardSubject{Kind: "agent", Ref: "helper", Version: contract.SubjectAbsent}) || card.Policy != 1 {
		t.Errorf("card = %+v; want the canonical body, the reason, the absent agent and delegate policy version 1", card)
	}
	if got := r.agentNames(t); len(got) != 0 {
		t.Fatalf("agents after the card = %v, want none: a card runs nothing", got)
	}
	if resp, b := r.confirm(t, r.dlg, card.ID); resp.StatusCode != http.StatusForbidden || decode[contract.Error](t, b).Code != contract.CodeMemberOnly {
		t.Errorf("the delegate's confirm = %d %s, want 403 member_only", resp.StatusCode, b)
	}
	before := logHead(t, r.testServer)
	resp, b := r.confirm(t, r.token, card.ID)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirm = %d %s", resp.StatusCode, b)
	}
	conf := decode[contract.CardConfirmation](t, b)
	tok := decode[contract.AgentToken](t, conf.Result)
	if conf.Card.State != contract.CardConfirmed || conf.Card.Outcome == nil || conf.Card.Outcome.Status != http.StatusCreated || tok.Agent.Name != "helper" || tok.Token == "" {
		t.Fatalf("confirm = %s; want the card confirmed with outcome 201 and the new Agent's token", b)
	}
	evs, err := r.st.Events(t.Context(), "default", before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.Type == event.AgentCreated && e.Actor != string(mustCaller(t, r.testServer).Principal()) {
			t.Errorf("agent.created actor = %s, want the confirming member", e.Actor)
		}
		if strings.Contains(string(e.Data), tok.Token) {
			t.Errorf("event %s holds the Agent's token", e.Type)
		}
	}
	if got := strings.Join(types, " "); got != "card.confirmed agent.created card.ran" {
		t.Errorf("events of the confirm = %s, want card.confirmed agent.created card.ran", got)
	}
	if shown := r.card(t, card.ID); shown.State != contract.CardConfirmed || shown.Outcome == nil || strings.Contains(fmt.Sprint(shown), tok.Token) {
		t.Errorf("card after confirm = %+v; want confirmed with its outcome and no token", shown)
	}
	resp, b = r.confirm(t, r.token, card.ID)
	if resp.StatusCode != http.StatusConflict || decode[contract.Error](t, b).Code != contract.CodeCardClosed {
		t.Errorf("second confirm = %d %s, want 409 card_closed", resp.StatusCode, b)
	}
	if got := r.agentNames(t); len(got) != 1 {
		t.Errorf("agents after two confirms = %v, want the one", got)
	}
}

// TestCard_SubjectChangedVoids: a card bound to a subject that changed before the confirm
// is void, names what changed, and runs nothing.
func TestCard_SubjectChangedVoids(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		change request // the member's own act between the card and the confirm
		check  func(t *testing.T, r *cardRig)
	}{
		{"agent token replaced before its revocation", "DELETE", "/api/v1/projects/default/agents/calc", "",
			request{method: "POST", path: "/api/v1/projects/default/agents/calc/token"},
			func(t *testing.T, r *cardRig) {
				resp, b := r.do(t, request{method: "GET", path: "/api/v1/projects/default/agents", bearer: r.token})
				if resp.StatusCode != http.StatusOK || strings.Contains(string(b), "revokedAt") {
					t.Errorf("the agent after a void revocation card: %s; want it live", b)
				}
			}},
		{"agent created under the name first", "POST", "/api/v1/projects/default/agents", `{"name":"helper"}`,
			request{method: "POST", path: "/api/v1/projects/default/agents", body: `{"name":"helper"}`},
			func(t *testing.T, r *cardRig) {
				if got := r.agentNames(t); len(got) != 2 {
					t.Errorf("agents = %v, want calc and the member's helper only", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCardRig(t)
			if resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: r.token, body: `{"name":"calc"}`}); resp.StatusCode != http.StatusCreated {
				t.Fatalf("create calc: %d %s", resp.StatusCode, b)
			}
			card := r.propose(t, tt.method, tt.path, tt.body)
			tt.change.bearer = r.token
			if resp, b := r.do(t, tt.change); resp.StatusCode >= 300 {
				t.Fatalf("the member's change: %d %s", resp.StatusCode, b)
			}
			resp, b := r.confirm(t, r.token, card.ID)
			e := decode[contract.Error](t, b)
			if resp.StatusCode != http.StatusConflict || e.Code != contract.CodeCardVoid || !strings.Contains(e.Teaching, "agent") || !strings.Contains(e.Teaching, card.Subject.Version) {
				t.Fatalf("confirm after the subject changed = %d %s, want 409 card_void naming the agent and its version", resp.StatusCode, b)
			}
			if shown := r.card(t, card.ID); shown.State != contract.CardVoid || !strings.Contains(shown.Why, "subject changed") {
				t.Errorf("card = %+v, want void with why", shown)
			}
			tt.check(t, r)
		})
	}
}

// TestCard_OpenLimit: a delegate holds at most 20 open cards in a project; the 21st is
// refused card_limit, and a declined card makes room.
func TestCard_OpenLimit(t *testing.T) {
	r := newCardRig(t)
	var first contract.Card
	for i := range contract.MaxOpenCards {
		c := r.propose(t, "POST", "/api/v1/projects/default/agents", fmt.Sprintf(`{"name":"a%d"}`, i))
		if i == 0 {
			first = c
		}
	}
	before := logHead(t, r.testServer)
	body := `{"name":"one-more"}`
	hdr := map[string]string{contract.ReasonHeader: "one more"}
	resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: r.dlg, body: body, header: hdr})
	if resp.StatusCode != http.StatusTooManyRequests || decode[contract.Error](t, b).Code != contract.CodeCardLimit {
		t.Fatalf("21st card = %d %s, want 429 card_limit", resp.StatusCode, b)
	}
	if logHead(t, r.testServer) != before {
		t.Error("a refused 21st card appended events")
	}
	if resp, b := r.do(t, request{method: "POST", path: "/api/v1/cards/" + first.ID + "/decline", bearer: r.token, body: `{"reason":"not now"}`}); resp.StatusCode != http.StatusOK ||
		decode[contract.Card](t, b).State != contract.CardDeclined {
		t.Fatalf("decline: %d %s", resp.StatusCode, b)
	}
	if resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: r.dlg, body: body, header: hdr}); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a card after one was declined = %d %s, want 202", resp.StatusCode, b)
	}
	if resp, b := r.confirm(t, r.token, first.ID); resp.StatusCode != http.StatusConflict || decode[contract.Error](t, b).Code != contract.CodeCardClosed {
		t.Errorf("confirm of a declined card = %d %s, want 409 card_closed", resp.StatusCode, b)
	}
	resp, b = r.do(t, request{method: "GET", path: "/api/v1/projects/default/cards?state=open", bearer: r.token})
	if resp.StatusCode != http.StatusOK || len(decode[contract.Page[contract.Card]](t, b).Items) != contract.MaxOpenCards {
		t.Errorf("open cards = %d %s, want %d", resp.StatusCode, b, contract.MaxOpenCards)
	}
}

// TestCard_EndsWithItsDelegate: revoking a delegate voids its open cards, and so does
// its member signing out of every session, which revokes the delegate.
func TestCard_EndsWithItsDelegate(t *testing.T) {
	tests := []struct {
		name string
		end  func(t *testing.T, r *cardRig) (bearer string)
		why  string
	}{
		{"revoked", func(t *testing.T, r *cardRig) string {
			if resp, b := r.do(t, request{method: "DELETE", path: "/api/v1/delegates/asst", bearer: r.token}); resp.StatusCode != http.StatusOK {
				t.Fatalf("revoke: %d %s", resp.StatusCode, b)
			}
			return r.token
		}, "its delegate was revoked"},
		{"signed out of every session", func(t *testing.T, r *cardRig) string {
			if resp, b := r.do(t, request{method: "DELETE", path: "/api/v1/sessions/current", bearer: r.token}); resp.StatusCode >= 300 {
				t.Fatalf("logout: %d %s", resp.StatusCode, b)
			}
			resp, b := r.do(t, request{method: "POST", path: "/api/v1/sessions", body: `{"name":"ada","passphrase":"` + testPassphrase + `"}`})
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("login: %d %s", resp.StatusCode, b)
			}
			return decode[contract.SessionCreated](t, b).Token
		}, "signed out of every session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCardRig(t)
			a := r.propose(t, "POST", "/api/v1/projects/default/agents", `{"name":"a"}`)
			c := r.propose(t, "POST", "/api/v1/projects/default/connections", `{"name":"c"}`)
			r.token = tt.end(t, r)
			if resp, _ := r.do(t, request{method: "GET", path: "/api/v1/whoami", bearer: r.dlg}); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("the delegate after it ended = %d, want 401", resp.StatusCode)
			}
			for _, id := range []string{a.ID, c.ID} {
				if shown := r.card(t, id); shown.State != contract.CardVoid || !strings.Contains(shown.Why, tt.why) {
					t.Errorf("card %s = %s %q, want void: %s", id, shown.State, shown.Why, tt.why)
				}
				if resp, b := r.confirm(t, r.token, id); resp.StatusCode != http.StatusConflict || decode[contract.Error](t, b).Code != contract.CodeCardClosed {
					t.Errorf("confirm of a void card = %d %s, want 409 card_closed", resp.StatusCode, b)
				}
			}
			if got := r.agentNames(t); len(got) != 0 {
				t.Errorf("agents = %v, want none", got)
			}
		})
	}
}

// TestCard_Refusals: a consent call without a reason, or whose body holds a credential,
// records nothing.
func TestCard_Refusals(t *testing.T) {
	r := newCardRig(t)
	tests := []struct {
		name string
		req  request
		code contract.Code
	}{
		{"no reason", request{method: "POST", path: "/api/v1/projects/default/agents", body: `{"name":"x"}`}, contract.CodeCardReason},
		{"a credential in the body", request{method: "POST", path: "/api/v1/projects/default/agents", body: `{"name":"dkt_ses_x"}`,
			header: map[string]string{contract.ReasonHeader: "why"}}, contract.CodeCardSecret},
		{"a body that is not JSON", request{method: "POST", path: "/api/v1/projects/default/agents", body: `{"name":`,
			header: map[string]string{contract.ReasonHeader: "why"}}, contract.CodeInvalidArgument},
		{"a two-line reason", request{method: "POST", path: "/api/v1/projects/default/agents", body: `{"name":"x"}`,
			header: map[string]string{contract.ReasonHeader: "why\tnot"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := logHead(t, r.testServer)
			tt.req.bearer = r.dlg
			resp, b := r.do(t, tt.req)
			if tt.code == "" {
				if resp.StatusCode != http.StatusAccepted {
					t.Errorf("= %d %s, want 202: a tab is one line", resp.StatusCode, b)
				}
				return
			}
			if got := decode[contract.Error](t, b).Code; got != tt.code || logHead(t, r.testServer) != before {
				t.Errorf("= %d %s, want %s and no event", resp.StatusCode, b, tt.code)
			}
		})
	}
}

// TestCard_DelegatePolicy: a published [delegate_policy] exempts a named consent
// operation, which then runs as the delegate with the exemption and its policy version
// recorded; a version naming a member-only operation is refused at publish, with its
// line.
func TestCard_DelegatePolicy(t *testing.T) {
	r := newCardRig(t)
	publish := func(text string) (*http.Response, []byte) {
		b, err := json.Marshal(contract.PublishPolicyRequest{File: "delegate.toml", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return r.do(t, request{method: "POST", path: "/api/v1/projects/default/policies", bearer: r.token, body: string(b)})
	}
	resp, b := publish("[delegate_policy]\nexempt = [\"member.create\"]\n")
	if e := decode[contract.Error](t, b); resp.StatusCode != http.StatusBadRequest || e.Code != contract.CodePolicyInvalid || !strings.HasPrefix(e.Teaching, "delegate.toml:2:") {
		t.Errorf("publish exempting member.create = %d %s, want 400 policy_invalid at delegate.toml:2", resp.StatusCode, b)
	}
	resp, b = publish("[delegate_policy]\nexempt = [\"agent.create\"]\n")
	if e := decode[contract.Error](t, b); resp.StatusCode != http.StatusBadRequest || e.Code != contract.CodePolicyInvalid || !strings.Contains(e.Teaching, "makes a credential") {
		t.Errorf("publish exempting agent.create = %d %s, want 400 policy_invalid: it makes a credential", resp.StatusCode, b)
	}
	if resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: r.token, body: `{"name":"helper"}`}); resp.StatusCode != http.StatusCreated {
		t.Fatalf("the member creating helper = %d %s", resp.StatusCode, b)
	}
	if resp, b := publish("[delegate_policy]\nexempt = [\"agent.revoke\"]\n"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("publish: %d %s", resp.StatusCode, b)
	}
	if resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/policies", bearer: r.dlg, body: `{"file":"d.toml","text":"[delegate_policy]\n"}`}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the delegate publishing a policy = %d %s, want 403", resp.StatusCode, b)
	}
	before := logHead(t, r.testServer)
	resp, b = r.do(t, request{method: "DELETE", path: "/api/v1/projects/default/agents/helper", bearer: r.dlg,
		header: map[string]string{contract.ReasonHeader: "exempt by policy"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("exempt agent revoke as the delegate = %d %s, want 200", resp.StatusCode, b)
	}
	evs, err := r.st.Events(t.Context(), "default", before, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Type != event.CardExempted || !strings.Contains(string(evs[0].Data), `"policyVersion":2`) ||
		evs[1].Type != event.AgentRevoked || evs[1].Actor != "member:ada/asst" {
		t.Errorf("events = %+v; want card.exempted at policy version 2, then agent.revoked by member:ada/asst", evs)
	}
	// Another consent operation is still a card.
	r.propose(t, "POST", "/api/v1/projects/default/connections", `{"name":"c"}`)
}

// TestCard_ConfirmedCallMeetsItsChecks: a confirmed card's call meets every check the
// member's own call would: here the Connection it names does not exist, so the call is
// refused as the API refuses it, and the card records that outcome.
func TestCard_ConfirmedCallMeetsItsChecks(t *testing.T) {
	r := newCardRig(t)
	digest := "sha256:" + strings.Repeat("ab", 32)
	card := r.propose(t, "PUT", "/api/v1/projects/default/connections/nowhere/tools/x.y@1", `{"digest":"`+digest+`"}`)
	if card.Subject.Kind != "tool" || card.Subject.Ref != "nowhere/x.y@1" || card.Subject.Version != contract.SubjectAbsent {
		t.Errorf("subject = %+v, want the absent tool lock x.y@1 on nowhere", card.Subject)
	}
	resp, b := r.confirm(t, r.token, card.ID)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirm = %d %s", resp.StatusCode, b)
	}
	conf := decode[contract.CardConfirmation](t, b)
	if o := conf.Card.Outcome; o == nil || o.Status != http.StatusNotFound || o.ErrorCode != contract.CodeNotFound ||
		decode[contract.Error](t, conf.Result).Code != contract.CodeNotFound {
		t.Errorf("confirm = %s; want the call refused not_found, recorded on the card", b)
	}
}

// TestCard_ScheduleSubject: a delegate's consent acts on schedules are cards bound to
// their subject — making one to its Agent, running one now to the schedule as it stood —
// so a schedule paused after the card voids it, and a card on an unchanged one runs once
// as the member.
func TestCard_ScheduleSubject(t *testing.T) {
	r := newCardRig(t)
	if resp, b := r.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: r.token, body: `{"name":"calc"}`}); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create calc: %d %s", resp.StatusCode, b)
	}
	const base = "/api/v1/projects/default/schedules"
	made := r.propose(t, "POST", base, `{"every":"1h","task":{"agent":"calc","text":"Tidy."}}`)
	if made.Subject.Kind != "agent" || made.Subject.Ref != "calc" || made.Subject.Version == contract.SubjectAbsent {
		t.Errorf("a schedule create's card is bound to %+v, want the live Agent calc", made.Subject)
	}
	resp, b := r.confirm(t, r.token, made.ID)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirm the schedule create: %d %s", resp.StatusCode, b)
	}
	resp, b = r.do(t, request{method: "GET", path: base, bearer: r.token})
	page := decode[contract.Page[contract.Schedule]](t, b)
	if resp.StatusCode != http.StatusOK || len(page.Items) != 1 || page.Items[0].CreatedBy != mustCaller(t, r.testServer).Principal() {
		t.Fatalf("schedules after the confirm = %d %s, want one made by the member", resp.StatusCode, b)
	}
	one := base + "/" + string(page.Items[0].ID)
	run := r.propose(t, "POST", one+"/run", "")
	if run.Subject.Kind != "schedule" || run.Subject.Version == contract.SubjectAbsent {
		t.Errorf("a run-now card is bound to %+v, want the schedule", run.Subject)
	}
	if resp, b := r.do(t, request{method: "POST", path: one + "/pause", bearer: r.token}); resp.StatusCode != http.StatusOK {
		t.Fatalf("pause: %d %s", resp.StatusCode, b)
	}
	resp, b = r.confirm(t, r.token, run.ID)
	if e := decode[contract.Error](t, b); resp.StatusCode != http.StatusConflict || e.Code != contract.CodeCardVoid {
		t.Errorf("confirm a run-now card after the schedule was paused = %d %s, want 409 card_void", resp.StatusCode, b)
	}
}

// TestCard_BudgetRemove: a delegate's budget remove is a card bound to the budget's
// version that removes nothing; the member's confirm removes it, recorded as the member;
// a card whose budget was set again before the confirm is void (docs/budgets.md).
func TestCard_BudgetRemove(t *testing.T) {
	r := newCardRig(t)
	const one = "/api/v1/projects/default/budgets/all"
	set := func(usd string) {
		t.Helper()
		if resp, b := r.do(t, request{method: "PUT", path: one, bearer: r.token, body: `{"scope":"project","window":"month","maxUsd":` + usd + `}`}); resp.StatusCode != http.StatusOK {
			t.Fatalf("set the budget: %d %s", resp.StatusCode, b)
		}
	}
	set("10")
	card := r.propose(t, "DELETE", one, "")
	if card.Subject.Kind != "budget" || card.Subject.Ref != "all" || card.Subject.Version == contract.SubjectAbsent {
		t.Errorf("a budget remove's card is bound to %+v, want the budget all as it stands", card.Subject)
	}
	if resp, b := r.do(t, request{method: "GET", path: one, bearer: r.token}); resp.StatusCode != http.StatusOK {
		t.Fatalf("the budget after the card = %d %s, want it still there: a card runs nothing", resp.StatusCode, b)
	}
	before := logHead(t, r.testServer)
	resp, b := r.confirm(t, r.token, card.ID)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirm = %d %s", resp.StatusCode, b)
	}
	if gone := decode[contract.Budget](t, decode[contract.CardConfirmation](t, b).Result); gone.Name != "all" || gone.MaxUSD != 10 {
		t.Errorf("the confirm's answer = %+v, want the budget as it was", gone)
	}
	if resp, b := r.do(t, request{method: "GET", path: one, bearer: r.token}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the budget after the confirm = %d %s, want 404", resp.StatusCode, b)
	}
	evs, err := r.st.Events(t.Context(), "default", before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.Type == event.BudgetRemoved && e.Actor != string(mustCaller(t, r.testServer).Principal()) {
			t.Errorf("budget.removed actor = %s, want the confirming member", e.Actor)
		}
	}
	if got := strings.Join(types, " "); got != "card.confirmed budget.removed card.ran" {
		t.Errorf("events of the confirm = %s, want card.confirmed budget.removed card.ran", got)
	}

	set("10")
	stale := r.propose(t, "DELETE", one, "")
	set("20")
	resp, b = r.confirm(t, r.token, stale.ID)
	if e := decode[contract.Error](t, b); resp.StatusCode != http.StatusConflict || e.Code != contract.CodeCardVoid {
		t.Errorf("confirm a remove card after the budget was set again = %d %s, want 409 card_void", resp.StatusCode, b)
	}
}
