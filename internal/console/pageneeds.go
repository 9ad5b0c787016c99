package console

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// maxHistoryShown is how many Requests a page of either tab shows: the history newest
// first, as every hook call to decide leaves one, and the waiting ones as listed, as many
// Agents may each have calls waiting (docs/security.md, "Bounds").
const maxHistoryShown = 100

// needsBody is what the Needs you page shows: the waiting Requests, or the history.
type needsBody struct {
	Tab   string        // "pending" or "history"
	Items []requestView // at most maxHistoryShown: the history newest first
	Older int           // the requests after this page's
	Pager pager
	Cards cardsBody // delegates' open cards, on the pending tab
	// Budgets are the budgets whose window warned or stopped a request, on the pending tab.
	Budgets []budgetView
}

// requestView is one Request as a person reads it before deciding.
type requestView struct {
	contract.Request
	Agent string         // the requesting Agent's name
	Title string         // the Action, or the Board tool of a manual Agent's Board act
	Does  string         // the Action's description, as its release declares it
	Case  *contract.Case // nil when the Action names no Case
	Why   string
	Rows  []vectorRow
	By    who // who decided it, by name; see DecidedBy
}

// vectorRow is one field of a Request's canonical vector, as the digest covers it.
type vectorRow struct{ Name, Value string }

// pageNeeds shows what waits for a person: each pending Request with the vector its
// digest covers and the forms that decide it.
func (s *Server) pageNeeds(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showNeeds(w, r, v, http.StatusOK, nil)
}

// showNeeds shows the pending tab with status, and a confirmed card's answer when one
// was just confirmed.
func (s *Server) showNeeds(w http.ResponseWriter, r *http.Request, v visit, status int, confirmed *cardConfirmed) error {
	return s.showRequestsWith(w, r, v, "pending", status, confirmed)
}

// pageNeedsHistory shows the Requests that no longer wait: decided, void or expired,
// newest first.
func (s *Server) pageNeedsHistory(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showRequests(w, r, v, "history")
}

func (s *Server) showRequests(w http.ResponseWriter, r *http.Request, v visit, tab string) error {
	return s.showRequestsWith(w, r, v, tab, http.StatusOK, nil)
}

