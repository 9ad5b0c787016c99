package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Requests lists project's Requests, oldest first, for a member. A
// pending Request that no longer takes a decision (past its deadline, or its Agent
// revoked or re-tokened) is shown expired, with why. It is read from the ledger's
// snapshot ([Operations.memberSnapshot]).
func (o *Operations) Requests(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Request, error) {
	s, err := o.memberSnapshot(ctx, c, project)
	if err != nil {
		return nil, err
	}
	return s.requestList(o.nowUTC()), nil
}

// Decide records member c's decision on Request id of project. It
// refuses a decision naming another digest than the Request's (digest_mismatch), a
// decision by the principal that made the Request (self_decision), and a Request already
// decided or void, past its deadline, or made by an Agent revoked or re-tokened since
// (request_closed; one that no longer takes a decision is marked expired).
//
// A denial settles the Operation refused with the reason. An approval runs the one call
// it names, after the Board evaluates it again — if the call no longer evaluates to the
// approved digest, the Request is void and the Operation refused (call_changed); else a
// Board-only Action applies its effects now and an executed Action is queued for
// dispatch.
func (o *Operations) Decide(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.RequestID, d contract.Decision) (contract.Request, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Request{}, err
	}
	if d.Verdict != contract.VerdictApprove && d.Verdict != contract.VerdictDeny {
		return contract.Request{}, contract.Errorf(contract.CodeInvalidArgument, "the verdict %q is unknown; use approve or deny", d.Verdict)
	}
	var authorize authorizer
	if c.IsDelegate() {
		// A member's delegate decides, as itself, only what the delegation policy in force
		// covers (operational); the console records a card for the rest.
		authorize = delegated(c.Principal())
	}
	return o.decide(ctx, c.Principal(), project, id, d, checks{self: true, digest: true}, authorize)
}

// DelegateCovers reports whether the delegation policy in force covers pending Request id
// of project, so that delegate c may decide it itself; a Request it could not decide —
// missing, closed, expired, recovery, member-only, its own, or not covered — is false with
// no error. The Request is read from the ledger's snapshot ([Operations.memberSnapshot]),
// so the check never waits for a write holding the ledger's lock across its transaction.
func (o *Operations) DelegateCovers(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.RequestID) (bool, error) {
	s, err := o.memberSnapshot(ctx, c, project)
	if err != nil {
		return false, err
	}
	e, ok := s.request(id)
	if !ok || e.r.State != contract.RequestPending || expiryOf(e.r, e.ended, o.nowUTC()) != "" {
		return false, nil
	}
	req := *e.r
	version, pol, err := o.inForce(ctx, nil, project, contract.PolicyDelegation)
	if err != nil {
		return false, err
	}
	_, err = delegated(c.Principal())(&req, version, pol)
	return err == nil, nil
}

// checks are the domain's checks of a decision that a caller of decide asks for; the
// store's checks on the decision row hold the same rules whichever are asked
// ([recordDecision]).
type checks struct {
	// self refuses a decision by the principal that made the Request (self_decision).
	// Who made a Request never changes, so a pending Request read at the write's head
	// settles it; a Request missing or no longer pending is refused as such first.
	self bool
	// digest refuses a decision naming another digest than the Request's
	// (digest_mismatch).
	digest bool
}

// decide records a decision by by. Everything it decides on is read under the write
// sequence's locks, so it may run again on a rebuilt Board.
// chk says which of the domain's own checks run: a test skips them to show the store
// alone refuses such a decision. authorize, when not nil, checks under the same locks
// that by may decide the request under the delegation policy in force.
func (o *Operations) decide(ctx context.Context, by contract.Principal, project contract.ProjectID, id contract.RequestID, d contract.Decision, chk checks, authorize authorizer) (contract.Request, error) {
	var out contract.Request
	err := o.boards.Write(ctx, project, "decide "+string(id), func(w *boards.Write) error {
		req, err := o.decideOnce(ctx, w, by, id, d, chk, authorize)
		out = req
		return err
	})
	// decideOnce returns the Request with its refusal only when the Request expired, and
	// the zero Request with any other error.
	return out, err
}

