package console

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// maxWorkShown bounds the recent claims the Workers page lists, newest first.
const maxWorkShown = 20

// workersBody is what the Workers page shows: each live Connection with its lease, Tools
// and Sources, and the work claimed lately with its report.
type workersBody struct {
	Workers []workerView // newest Connection first, at most maxRowsShown
	Pager   pager
	Work    []workView
	Version string // changes whenever the claims or reports do
}

// workerView is one Connection on the Workers page with each of its leases.
type workerView struct {
	contract.WorkerStatus
	Leases  []leaseView // every slot, one per worker process that polled
	Version string
}

// leaseView is one lease slot of a Connection with when the log recorded its grant and
// when its worker last renewed it, each nil when unknown.
type leaseView struct {
	contract.WorkerLease
	Acquired *time.Time
	Renewed  *time.Time
}

// leaseClock is the part of the Dispatcher that says how long a lease lasts from its last
// renewal, so that the page can say when that was.
type leaseClock interface {
	LeaseTTL() time.Duration
}

// workView is one claim of work and its report, when there is one, with the Operation's
// state now.
type workView struct {
	Work       string
	Label      string
	Tool       string
	Connection string // its name
	WorkerID   string
	Generation int64
	Source     string
	ClaimedAt  time.Time
	Reported   *time.Time
	Outcome    string // what the report said: "reported", or its error code; "" before a report
	Teaching   string
	State      contract.OperationState // the Operation's state now; "" when it is not listed
}

// pageWorkers shows the project's workers: each live Connection's lease (instance,
// generation, expiry), its locked Tools with their digests and its Sources' public parts,
// then the work claimed lately and how it was reported.
func (s *Server) pageWorkers(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	ws, err := s.auth.Workers(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	head := v.head // where the page's stream starts: what it lists ends there
	// The recent part of the log, as far back as one filtered read looks.
	es, _, err := s.auth.FilterEvents(ctx, v.caller, v.project, max(0, head-authority.MaxEventScan), authority.MaxEventPage,
		contract.EventFilter{Types: []string{event.LeaseAcquired, event.WorkClaimed, event.WorkReported}}, "")
	if err != nil {
		return err
	}
	ops := map[string]contract.OperationInfo{}
	if s.opl != nil {
		list, err := s.opl.OperationList(ctx, v.caller, v.project, "", false)
		if err != nil {
			return err
		}
		for _, op := range list {
			ops[op.Work] = op
		}
	}
	names := map[contract.ConnectionID]string{}
	for _, ws := range ws {
		names[ws.Connection.ID] = ws.Connection.Name
	}
	acquired := map[leaseKey]time.Time{}
	var work []workView
	byWork := map[string]int{}
	for _, e := range es {
		switch e.Type {
		case event.LeaseAcquired:
			l, err := decodeEvent[event.LeaseAcquiredData](e)
			if err != nil {
				return err
			}
			acquired[leaseKey{l.Connection, l.WorkerID, l.Generation}] = e.At
		case event.WorkClaimed:
			c, err := decodeEvent[event.WorkClaimedData](e)
			if err != nil {
				return err
			}
			wv := workView{Work: c.Work, Connection: names[c.Connection], WorkerID: c.WorkerID, Generation: c.Generation, ClaimedAt: e.At}
			if wv.Connection == "" {
				wv.Connection = string(c.Connection)
			}
			if c.Source != nil {
				wv.Source = c.Source.Name
			}
			byWork[c.Work] = len(work)
			work = append(work, wv)
		case event.WorkReported:
			rep, err := decodeEvent[event.WorkReportedData](e)
			if err != nil {
				return err
			}
			i, ok := byWork[rep.Work]
			if !ok {
				continue // claimed before the part of the log read
			}
			at := e.At
			work[i].Reported, work[i].Outcome, work[i].Teaching = &at, "reported", rep.Teaching
			if rep.Code != "" {
				work[i].Outcome = string(rep.Code)
			}
			if rep.Judged {
				work[i].Outcome += " (judged: the lease was lost, nothing applied)"
			}
		}
	}
	slices.Reverse(work)
	work = work[:min(len(work), maxWorkShown)]
	for i := range work {
		if op, ok := ops[work[i].Work]; ok {
			work[i].Label, work[i].Tool, work[i].State = op.Label, op.ExecTool, op.State
		}
	}
	b := workersBody{Work: work}
	if b.Version, err = fingerprint(work); err != nil {
		return err
	}
	ws = newestFirst(ws, func(st contract.WorkerStatus) (time.Time, string) {
		return st.Connection.CreatedAt, string(st.Connection.ID)
	})
	list := listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/workers", Param: "after", What: "Connections"}
	if ws, b.Pager, err = pageOf(r.URL.Query(), list, ws, func(st contract.WorkerStatus) string { return string(st.Connection.ID) }, maxRowsShown); err != nil {
		return err
	}
	for _, st := range ws {
		wv := workerView{WorkerStatus: st}
		for _, l := range st.Leases {
			lv := leaseView{WorkerLease: l}
			if at, ok := acquired[leaseKey{st.Connection.ID, l.WorkerID, l.Generation}]; ok {
				lv.Acquired = &at
			}
			if lc, ok := s.rec.(leaseClock); ok && l.ExpiresAt != nil {
				at := l.ExpiresAt.Add(-lc.LeaseTTL())
				lv.Renewed = &at
			}
			wv.Leases = append(wv.Leases, lv)
		}
		if wv.Version, err = fingerprint(wv); err != nil {
			return err
		}
		b.Workers = append(b.Workers, wv)
	}
	return s.render(w, r, v, http.StatusOK, "workers", b, event.LeaseAcquired, event.LeaseReleased, event.WorkClaimed, event.WorkReported,
		event.WorkerRuntimeReported)
}

// leaseKey names one grant of a lease: its Connection, worker instance and generation.
type leaseKey struct {
	conn   contract.ConnectionID
	worker string
	gen    int64
}

// decodeEvent decodes the data of e, which the caller knows to be of the type whose
// payload is T, through the catalog.
func decodeEvent[T event.Payload](e contract.Event) (T, error) {
	var zero T
	p, err := event.Decode(e.Type, e.Data)
	if err != nil {
		return zero, fmt.Errorf("read event %d of %s: %w", e.Seq, e.Project, err)
	}
	d, ok := p.(T)
	if !ok {
		return zero, fmt.Errorf("read event %d of %s: a %s event is not a %s", e.Seq, e.Project, e.Type, zero.EventType())
	}
	return d, nil
}

// fingerprint names what a live page shows of v, so that its section is replaced when v
// changed, and only then.
func fingerprint(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("fingerprint a page section: %w", err)
	}
	h := fnv.New64a()
	h.Write(b) // a hash never fails to write
	return strconv.FormatUint(h.Sum64(), 36), nil
}
