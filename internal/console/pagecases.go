package console

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// maxCasesShown bounds the Cases a page of the list shows, newest first; the older link
// and the filters see past it.
const maxCasesShown = 200

// maxCaseEvents bounds the events a Case's timeline shows, newest kept.
const maxCaseEvents = 200

// casesBody is what the Cases page shows: the filters as given and the Cases they keep.
type casesBody struct {
	Status, Type, Certified string
	Types                   []string // every Case Type seen, for the filter
	Cases                   []caseRow
	Total                   int // Cases before filtering
	Matched                 int // Cases the filters keep; more than Cases holds when cut at maxCasesShown
	Pager                   pager
}

// caseRow is one Case in the list.
type caseRow struct {
	contract.Case
	Href, Key, Certified string
}

// certifiedOf says whether Case c is certified as the list shows it: a Case closed as
// completed was certified when it closed (the authority closes no other as completed);
// one closed otherwise was not; an open one is not yet.
func certifiedOf(c contract.Case) string {
	switch {
	case c.Status == contract.CaseClosed && c.Disposition == contract.DispositionCompleted:
		return "yes"
	case c.Status == contract.CaseClosed:
		return "no"
	}
	return "not yet"
}

// pageCases lists the project's Cases, newest first, kept by the filters ?status=,
// ?type= and ?certified= (yes, no or "not yet").
func (s *Server) pageCases(w http.ResponseWriter, r *http.Request, v visit) error {
	cs, err := s.auth.Cases(r.Context(), v.caller, v.project)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	b := casesBody{Status: q.Get("status"), Type: q.Get("type"), Certified: q.Get("certified"), Total: len(cs)}
	types := map[string]bool{}
	for _, c := range slices.Backward(cs) {
		types[c.CaseType] = true
		row := caseRow{Case: c, Href: caseHref(v.project, c.CaseID), Key: keyText(c.BusinessKey), Certified: certifiedOf(c)}
		if (b.Status != "" && string(c.Status) != b.Status) || (b.Type != "" && c.CaseType != b.Type) ||
			(b.Certified != "" && row.Certified != b.Certified) {
			continue
		}
		b.Cases = append(b.Cases, row)
	}
	b.Matched = len(b.Cases)
	list := listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/cases", Param: "after", What: "Cases"}
	if b.Cases, b.Pager, err = pageOf(r.URL.Query(), list, b.Cases, func(c caseRow) string { return string(c.CaseID) }, maxCasesShown); err != nil {
		return err
	}
	b.Types = slices.Sorted(maps.Keys(types))
	return s.render(w, r, v, http.StatusOK, "cases", b, event.CaseOpened, event.CaseClosed)
}

// caseHref is the page of one Case.
func caseHref(project contract.ProjectID, id contract.CaseID) string {
	return "/projects/" + url.PathEscape(string(project)) + "/cases/" + url.PathEscape(string(id))
}

// keyText writes a business key as name = value pairs, names sorted.
func keyText(key contract.Args) string {
	parts := make([]string, 0, len(key))
	for _, k := range slices.Sorted(maps.Keys(key)) {
		parts = append(parts, k+" = "+key[k].String())
	}
	return strings.Join(parts, ", ")
}

// caseBody is what a Case's page shows.
type caseBody struct {
	contract.CaseDetail
	Key, Certified string
	Acceptance     string // the acceptance node's atom
	Why            *whyTree
	Facts          []whyView
	Timeline       []timelineItem
	OpenedBy       who // who opened the Case, by name
	ClosedBy       who // who closed it, by name; zero while it is open
	EventsHref     string
	MoreEvents     bool // the timeline was cut at maxCaseEvents
	Holds          []holdView
}

// holdView is one hold standing on a Case, with who placed it by name.
type holdView struct {
	contract.CaseHold
	ByWho  who
	Member bool // a member's hold, which the page offers to release
}

// timelineItem is one entry of a Case's timeline: an Operation of the Case, or an event
// whose data names it.
type timelineItem struct {
	ID         string // unique on the page, and new when the entry changes
	At         time.Time
	Kind, What string
	State      string
	Detail     string
	By         who    // an event's: who it records as its actor
	Proposer   string // an Operation's: the model turn that proposed it, when recorded
	Seq        int64
}