func (o *Operations) decideOnce(ctx context.Context, w *boards.Write, by contract.Principal, id contract.RequestID, d contract.Decision, chk checks, authorize authorizer) (contract.Request, error) {
	project, b := w.Project(), w.Board()
	l := o.ledger(project)
	l.lockAlong(w.Held())
	defer l.unlock()
	// What the decision reads before its transaction — the Request, its Operation, the
	// delegation policy in force — is read at the head the Board was caught up to when the
	// write began, read once (as an admission's gate does): a read made during the call.
	// The store's checks on the decision row, in the transaction, hold that the Request is
	// still undecided and the decider may decide it (docs/architecture.md, "Decisions that
	// hold").
	rctx := eventlog.WithHead(ctx, project, w.Seq())
	if err := l.catchUpToLocked(ctx, o.store, w.Seq()); err != nil {
		return contract.Request{}, err
	}
	cur, ok := l.requests[id]
	if !ok {
		return contract.Request{}, contract.Errorf(contract.CodeNotFound, "project %q has no request %q; list them with docket requests.", project, id)
	}
	req := *cur
	if req.State != contract.RequestPending {
		return contract.Request{}, contract.Errorf(contract.CodeRequestClosed, "request %s is %s and takes no decision; a new call makes a new request.", id, req.State)
	}
	if chk.self && req.RequestedBy == by {
		return contract.Request{}, contract.Errorf(contract.CodeSelfDecision, "no principal decides its own request; ask another member to decide %s.", id)
	}
	if chk.digest && d.Digest != req.Digest {
		return contract.Request{}, errDigestMismatch(id, nil)
	}
	version, pol, err := o.inForce(rctx, l, project, contract.PolicyDelegation)
	if err != nil {
		return contract.Request{}, err
	}
	var delegated *contract.DelegatedBy
	if authorize != nil {
		if delegated, err = authorize(&req, version, pol); err != nil {
			return contract.Request{}, err
		}
	}
	if req.Recovery && l.expiryLocked(&req, o.nowUTC()) == "" {
		req.Policy = version
		return o.decideRecoveryLocked(ctx, w, l, by, req, d, version)
	}
	agent := req.RequestedBy.ID()
	op := l.opLocked(agent, req.Ordinal)
	if op == nil && !req.Recovery {
		return contract.Request{}, fmt.Errorf("request %s names operation %d of %s, which the log lacks", id, req.Ordinal, agent)
	}
	now := o.nowUTC()
	req.DecidedBy, req.DecidedAt, req.Policy, req.Delegated = by, &now, version, delegated
	var ch *boards.Change
	ev := event.Operation{Agent: agent, Ordinal: req.Ordinal, Decision: string(d.Verdict)}
	var closed error
	var ask *askPlan // an approved docket.ask's task, posted with the decision
	switch why := l.expiryLocked(&req, now); {
	case why != "":
		expire(&req, &ev, why, l.endCodeLocked(id))
		closed = contract.Errorf(l.endCodeLocked(id), "request %s no longer takes a decision (%s); the agent must call again.", id, why)
	case d.Verdict == contract.VerdictDeny:
		req.State, req.Reason = contract.RequestDenied, d.Reason
		ev.State, ev.Reason = contract.OpRefused, "denied: "+d.Reason
		var err error
		if ev.Result, err = json.Marshal(map[string]string{"decision": "denied", "reason": d.Reason}); err != nil {
			return contract.Request{}, fmt.Errorf("encode the denial of request %s: %w", id, err)
		}
	case req.Vector.Action == contract.ActionAsk:
		req.State, req.Reason = contract.RequestApproved, d.Reason
		ask, ev = o.approvedAsk(ctx, l, &req, ev)
	default:
		req.State, req.Reason = contract.RequestApproved, d.Reason
		ch, ev = o.runApproved(ctx, b, &req, op, l.liveConnsLocked(), ev)
	}
	before := func(tx store.Tx) error {
		if closed != nil {
			return nil
		}
		return recordDecision(ctx, tx, store.Decision{Project: string(project), Request: string(id), Digest: d.Digest,
			RequestedBy: string(req.RequestedBy), DecidedBy: string(by), Verdict: string(d.Verdict), At: now})
	}
	after := func(tx store.Tx) error {
		if err := eventlog.Append(ctx, tx, project, by, now, event.RequestChangedData{Request: req}); err != nil {
			return err
		}
		if op == nil { // an expired recovery request moves no Operation of its requester
			return nil
		}
		if err := eventlog.Append(ctx, tx, project, by, now, event.OpChangedData(ev)); err != nil {
			return err
		}
		if ask != nil {
			return o.postAsked(ctx, l, tx, project, req.RequestedBy, *ask, req.Ordinal, now)
		}
		return nil
	}
	// The one commit function of an Operation's life, inside the Board's write sequence.
	// A decision that changes the Board locks the head (LockFresh checks the Board there);
	// one that does not decides at the head the Board was read at, as it did, since the
	// store's checks on its row hold it at the commit (docs/architecture.md, "Decisions
	// that hold"), and reads no head again. Either way the ledger applies the decision
	// from memory after the commit.
	spec := commitSpec{project: project, bw: w, at: now, by: req.RequestedBy,
		wrap: func(err error) error { return fmt.Errorf("decide %s: %w", id, eventlog.Refuse(err, "request")) }}
	if ch != nil {
		spec.lockHead = true
	} else {
		spec.knownHead = l.seq()
	}
	err = o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
		wc.change = ch // first: a refusal below drops the Board it changed
		// Under the head lock the ledger is caught up with what committed since the
		// Board was read: a Request decided meanwhile runs the write sequence again,
		// which answers it as it now stands.
		if cur := l.requests[id]; cur == nil || cur.State != contract.RequestPending {
			return errDecidedFirst
		}
		wc.writes = append(wc.writes, before, after)
		return nil
	})
	if err != nil {
		return contract.Request{}, err
	}
	if closed != nil {
		return req, closed
	}
	return req, nil
}

