package console

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// maxOpsShown bounds the Operations the page lists per Agent, newest first; an unresolved
// one is always among them, as the write gate admits no write while one is unresolved.
const maxOpsShown = 50

// opsBody is what the Operations page shows.
type opsBody struct {
	Agents []agentOps
	// ModelFailures are the Agents whose newest finished task failed on its model: such a
	// run makes no call, so no Operation would say why the Agent did nothing.
	ModelFailures []modelFailure
}

// modelFailure is an Agent's newest finished task, failed on its model, with the cause.
type modelFailure struct {
	Agent contract.AgentID
	Name  string
	Task  contract.Task
}

// agentOps is one Agent's Operations, newest first. Version changes whenever one of them
// does, so that a live page replaces the Agent's section then and only then.
type agentOps struct {
	ID, Name string
	Version  string
	Ops      []opView
}

// opView is one Operation as the Operations page shows it.
type opView struct {
	contract.OperationInfo
	StateText string
	Why       string
}

// pageOperations shows every Agent's Operations with their state, stage and the reason
// when one cannot proceed; one that needs a person carries the form that reconciles it.
func (s *Server) pageOperations(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.dec == nil {
		return contract.Errorf(contract.CodeNotFound, "this server lists no operations; docket serve does.")
	}
	ops, err := s.dec.OperationList(r.Context(), v.caller, v.project, "", false)
	if err != nil {
		return err
	}
	g, err := groupOps(ops)
	if err != nil {
		return err
	}
	mf, err := s.modelFailures(r, v)
	if err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "operations", opsBody{Agents: g, ModelFailures: mf}, event.OpAdmitted, event.OpChanged, event.TaskReported)
}

// modelFailures lists, for each Agent, its newest finished task when that failed on its
// model (contract.ModelFailure), in the order of the Agents' ids.
func (s *Server) modelFailures(r *http.Request, v visit) ([]modelFailure, error) {
	ts, err := s.auth.Tasks(r.Context(), v.caller, v.project, "")
	if err != nil {
		return nil, err
	}
	newest := map[contract.AgentID]contract.Task{}
	for _, t := range ts { // oldest first: the last finished one stays
		if t.State.Finished() {
			newest[t.Agent] = t
		}
	}
	var out []modelFailure
	var names map[string]string
	for _, id := range slices.Sorted(maps.Keys(newest)) {
		t := newest[id]
		if t.State != contract.TaskFailed || t.Result == nil || !contract.ModelFailure(t.Result.ErrorCode) {
			continue
		}
		if names == nil {
			if names, err = s.agentNames(r.Context(), v); err != nil {
				return nil, err
			}
		}
		out = append(out, modelFailure{Agent: id, Name: cmp.Or(names[string(id)], string(id)), Task: t})
	}
	return out, nil
}

// groupOps groups ops (oldest first, as the authority lists them) by Agent, in the order
// of the Agents' ids, each Agent's newest first and at most maxOpsShown of them.
func groupOps(ops []contract.OperationInfo) ([]agentOps, error) {
	byAgent := map[contract.AgentID][]opView{}
	names := map[contract.AgentID]string{}
	for _, op := range ops {
		byAgent[op.Agent] = append(byAgent[op.Agent], viewOp(op))
		names[op.Agent] = cmp.Or(op.AgentName, string(op.Agent))
	}
	out := make([]agentOps, 0, len(byAgent))
	for _, id := range slices.Sorted(maps.Keys(byAgent)) {
		vs := byAgent[id]
		slices.Reverse(vs)
		vs = vs[:min(len(vs), maxOpsShown)]
		version, err := fingerprint(vs)
		if err != nil {
			return nil, err
		}
		out = append(out, agentOps{ID: string(id), Name: names[id], Version: version, Ops: vs})
	}
	return out, nil
}

// viewOp says op's state in words and why it cannot proceed, when it cannot.
func viewOp(op contract.OperationInfo) opView {
	v := opView{OperationInfo: op, StateText: string(op.State)}
	switch {
	case op.State == contract.OpWaitingForDecision:
		v.StateText = "waiting for a decision"
		v.Why = "Request " + op.Decision + " waits on Needs you."
	case op.Reason != "" && op.ReasonCode != "":
		v.Why = string(op.ReasonCode) + ": " + op.Reason
	case op.Reason != "":
		v.Why = op.Reason
	case op.ReasonCode != "":
		v.Why = string(op.ReasonCode)
	}
	return v
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
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/operations", reconciledNotices[got.State])
}
