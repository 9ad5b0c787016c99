package console

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// Event types of Operations in the project's log.
const (
	evOpAdmitted = "operation.admitted"
	evOpChanged  = "operation.changed"
)

// maxOpsShown bounds the Operations the page lists per Agent, newest first; an unresolved
// one is always among them, as the write gate admits no write while one is unresolved.
const maxOpsShown = 50

// opsBody is what the Operations page shows.
type opsBody struct {
	Agents []agentOps
}

// agentOps is one Agent's Operations, newest first. Version changes whenever one of them
// does, so that a live page replaces the Agent's section then and only then.
type agentOps struct {
	ID, Name string
	Version  int64
	Ops      []opView
}

// opView is one Operation as the Operations page shows it.
type opView struct {
	Work      string // "<agent>.<ordinal>", the name reconcile takes
	Ordinal   int64
	Label     string
	State     contract.OperationState
	StateText string
	Stage     contract.OperationStage
	Why       string
	Since     time.Time
}

// opRecord is the part of an operation event the page reads. The log is the authority's
// own record, so fields the page does not read are ignored rather than refused.
type opRecord struct {
	Agent     string                  `json:"agent"`
	Ordinal   int64                   `json:"ordinal"`
	Tool      string                  `json:"tool"`
	Label     string                  `json:"label"`
	State     contract.OperationState `json:"state"`
	Stage     contract.OperationStage `json:"stage"`
	Decision  string                  `json:"decision"`
	Reason    string                  `json:"reason"`
	ErrorCode contract.Code           `json:"errorCode"`
}

// pageOperations shows every Agent's Operations with their state, stage and the reason
// when one cannot proceed; one that needs a person carries the form that reconciles it.
func (s *Server) pageOperations(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	byAgent, err := s.operations(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	names, err := s.agentNames(ctx, v)
	if err != nil {
		return err
	}
	var b opsBody
	for _, id := range slices.Sorted(maps.Keys(byAgent)) {
		a := byAgent[id]
		a.Name = names[id]
		if a.Name == "" {
			a.Name = id
		}
		slices.Reverse(a.Ops)
		a.Ops = a.Ops[:min(len(a.Ops), maxOpsShown)]
		b.Agents = append(b.Agents, *a)
	}
	return s.render(w, r, v, http.StatusOK, "operations", b, evOpAdmitted, evOpChanged)
}

// operations folds the project's operation events into each Agent's Operations, oldest
// first. The facade has no read of every Agent's Operations for a member, so the page
// reads them from the log, the record the authority's own ledger is a projection of.
func (s *Server) operations(ctx context.Context, c authority.Caller, p contract.ProjectID) (map[string]*agentOps, error) {
	out := map[string]*agentOps{}
	for after := int64(0); ; {
		es, err := s.auth.Events(ctx, c, p, after, maxPage)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			after = e.Seq
			if e.Type != evOpAdmitted && e.Type != evOpChanged {
				continue
			}
			var rec opRecord
			if err := json.Unmarshal(e.Data, &rec); err != nil {
				return nil, fmt.Errorf("read event %d of %s: %w", e.Seq, p, err)
			}
			a := out[rec.Agent]
			if a == nil {
				a = &agentOps{ID: rec.Agent}
				out[rec.Agent] = a
			}
			a.Version = e.Seq
			if e.Type == evOpAdmitted {
				a.Ops = append(a.Ops, opView{Work: rec.Agent + "." + strconv.FormatInt(rec.Ordinal, 10), Ordinal: rec.Ordinal,
					Label: rec.Label, Since: e.At})
			}
			i := rec.Ordinal - 1
			if i < 0 || i >= int64(len(a.Ops)) {
				return nil, fmt.Errorf("read event %d of %s: operation %d of %s was never admitted", e.Seq, p, rec.Ordinal, rec.Agent)
			}
			a.Ops[i].apply(rec, e.At)
		}
		if len(es) < maxPage {
			return out, nil
		}
	}
}

// apply takes the state an operation event gives op.
func (op *opView) apply(rec opRecord, at time.Time) {
	if rec.State != "" && rec.State != op.State {
		op.State, op.Since = rec.State, at
	}
	op.Stage = rec.Stage
	op.StateText = string(op.State)
	switch {
	case op.State == contract.OpWaitingForDecision:
		op.StateText = "waiting for a decision"
		op.Why = "Request " + rec.Decision + " waits on Needs you."
	case rec.Reason != "" && rec.ErrorCode != "":
		op.Why = string(rec.ErrorCode) + ": " + rec.Reason
	case rec.Reason != "":
		op.Why = rec.Reason
	case rec.ErrorCode != "":
		op.Why = string(rec.ErrorCode)
	default:
		op.Why = ""
	}
}

// pageReconcile settles an Operation that needs a person with what the member found,
// through the same Dispatcher call as POST …/operations/{op}/reconcile.
func (s *Server) pageReconcile(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.rec == nil {
		return contract.Errorf(contract.CodeNotFound, "this server reconciles no operations; docket serve does.")
	}
	op := r.PathValue("op")
	in := contract.ReconcileRequest{Outcome: r.PostFormValue("outcome"), Reason: r.PostFormValue("reason")}
	got, err := s.rec.Reconcile(r.Context(), v.caller, v.project, op, in)
	if err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/operations", op+" "+string(got.State)+".")
}