// errDecidedFirst refuses a decision because another instance decided the Request after
// the decision read the ledger, as the ledger caught up inside its transaction shows. The
// write sequence runs the decision again, which refuses it as the Request now stands.
var errDecidedFirst = fmt.Errorf("the request was decided in another instance: %w", boards.ErrWroteFirst)

// recordDecision records d through the store, whose checks hold the rules of a decision
// even where the checks above are bypassed: only a member or an orchestrator decides,
// never its own request, only on the digest the request is bound to, and once.
func recordDecision(ctx context.Context, tx store.Tx, d store.Decision) error {
	err := tx.RecordDecision(ctx, d)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrInvalid) && d.DecidedBy == d.RequestedBy:
		return &contract.Error{Code: contract.CodeSelfDecision, Err: err,
			Teaching: "no principal decides its own request; ask another member to decide " + d.Request + "."}
	case errors.Is(err, store.ErrInvalid):
		return &contract.Error{Code: contract.CodeForbidden, Err: err,
			Teaching: "only a member of the project, or an orchestrator a delegation covers, decides a request; sign in as a member to decide " + d.Request + "."}
	case errors.Is(err, store.ErrNotFound):
		return errDigestMismatch(contract.RequestID(d.Request), err)
	case errors.Is(err, store.ErrConflict):
		return &contract.Error{Code: contract.CodeRequestClosed, Err: err,
			Teaching: "request " + d.Request + " was decided already; a new call makes a new request."}
	}
	return err
}

// errDigestMismatch refuses a decision that names another digest than Request id is
// bound to. It names the mismatch, never the digest: a decider must read the request to
// decide it, not copy a digest out of a refusal.
func errDigestMismatch(id contract.RequestID, cause error) error {
	return &contract.Error{Code: contract.CodeDigestMismatch, Err: cause,
		Teaching: "the decision names a digest other than the one request " + string(id) + " is bound to; read the request again (docket requests) and decide what it shows."}
}