// pageCase shows one Case: its root, status and pins, the acceptance with its derivation
// tree, the facts it rests on, the receipt of its close, and its Operations and events.
func (s *Server) pageCase(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	id := contract.CaseID(r.PathValue("case"))
	d, err := s.auth.CaseDetail(ctx, v.caller, v.project, id)
	if err != nil {
		return err
	}
	b := caseBody{CaseDetail: d, Key: keyText(d.BusinessKey), Certified: certifiedOf(d.Case),
		EventsHref: "/projects/" + url.PathEscape(string(v.project)) + "/events?case=" + url.QueryEscape(string(id))}
	if d.Acceptance != nil {
		b.Acceptance = atomText(d.Acceptance.Atom)
	}
	es, more, err := s.caseEvents(ctx, v, d.Case)
	if err != nil {
		return err
	}
	by := []contract.Principal{d.OpenedBy}
	if d.Receipt != nil {
		by = append(by, d.Receipt.ClosedBy)
	}
	if d.Why != nil {
		by = whoAsserted(by, d.Why.Root)
	}
	for _, f := range d.Facts {
		by = whoAsserted(by, f)
	}
	for _, e := range es {
		by = append(by, contract.Principal(e.Actor))
	}
	for _, h := range d.Holds {
		by = append(by, h.By)
	}
	book, err := s.names(ctx, v, by...)
	if err != nil {
		return err
	}
	b.OpenedBy = book.who(d.OpenedBy)
	if d.Receipt != nil {
		b.ClosedBy = book.who(d.Receipt.ClosedBy)
	}
	if d.Why != nil {
		t := newWhyTree(book, *d.Why)
		b.Why = &t
	}
	for _, f := range d.Facts {
		b.Facts = append(b.Facts, newWhyView(book, f))
	}
	if b.Timeline, err = s.caseTimeline(ctx, v, d.Case, es, book); err != nil {
		return err
	}
	b.MoreEvents = more
	for _, h := range d.Holds {
		b.Holds = append(b.Holds, holdView{CaseHold: h, ByWho: book.who(h.By), Member: h.Owner == contract.HoldMember})
	}
	return s.render(w, r, v, http.StatusOK, "case", b, event.CaseHeld, event.CaseReleased, event.CaseClosed, event.BatchApplied, event.ActionApplied, event.ActionCompleted, event.OpAdmitted, event.OpChanged)
}

// pageCaseHold pauses a Case with the member's hold (act pause, with a reason) or
// releases a member's hold (act resume, the hold named by the form), then shows the Case.
func (s *Server) pageCaseHold(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx, id := r.Context(), contract.CaseID(r.PathValue("case"))
	var n notice
	switch r.PathValue("act") {
	case "pause":
		if _, err := s.auth.HoldCase(ctx, v.caller, v.project, id, r.PostFormValue("reason")); err != nil {
			return err
		}
		n = noticeCasePaused
	case "resume":
		if _, err := s.auth.ResumeCase(ctx, v.caller, v.project, id, r.PostFormValue("hold")); err != nil {
			return err
		}
		n = noticeCaseResumed
	default:
		return contract.Errorf(contract.CodeNotFound, "a Case is paused or resumed; %q is neither.", r.PathValue("act"))
	}
	path := "/projects/" + url.PathEscape(string(v.project)) + "/cases/" + url.PathEscape(string(id))
	http.Redirect(w, r, path+"?"+withNotice(nil, n), http.StatusSeeOther)
	return nil
}