func (s *Server) showRequestsWith(w http.ResponseWriter, r *http.Request, v visit, tab string, status int, confirmed *cardConfirmed) error {
	if s.dec == nil {
		return contract.Errorf(contract.CodeNotFound, "this server decides no requests; docket serve does.")
	}
	ctx := r.Context()
	rs, err := s.dec.Requests(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	rs = slices.DeleteFunc(rs, func(q contract.Request) bool { return (q.State == contract.RequestPending) != (tab == "pending") })
	path := "/projects/" + url.PathEscape(string(v.project)) + "/needs"
	if tab == "history" {
		slices.Reverse(rs)
		path += "/history"
	}
	rs, pg, err := pageOf(r.URL.Query(), listPage{Path: path, Param: "after", What: "requests"}, rs,
		func(q contract.Request) string { return string(q.ID) }, maxHistoryShown)
	if err != nil {
		return err
	}
	b := needsBody{Tab: tab, Older: pg.Total - pg.To, Pager: pg, Cards: cardsBody{Confirmed: confirmed}}
	if tab == "pending" {
		if b.Cards.Open, err = s.openCards(ctx, v); err != nil {
			return err
		}
		if b.Budgets, err = s.needBudgets(ctx, v); err != nil {
			return err
		}
	}
	who := make([]contract.Principal, 0, len(rs)+len(b.Cards.Open))
	for _, q := range rs {
		who = append(who, q.DecidedBy)
	}
	for _, c := range b.Cards.Open {
		who = append(who, c.ProposedBy)
	}
	book, err := s.names(ctx, v, who...)
	if err != nil {
		return err
	}
	b.Cards.book = book
	names := book.agents
	does, err := s.auth.ActionDescriptions(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	cases := map[contract.CaseID]*contract.Case{}
	for _, q := range rs {
		rv := requestView{Request: q, Agent: names[q.RequestedBy.ID()], Title: q.Vector.Action, Why: whyWaits(q), Rows: vectorRows(q.Vector), By: book.who(q.DecidedBy)}
		if q.Vector.Call != "" {
			rv.Title = q.Vector.Call
		} else {
			rv.Does = does[q.Vector.Action]
		}
		if rv.Agent == "" {
			rv.Agent = string(q.RequestedBy)
		}
		if id := q.Vector.CaseID; id != "" {
			if _, ok := cases[id]; !ok {
				c, err := s.auth.Case(ctx, v.caller, v.project, id)
				if err != nil {
					return err
				}
				cases[id] = &c
			}
			rv.Case = cases[id]
		}
		b.Items = append(b.Items, rv)
	}
	return s.render(w, r, v, status, "needs", b, slices.Concat(cardEvents, []string{event.BudgetWarned, event.BudgetExhausted, event.BudgetSet, event.BudgetRemoved})...)
}

// whyWaits says why a Request waits, or why it stopped waiting. A Request is raised only
// when the Action's approval names a person (or its View lists it waiting on a decision).
func whyWaits(q contract.Request) string {
	switch {
	case q.State == contract.RequestPending && q.MemberOnly != "":
		return "Only a member decides this request: " + q.MemberOnly + "."
	case q.State == contract.RequestPending && q.Vector.Call != "":
		return "The Agent is at level manual, so every write it makes waits for a member: this " + q.Vector.Call + " runs only once a member approves this exact vector, checked by the Board again when it runs."
	case q.State == contract.RequestVoid && q.Vector.Call != "":
		return "The Board no longer admitted the call when it was approved; the call was refused with the Board's code."
	}
	switch q.State {
	case contract.RequestPending:
		if q.Vector.Action == contract.ActionHook {
			return "A coding agent's " + q.Vector.Tool + " call, held by its hook: the hook policy says it needs a decision, and it runs only if approved before the hook stops waiting."
		}
		return "The Action " + q.Vector.Action + "'s approval names a person: it runs only once a member approves this exact vector, before the request closes."
	case contract.RequestExpired:
		return "Nobody decided before it closed; the call was refused."
	case contract.RequestVoid:
		return "The call changed before it ran, so the approval no longer named it; the call was refused."
	case contract.RequestDenied:
		return "A member denied it; the agent was told the reason."
	}
	return "A member approved it; the call ran as the vector says."
}

// vectorRows lists the fields of vec in the order a reviewer reads them: what runs, on
// which Case, with which Tool and Source, then each argument.
func vectorRows(vec contract.RequestVector) []vectorRow {
	if vec.Call != "" { // a manual Agent's Board act: the call and its arguments as decoded
		rows := []vectorRow{{"Call", vec.Call}, {"Project", string(vec.Project)}, {"Agent", string(vec.Agent)}}
		if vec.CaseID != "" {
			rows = append(rows, vectorRow{"Case", string(vec.CaseID)})
		}
		return append(rows, vectorRow{"Input", string(vec.Input)})
	}
	rows := []vectorRow{{"Action", vec.Action}}
	for _, f := range []vectorRow{{"Case", string(vec.CaseID)}, {"Tool", vec.Tool}, {"Tool digest", vec.ToolDigest}, {"Source", vec.Source}} {
		if f.Value != "" {
			rows = append(rows, f)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(vec.Args)) {
		rows = append(rows, vectorRow{"args." + k, vec.Args[k].String()})
	}
	return rows
}

// pageDecide decides a Request with the digest the page showed: the authority refuses a
// decision on any other. Approve and deny answer with Needs you again and a notice.
func (s *Server) pageDecide(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.dec == nil {
		return contract.Errorf(contract.CodeNotFound, "this server decides no requests; docket serve does.")
	}
	d := contract.Decision{Digest: r.PostFormValue("digest"), Verdict: contract.Verdict(r.PostFormValue("verdict")), Reason: r.PostFormValue("reason")}
	got, err := s.dec.Decide(r.Context(), v.caller, v.project, contract.RequestID(r.PathValue("id")), d)
	if err != nil {
		return err
	}
	n := noticeRequestDecided
	switch got.State {
	case contract.RequestApproved:
		n = noticeRequestApproved
	case contract.RequestDenied:
		n = noticeRequestDenied
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/needs", n)
}

// pendingCount is the Needs you badge: how many Requests and delegates' cards wait for a
// person.
func (s *Server) pendingCount(ctx context.Context, v visit) (int, error) {
	if s.dec == nil {
		return 0, nil
	}
	rs, err := s.dec.Requests(ctx, v.caller, v.project)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, q := range rs {
		if q.State == contract.RequestPending {
			n++
		}
	}
	cards, err := s.openCards(ctx, v)
	return n + len(cards), err
}

// agentNames maps the project's Agent ids to their names.
func (s *Server) agentNames(ctx context.Context, v visit) (map[string]string, error) {
	as, err := s.ids.Agents(ctx, v.caller, v.project)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(as))
	for _, a := range as {
		names[string(a.ID)] = a.Name
	}
	return names, nil
}