// runApproved runs the one call an approval names, on b, as the requesting agent.
func (o *Operations) runApproved(ctx context.Context, b *board.Board, req *contract.Request, op *operation, conns []*connRecord, ev event.Operation) (*boards.Change, event.Operation) {
	if req.Vector.Action == contract.ActionHook { // the coding agent runs it, told by its waiting hook
		ev.State, ev.Result = contract.OpDone, json.RawMessage(`{"allowed":true,"decision":"approved"}`)
		return nil, ev
	}
	if req.Vector.Call != "" {
		return runApprovedAct(b, req, op, ev)
	}
	var in contract.ApplyActionInput
	if err := json.Unmarshal(op.input, &in); err != nil {
		ev.State, ev.ErrorCode, ev.Reason, ev.Result = contract.OpFailed, contract.CodeInternal, "the recorded call could not be read", nil
		return nil, ev
	}
	by := board.Author{Principal: req.RequestedBy}
	void := func(err error) (*boards.Change, event.Operation) {
		req.State = contract.RequestVoid
		ev.State = contract.OpRefused
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(err)
		return nil, ev
	}
	if req.Vector.Tool != "" {
		res, err := b.ApplyAction(by, in.CaseID, in.Action, in.Params)
		if err != nil {
			return void(err)
		}
		if res.Request == nil {
			return void(contract.Errorf(contract.CodeCallChanged, "the Action %s no longer executes a Tool; call it again for a new decision", in.Action))
		}
		vec := executionVector(conns, &in, res.Request)
		if digest, err := RequestDigest(vec); err != nil || digest != req.Digest {
			return void(contract.Errorf(contract.CodeCallChanged, "the call %s no longer evaluates to the approved arguments, Tool digest or Source; call it again for a new decision", in.Action))
		}
		ev.State, ev.Stage, ev.Execution = contract.OpRunning, contract.StageNotDispatched, res.Request
		if ev.TraceParent = op.traceParent; ev.TraceParent == "" {
			ev.TraceParent = traceParent(ctx)
		}
		return nil, ev
	}
	// A Board-only Action runs only if the call still evaluates to the arguments the
	// person approved: a bound premise revised since the request voids the approval.
	vec, err := boardOnlyVector(b, by, &in)
	if err != nil {
		return void(err)
	}
	if digest, err := RequestDigest(vec); err != nil || digest != req.Digest {
		return void(contract.Errorf(contract.CodeCallChanged, "the call %s no longer evaluates to the approved arguments; call it again for a new decision", in.Action))
	}
	res, err := b.ApplyAction(by, in.CaseID, in.Action, in.Params)
	if err != nil {
		ev.State = contract.OpRefused
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(err)
		return nil, ev
	}
	if ev.Result, err = json.Marshal(map[string]any{"action": in.Action, "changes": len(res.Changes), "decision": "approved"}); err != nil {
		ev.State = contract.OpRefused
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(fmt.Errorf("encode the result of %s: %w", in.Action, err))
		return nil, ev
	}
	ev.State = contract.OpDone
	return actionChange(&in, res), ev
}

// runApprovedAct runs a manual Agent's approved Board act on b, as the Agent, through the
// write sequence the decision runs in. The Board checks it now, as it would have when the
// Agent called: an act that no longer holds (its Case closed meanwhile, a fact retracted)
// voids the approval and refuses the Operation with the Board's code.
func runApprovedAct(b *board.Board, req *contract.Request, op *operation, ev event.Operation) (*boards.Change, event.Operation) {
	input, err := contract.DecodeToolInput(op.tool, op.input)
	if err != nil {
		ev.State, ev.ErrorCode, ev.Reason, ev.Result = contract.OpFailed, contract.CodeInternal, "the recorded call could not be read", nil
		return nil, ev
	}
	vec, err := boardActVector(req.Project, req.RequestedBy.ID(), op.tool, input)
	if err != nil {
		ev.State, ev.ErrorCode, ev.Reason, ev.Result = contract.OpFailed, contract.CodeInternal, "the recorded call could not be read", nil
		return nil, ev
	}
	if digest, err := RequestDigest(vec); err != nil || digest != req.Digest {
		req.State = contract.RequestVoid
		ev.State = contract.OpRefused
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(contract.Errorf(contract.CodeCallChanged,
			"the recorded call %s no longer comes to the approved digest; call it again for a new decision", op.tool))
		return nil, ev
	}
	r := boardAct(b, req.RequestedBy, input, *req.DecidedAt, toolRun{})
	if r.op.State == contract.OpRefused {
		req.State = contract.RequestVoid
	}
	ev.State, ev.ErrorCode, ev.Reason, ev.Result = r.op.State, r.op.ErrorCode, r.op.Reason, r.op.Result
	return r.change, ev
}
