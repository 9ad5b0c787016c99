package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// requestPrefix starts every Request id.
const requestPrefix = "req_"

// RequestDigest returns "sha256:" + hex(sha256(JCS(v))), the digest a Request is bound to
// and a decision must name. JCS (RFC 8785) makes the digest independent
// of key order and number spelling, so any client can recompute it from the vector.
func RequestDigest(v contract.RequestVector) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode request vector: %w", err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("canonicalize request vector: %w", err)
	}
	return contract.Sum(canon).String(), nil
}

// runAction runs an ApplyAction call. An Action that needs a person's decision changes
// nothing: its Operation waits for a decision on a Request bound to the digest of what
// would run. An executed Action is queued for dispatch (its Operation stays running,
// not_dispatched, until a worker takes it). A Board-only Action applies its effects.
//
// Whether an Action needs a decision comes from the Board (or from the Agent's level: a
// manual Agent's every Action waits for a person): for an executed Action, from
// the ExecutionRequest its evaluation returns (evaluating it changes nothing); for a
// Board-only Action, from the View, which lists it ready and waiting on a decision.
// A Board-only Action is applied only when the View lists it ready without a decision.
func (o *Operations) runAction(ctx context.Context, b *board.Board, c identity.Caller, in *contract.ApplyActionInput, setup board.Setup, conns []*connRecord, now time.Time, r toolRun) toolRun {
	by := board.Author{Principal: c.Principal()}
	var focus []contract.CaseID
	if in.CaseID != "" {
		focus = []contract.CaseID{in.CaseID}
	}
	v := b.View(board.ViewRequest{Principal: c.Principal(), Focus: focus, Setup: setup})
	i := slices.IndexFunc(v.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == in.Action })
	switch {
	case i >= 0 && v.Actions.Items[i].State == contract.ActionReady && !slices.Contains(v.Actions.Items[i].Waits, contract.WaitExecution):
		if r.person || slices.Contains(v.Actions.Items[i].Waits, contract.WaitDecision) {
			vec, err := boardOnlyVector(b, by, in)
			if err != nil {
				return settleRun(r, nil, err)
			}
			return o.requestRun(c, vec, now, r)
		}
		res, err := b.ApplyAction(by, in.CaseID, in.Action, in.Params)
		if err != nil {
			return settleRun(r, nil, err)
		}
		r.change = actionChange(in, res)
		return settleRun(r, map[string]any{"action": in.Action, "changes": len(res.Changes)}, nil)
	}
	// An executed Action, or one the View lists blocked or not at all (past its bound: a
	// project's direct Actions may be many): a dry run gives the refusal, or the
	// ExecutionRequest to queue. A Board-only Action the View does not list ready is
	// refused without touching the Board.
	req, err := b.Evaluate(by, in.CaseID, in.Action, in.Params)
	if err != nil {
		return settleRun(r, nil, err)
	}
	if req.Tool == "" && i < 0 && v.Actions.Truncated {
		return settleRun(r, nil, contract.Errorf(contract.CodeActionBlocked,
			"the Action %s is not among the Actions the View lists; focus its Case and apply it from there", in.Action))
	}
	if req.Tool == "" {
		return settleRun(r, nil, contract.Errorf(contract.CodeActionBlocked,
			"the Action %s is not ready in the View; apply it once the View lists it ready", in.Action))
	}
	if r.person || req.Approval != board.ApprovalNone {
		return o.requestRun(c, executionVector(conns, in, &req), now, r)
	}
	r.op.State, r.op.Stage, r.op.Execution = contract.OpRunning, contract.StageNotDispatched, &req
	return r
}

// boardOnlyVector returns the request vector of a Board-only Action: the Action and its
// exact arguments after bindings as the Board evaluates the call now,
// so a person approves the values the Board's premises supply and not only the caller's
// params. Evaluating changes nothing.
func boardOnlyVector(b *board.Board, by board.Author, in *contract.ApplyActionInput) (contract.RequestVector, error) {
	req, err := b.Evaluate(by, in.CaseID, in.Action, in.Params)
	if err != nil {
		return contract.RequestVector{}, err
	}
	if req.Tool != "" {
		return contract.RequestVector{}, contract.Errorf(contract.CodeCallChanged,
			"the Action %s now executes a Tool; call it again for a new decision", in.Action)
	}
	return contract.RequestVector{Action: in.Action, CaseID: in.CaseID, Args: req.Args}, nil
}

