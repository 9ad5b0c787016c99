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

// maxOpsShown bounds the Operations a page lists per Agent, newest first; an unresolved
// one is always among the first, as the write gate admits no write while one is
// unresolved.
const maxOpsShown = 50

// opsBody is what the Operations page shows.
type opsBody struct {
	Agents []agentOps // at most maxOpsAgentsShown
	Pager  pager
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
	Pager    pager // to its older Operations
}

// opView is one Operation as the Operations page shows it.
type opView struct {
	contract.OperationInfo
	StateText string
	Why       string
}

// maxOpsAgentsShown bounds the Agents whose Operations one page of the Operations page
// shows, in the order of their ids; the older link shows the next.
const maxOpsAgentsShown = 20

// pageOperations shows every Agent's Operations with their state, stage and the reason
// when one cannot proceed; one that needs a person carries the form that reconciles it.
// ?agent=ID shows that Agent's alone, and with ?ops_after= its older Operations.
func (s *Server) pageOperations(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.opl == nil {
		return contract.Errorf(contract.CodeNotFound, "this server lists no operations; docket serve does.")
	}
	q := r.URL.Query()
	ops, err := s.opl.OperationList(r.Context(), v.caller, v.project, q.Get("agent"), false)
	if err != nil {
		return err
	}
	path := "/projects/" + url.PathEscape(string(v.project)) + "/operations"
	g, err := groupOps(ops, q, path)
	if err != nil {
		return err
	}
	b := opsBody{}
	list := listPage{Path: path, Param: "after", What: "Agents"}
	if b.Agents, b.Pager, err = pageOf(q, list, g, func(a agentOps) string { return a.ID }, maxOpsAgentsShown); err != nil {
		return err
	}
	if b.ModelFailures, err = s.modelFailures(r, v); err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "operations", b, event.OpAdmitted, event.OpChanged, event.TaskReported)
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
// of the Agents' ids, each Agent's newest first and one page of at most maxOpsShown of
// them: the page after ?ops_after= for the Agent q's ?agent= names, the first for the
// others, each with its pager to the Operations page at path.
func groupOps(ops []contract.OperationInfo, q url.Values, path string) ([]agentOps, error) {
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
		// An Agent's pages are the Operations page of it alone.
		aq := url.Values{"agent": {string(id)}}
		if q.Get("agent") == string(id) && q.Get("ops_after") != "" {
			aq.Set("ops_after", q.Get("ops_after"))
		}
		list := listPage{Path: path, Param: "ops_after", What: "Operations of " + names[id]}
		vs, pg, err := pageOf(aq, list, vs, func(o opView) string { return o.Work }, maxOpsShown)
		if err != nil {
			return nil, err
		}
		version, err := fingerprint(vs)
		if err != nil {
			return nil, err
		}
		out = append(out, agentOps{ID: string(id), Name: names[id], Version: version, Ops: vs, Pager: pg})
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
