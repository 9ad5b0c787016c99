package console

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// Bounds of the Events page.
const (
	eventsShown    = 50     // events on one page
	eventsWindow   = 500    // events one backward read looks at
	maxEventsBack  = 20_000 // events a page looks at, backward, for a sparse filter
	maxEventsAhead = 20_000 // the same, forward
)

// eventsBody is what the Events page shows: the filters, one page of the events they
// keep (newest first), the links to the pages beside it and, when asked, the chain check.
type eventsBody struct {
	Type, Case, Agent, Actor string
	Types                    []string
	Events                   []eventRow
	Older, Newer             string // links; "" when there is nothing that way
	Latest                   bool   // the page is the log's end and follows it live
	Searched                 int64  // the oldest event looked at, when the bound cut the search
	Chain                    *contract.ChainReport
}

// eventRow is one event on the Events page, with its actor by name.
type eventRow struct {
	contract.Event
	By who
}

// pageEvents tails the project's log: the latest events, or the page ?after= or ?before=
// a sequence number, kept by the filters ?type=, ?case=, ?agent= (an id or name) and
// ?actor=; with ?check=1 it also verifies the hash chain.
func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	q := r.URL.Query()
	b := eventsBody{Type: q.Get("type"), Case: q.Get("case"), Agent: q.Get("agent"), Actor: q.Get("actor"), Types: authority.EventTypes()}
	keep, err := s.eventKeeper(ctx, v, b)
	if err != nil {
		return err
	}
	after, err := queryInt(r, "after")
	if err != nil {
		return err
	}
	before, err := queryInt(r, "before")
	if err != nil {
		return err
	}
	head := v.head // where the page's stream starts: what it lists ends there
	var es []contract.Event
	if after > 0 {
		es, err = s.eventsAfter(ctx, v, keep, after)
		slices.Reverse(es)
	} else {
		if before == 0 || before > head {
			before, b.Latest = head+1, true
		}
		es, b.Searched, err = s.eventsBefore(ctx, v, keep, before)
	}
	if err != nil {
		return err
	}
	actors := make([]contract.Principal, 0, len(es))
	for _, e := range es {
		actors = append(actors, contract.Principal(e.Actor))
	}
	book, err := s.names(ctx, v, actors...)
	if err != nil {
		return err
	}
	for _, e := range es {
		b.Events = append(b.Events, eventRow{Event: e, By: book.whoOf(e.Actor)})
	}
	filters := b.filterQuery()
	if n := len(es); n > 0 {
		if oldest := es[n-1].Seq; oldest > 1 {
			b.Older = eventsHref(v.project, filters, "before", oldest)
		}
		if newest := es[0].Seq; newest < head {
			b.Newer = eventsHref(v.project, filters, "after", newest)
		}
	} else if after > 1 {
		b.Older = eventsHref(v.project, filters, "before", after+1)
	}
	if b.Searched > 1 {
		b.Older = eventsHref(v.project, filters, "before", b.Searched)
	}
	if q.Get("check") == "1" {
		rep, err := s.auth.VerifyEvents(ctx, v.caller, v.project)
		if err != nil {
			return err
		}
		b.Chain, b.Latest = &rep, false
	}
	var live []string
	if b.Latest {
		// render follows the Request events on every page already.
		live = slices.DeleteFunc(authority.EventTypes(), func(t string) bool { return t == event.RequestCreated || t == event.RequestChanged })
	}
	return s.render(w, r, v, http.StatusOK, "events", b, live...)
}

// filterQuery is the page's filters as a query string, for its links.
func (b eventsBody) filterQuery() url.Values {
	q := url.Values{}
	for k, val := range map[string]string{"type": b.Type, "case": b.Case, "agent": b.Agent, "actor": b.Actor} {
		if val != "" {
			q.Set(k, val)
		}
	}
	return q
}

// eventsHref links to the Events page at cursor dir=seq under filters.
func eventsHref(p contract.ProjectID, filters url.Values, dir string, seq int64) string {
	q := url.Values{}
	for k, vs := range filters {
		q[k] = vs
	}
	q.Set(dir, strconv.FormatInt(seq, 10))
	return "/projects/" + url.PathEscape(string(p)) + "/events?" + q.Encode()
}

// eventsAfter reads the first eventsShown events after seq after that keep selects,
// oldest first, looking at no more than maxEventsAhead events.
func (s *Server) eventsAfter(ctx context.Context, v visit, keep func(contract.Event) bool, after int64) ([]contract.Event, error) {
	var out []contract.Event
	for from := after; len(out) < eventsShown && from-after < maxEventsAhead; {
		es, err := s.auth.Events(ctx, v.caller, v.project, from, eventsWindow)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if keep(e) && len(out) < eventsShown {
				out = append(out, e)
			}
		}
		if len(es) < eventsWindow {
			break
		}
		from = es[len(es)-1].Seq
	}
	return out, nil
}

// eventsBefore reads the last eventsShown events before seq before that keep selects,
// newest first, a window at a time, looking at no more than maxEventsBack events. When
// that bound ends the search before the log's start, searched is the oldest event looked
// at, for a link to search on from; else it is 0.
func (s *Server) eventsBefore(ctx context.Context, v visit, keep func(contract.Event) bool, before int64) (out []contract.Event, searched int64, err error) {
	for hi := before; hi > 1 && len(out) < eventsShown; {
		if before-hi >= maxEventsBack {
			return out, hi, nil
		}
		lo := max(0, hi-1-eventsWindow)
		es, err := s.auth.Events(ctx, v.caller, v.project, lo, int(hi-1-lo))
		if err != nil {
			return nil, 0, err
		}
		for _, e := range slices.Backward(es) {
			if e.Seq < hi && keep(e) && len(out) < eventsShown {
				out = append(out, e)
			}
		}
		hi = lo + 1
	}
	return out, 0, nil
}

// eventKeeper returns what selects the events the page's filters keep: f, and the actor
// as given. An Agent named by its name is found by it.
func (s *Server) eventKeeper(ctx context.Context, v visit, b eventsBody) (func(contract.Event) bool, error) {
	var f contract.EventFilter
	if b.Type != "" {
		f.Types = []string{b.Type}
	}
	f.Case = contract.CaseID(b.Case)
	if b.Agent != "" {
		f.Agent = contract.AgentID(b.Agent)
		names, err := s.agentNames(ctx, v)
		if err != nil {
			return nil, err
		}
		for id, name := range names {
			if name == b.Agent {
				f.Agent = contract.AgentID(id)
			}
		}
	}
	return func(e contract.Event) bool { return (b.Actor == "" || e.Actor == b.Actor) && f.Match(e) }, nil
}