// executionVector returns the request vector of an executed Action: the exact arguments
// after bindings, the Tool, and — when the project's setup fixes them — the digest the
// Tool is locked at and the Source record it runs against. When several
// Connections could run it at different digests or Sources, they are left empty; the
// dispatcher must then still run only what a person approved. conns are the project's
// live Connections as the operation ledger holds them ([ledger.liveConnsLocked]).
func executionVector(conns []*connRecord, in *contract.ApplyActionInput, req *contract.ExecutionRequest) contract.RequestVector {
	vec := contract.RequestVector{Action: in.Action, CaseID: in.CaseID, Args: req.Args, Tool: req.Tool}
	named := ""
	if v, ok := req.Args["source"]; ok && v.Kind() == contract.ValueString {
		named = v.Str()
	}
	var digests, sources []string
	for _, cn := range conns {
		lk, ok := cn.lock(req.Tool)
		if !ok {
			continue
		}
		if !slices.Contains(digests, lk.Digest) {
			digests = append(digests, lk.Digest)
		}
		for _, src := range cn.sources {
			rec := sourceRecord(src)
			if slices.Contains(req.SourceTypes, src.Type) && (named == "" || src.Name == named) && !slices.Contains(sources, rec) {
				sources = append(sources, rec)
			}
		}
	}
	if len(digests) == 1 {
		vec.ToolDigest = digests[0]
	}
	if len(sources) == 1 {
		vec.Source = sources[0]
	}
	return vec
}

// boardActVector returns the request vector of agent's Board act (OpenCase, ApplyBatch or
// CloseCase) in project: the call, the project, the Agent and the arguments as decoded,
// re-encoded; a CloseCase names its Case. Nothing of it is evaluated: the act is checked
// by the Board when a member's approval runs it.
func boardActVector(project contract.ProjectID, agent, tool string, input any) (contract.RequestVector, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return contract.RequestVector{}, fmt.Errorf("encode the arguments of %s: %w", tool, err)
	}
	vec := contract.RequestVector{Args: contract.Args{}, Call: tool, Project: project, Agent: contract.AgentID(agent), Input: raw}
	if in, ok := input.(*contract.CloseCaseInput); ok {
		vec.CaseID = in.CaseID
	}
	return vec, nil
}

// manualOnly is why only a member decides a manual Agent's request.
const manualOnly = "the Agent is at level manual, so every write it makes needs a member's decision"

// requestRun makes r an Operation waiting for a decision on a new Request for vec. A
// manual Agent's (r.person) is a member's alone to decide: manual means a person makes
// every write, and an orchestrator is an Agent.
func (o *Operations) requestRun(c identity.Caller, vec contract.RequestVector, now time.Time, r toolRun) toolRun {
	req, err := o.newRequest(c.Projects[0], c.Principal(), vec, now)
	if err != nil {
		return settleRun(r, nil, err)
	}
	if r.person {
		req.MemberOnly = manualOnly
	}
	req.TaskBy = slices.Clone(r.taskBy)
	r.request = req
	r.op.State, r.op.Decision = contract.OpWaitingForDecision, string(req.ID)
	return r
}

// actionChange is the Board change of a Board-only Action's effects.
func actionChange(in *contract.ApplyActionInput, res board.ActionResult) *boards.Change {
	ch := &boards.Change{Nodes: res.Changes, Event: event.ActionAppliedData{Action: in.Action, CaseID: in.CaseID, Params: in.Params}}
	if res.Case != nil {
		ch.Cases = []contract.Case{*res.Case}
	}
	return ch
}

// newRequest returns a pending Request of by in project, bound to vec's digest.
func (o *Operations) newRequest(project contract.ProjectID, by contract.Principal, vec contract.RequestVector, now time.Time) (*contract.Request, error) {
	digest, err := RequestDigest(vec)
	if err != nil {
		return nil, err
	}
	id, err := identity.NewID(o.rand, requestPrefix)
	if err != nil {
		return nil, err
	}
	return &contract.Request{ID: contract.RequestID(id), Project: project, RequestedBy: by, Vector: vec,
		Digest: digest, State: contract.RequestPending, CreatedAt: now, Deadline: now.Add(o.requestTTL)}, nil
}

// raise records r in tx: the row a decision on it must reference (the store holds a
// decision to its digest and requester, and a recovery or member-only request to a
// member's decision) and its request.created event.
func raise(ctx context.Context, tx store.Tx, r *contract.Request) error {
	if err := tx.RecordRequest(ctx, store.Request{Project: string(r.Project), ID: string(r.ID), Digest: r.Digest,
		RequestedBy: string(r.RequestedBy), At: r.CreatedAt, MemberOnly: r.Recovery || r.MemberOnly != ""}); err != nil {
		return fmt.Errorf("record request %s: %w", r.ID, err)
	}
	return eventlog.Append(ctx, tx, r.Project, r.RequestedBy, r.CreatedAt, event.RequestCreatedData{Request: *r})
}
