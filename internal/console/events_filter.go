package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// eventFilterBackend is the part of the authority a filtered page of events needs.
type eventFilterBackend interface {
	FilterEvents(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64, limit int, f contract.EventFilter, agent string) ([]contract.Event, int64, error)
}

// eventFilter reads the event filters of a request: ?type= (repeated or comma-separated),
// ?case=, ?agent= (an id or a name) and ?since= (RFC 3339). It returns the filter, the
// agent reference, and whether any filter was given.
func eventFilter(r *http.Request) (contract.EventFilter, string, bool, error) {
	q := r.URL.Query()
	var f contract.EventFilter
	for _, t := range q["type"] {
		for p := range strings.SplitSeq(t, ",") {
			if p = strings.TrimSpace(p); p != "" {
				f.Types = append(f.Types, p)
			}
		}
	}
	f.Case = contract.CaseID(q.Get("case"))
	agent := q.Get("agent")
	if s := q.Get("since"); s != "" {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return contract.EventFilter{}, "", false, contract.Errorf(contract.CodeInvalidArgument,
				"query parameter since=%q is not an RFC 3339 time such as 2026-12-01T14:00:00Z.", s)
		}
		f.Since = at
	}
	return f, agent, !f.Empty() || agent != "", nil
}

// writeFilteredEvents answers a page of the events f selects; Next is the last event the
// authority looked at, so a client pages on through a log that matches sparsely.
func (s *Server) writeFilteredEvents(w http.ResponseWriter, r *http.Request, after, limit int64, f contract.EventFilter, agent string) error {
	n := int(min(limit, maxPage))
	if n == 0 {
		n = maxPage
	}
	es, last, err := s.auth.FilterEvents(r.Context(), caller(r), project(r), after, n, f, agent)
	if err != nil {
		return err
	}
	p := contract.Page[contract.Event]{Items: es}
	if last > after && (len(es) == n || last-after >= authority.MaxEventScan) {
		p.Next = strconv.FormatInt(last, 10)
	}
	return writeJSON(w, http.StatusOK, p)
}