// caseTimeline merges Case c's Operations and es, the events naming it, oldest first,
// each event with its actor by name.
func (s *Server) caseTimeline(ctx context.Context, v visit, c contract.Case, es []contract.Event, book nameBook) ([]timelineItem, error) {
	id := c.CaseID
	var out []timelineItem
	if s.opl != nil {
		ops, err := s.opl.OperationList(ctx, v.caller, v.project, "", false)
		if err != nil {
			return nil, err
		}
		var own []contract.OperationInfo
		for _, op := range ops {
			if op.CaseID == id {
				own = append(own, op)
			}
		}
		proposers, err := s.proposers(ctx, v, own)
		if err != nil {
			return nil, err
		}
		for _, op := range own {
			item := timelineItem{ID: "tl-op-" + op.Work + "-" + string(op.State), At: op.At, Kind: "operation", What: op.Work + " " + op.Label,
				State: string(op.State), Detail: op.Reason}
			if p, ok := proposers[op.Agent][op.Ordinal]; ok {
				item.Proposer = p.String()
			}
			out = append(out, item)
		}
	}
	for _, e := range es {
		out = append(out, timelineItem{ID: "tl-ev-" + strconv.FormatInt(e.Seq, 10), At: e.At, Kind: "event", What: e.Type, By: book.whoOf(e.Actor), Seq: e.Seq})
	}
	slices.SortStableFunc(out, func(a, b timelineItem) int { return a.At.Compare(b.At) })
	return out, nil
}

// caseEvents reads the events naming Case c, the latest maxCaseEvents of them, and says
// whether older ones were left out.
func (s *Server) caseEvents(ctx context.Context, v visit, c contract.Case) ([]contract.Event, bool, error) {
	// No event before the Case opened names it: the read starts at the first event of
	// that time, found by bisecting the log, and the filter skips any earlier by its time.
	from, err := s.firstEventAt(ctx, v, c.OpenedAt)
	if err != nil {
		return nil, false, err
	}
	return s.eventsOf(ctx, v.caller, v.project, contract.EventFilter{Case: c.CaseID, Since: c.OpenedAt}, from, maxCaseEvents)
}

// proposers returns, by Agent and Operation ordinal, the model turns that proposed ops,
// read from the conversations their Agents saved (each result names the ordinal of the
// Operation its call became); an Operation no saved turn proposed has none.
func (s *Server) proposers(ctx context.Context, v visit, ops []contract.OperationInfo) (map[contract.AgentID]map[int64]contract.Proposer, error) {
	out := map[contract.AgentID]map[int64]contract.Proposer{}
	for _, op := range ops {
		if _, done := out[op.Agent]; done {
			continue
		}
		byOrdinal := map[int64]contract.Proposer{}
		out[op.Agent] = byOrdinal
		cs, err := s.auth.Conversations(ctx, v.caller, v.project, string(op.Agent))
		if err != nil {
			return nil, err
		}
		for _, sum := range cs {
			c, err := s.auth.Conversation(ctx, v.caller, v.project, string(op.Agent), sum.ID)
			if err != nil {
				return nil, err
			}
			maps.Copy(byOrdinal, contract.ProposersOf(c))
		}
	}
	return out, nil
}

// firstEventAt returns the sequence number before the project's first event at or after
// at, bisecting the log with one-event reads: the log is appended in time order.
func (s *Server) firstEventAt(ctx context.Context, v visit, at time.Time) (int64, error) {
	lo, hi := int64(0), v.head+1 // every event up to lo is before at; hi is at or after it, or past the end
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		es, err := s.auth.Events(ctx, v.caller, v.project, mid-1, 1)
		if err != nil {
			return 0, err
		}
		if len(es) == 1 && es[0].At.Before(at) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// eventsOf reads the events after seq after that f selects, keeping the latest n, and
// says whether older ones were dropped. It reads the log page by page through the
// authority's bounded filter.
func (s *Server) eventsOf(ctx context.Context, c identity.Caller, p contract.ProjectID, f contract.EventFilter, after int64, n int) ([]contract.Event, bool, error) {
	var out []contract.Event
	more := false
	for {
		es, last, err := s.auth.FilterEvents(ctx, c, p, after, maxPage, f, "")
		if err != nil {
			return nil, false, err
		}
		out = append(out, es...)
		if len(out) > n {
			out, more = slices.Clone(out[len(out)-n:]), true
		}
		if last <= after {
			return out, more, nil
		}
		after = last
	}
}
