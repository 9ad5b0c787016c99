package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
	"github.com/docketrun/docket/internal/store"
)

// Recovery: a failed Operation of an executed Action — a known failure, never
// unknown or needs_person — may be retried as a new Operation of the same Agent, counting
// attempts, and work a worker refused may be re-queued the same way. A member's act runs;
// an orchestrator's runs when the recovery policy in force allows it, and otherwise raises
// a recovery request bound to the digest of (act, Operation, reason, its state), which
// only a member decides and which is void once the Operation moves. Every act and every
// refusal is a recovery event naming the act, the Operation, the actor, the reason, the
// policy version and the result.

// Recovery acts.
const (
	actRetry   = "retry"   // a failed Operation run again
	actRequeue = "requeue" // work a worker refused queued again
)

// opRef names the agent's Operation ordinal as "<agent>.<ordinal>".
func opRef(agent string, ordinal int64) string { return agent + "." + strconv.FormatInt(ordinal, 10) }

// parseOpRef splits an [opRef].
func parseOpRef(ref string) (string, int64, error) {
	i := strings.LastIndexByte(ref, '.')
	n, err := strconv.ParseInt(ref[i+1:], 10, 64)
	if i <= 0 || len(ref) > 200 || err != nil || n < 1 {
		return "", 0, contract.Errorf(contract.CodeInvalidArgument, "%.80q does not name an Operation; write <agent id>.<ordinal>, as docket ops shows it", ref)
	}
	return ref[:i], n, nil
}

// Retry is a member's recovery act on the Operation ref of project: a member acting itself
// runs it whatever the recovery policy says, since a member decides anything in its
// projects. A member's delegate is held to the policy as an orchestrator is
// (docs/delegates.md): outside it — attempts spent, the act off, or a call that first ran
// under a person's approval — its act raises a recovery request only a member decides.
// The event records the policy version in force.
func (o *Operations) Retry(ctx context.Context, c identity.Caller, project contract.ProjectID, ref string, req contract.RetryRequest) (contract.RecoveryOutcome, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.RecoveryOutcome{}, err
	}
	return o.recoveryAct(ctx, c.Principal(), project, ref, req.Reason, !c.IsDelegate())
}

// recoveryAct runs the recovery act of by on ref, or raises a recovery request when by is not
// a member acting itself (inPerson) and the policy does not allow the act. A refusal is recorded, then returned.
func (o *Operations) recoveryAct(ctx context.Context, by contract.Principal, project contract.ProjectID, ref, reason string, inPerson bool) (contract.RecoveryOutcome, error) {
	agent, ordinal, err := parseOpRef(ref)
	if err != nil {
		return contract.RecoveryOutcome{}, err
	}
	if reason = strings.TrimSpace(reason); reason == "" || len(reason) > 1000 {
		return contract.RecoveryOutcome{}, contract.Errorf(contract.CodeInvalidArgument, "a recovery act needs a reason of 1 to 1000 bytes: say why the Operation should run again")
	}
	var out contract.RecoveryOutcome
	err = o.boards.Write(ctx, project, "recover "+ref, func(w *boards.Write) error {
		l := o.ledger(project)
		l.lockAlong(w.Held())
		defer l.unlock()
		// The policy in force is read before the transaction, at the head the Board was
		// caught up to (a read made during the call); the act is decided on the ledger
		// caught up inside the transaction, under the head lock, so its ordinal and
		// every check on the Operation hold at the commit (docs/architecture.md, "One
		// commit function").
		version, pol, err := o.inForce(eventlog.WithHead(ctx, project, w.Seq()), l, project, contract.PolicyRecovery)
		if err != nil {
			return err
		}
		now := o.nowUTC()
		spec := commitSpec{project: project, lockHead: true, bw: w, at: now, by: by,
			wrap: func(err error) error { return eventlog.Refuse(err, "recovery") }}
		return o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
			op := l.opLocked(agent, ordinal)
			if op == nil {
				return contract.Errorf(contract.CodeNotFound, "project %q has no Operation %s; docket ops lists them", project, ref)
			}
			act, attempt := actRetry, op.attempt+1
			if op.errorCode == contract.CodeWorkRefused {
				act = actRequeue
			}
			rec := event.Recovery{Act: act, Operation: ref, Actor: by, Reason: reason, Policy: version}
			out = contract.RecoveryOutcome{Act: act, Operation: ref, Attempt: attempt, Policy: version}
			// A refusal is recorded, then answered (wc.answer).
			refuse := func(e *contract.Error) error {
				rec.Result = string(e.Code) + ": " + e.Teaching
				wc.answer = e
				return wc.event("", string(by), event.RecoveryRefusedData(rec))
			}
			if e := l.retryableLocked(agent, op); e != nil {
				return refuse(e)
			}
			if u := l.unresolvedLocked(agent); u != nil {
				return refuse(contract.Errorf(contract.CodeOperationRunning, "agent %s has an unresolved Operation (%s, %s); act again once it settles", agent, u.label, u.state))
			}
			if why := l.outsidePolicyLocked(agent, op, act, attempt, pol.Recovery, version); why != "" && !inPerson {
				n, err := contract.IntValue(attempt) // at most max_attempts + 1, so in range
				if err != nil {
					return err
				}
				vec := contract.RequestVector{Action: contract.ActionRetry, Args: contract.Args{"operation": contract.StringValue(ref),
					"reason": contract.StringValue(reason), "state": contract.StringValue(string(op.state)), "attempt": n}}
				req, err := o.newRequest(project, by, vec, now)
				if err != nil {
					return err
				}
				req.Recovery = true
				out.Request, rec.Result = req.ID, "recovery request "+string(req.ID)+": "+why
				wc.writes = append(wc.writes, func(tx store.Tx) error {
					if err := raise(ctx, tx, req); err != nil {
						return err
					}
					return eventlog.Append(ctx, tx, project, by, now, event.RecoveryRefusedData(rec))
				})
				return nil
			}
			next := int64(len(l.ops[agent])) + 1
			out.Retry, rec.Result = opRef(agent, next), "retried as "+opRef(agent, next)
			retry := retryOp(agent, next, ordinal, attempt, op)
			wc.writes = append(wc.writes, func(tx store.Tx) error {
				return appendRetry(ctx, tx, project, by, now, retry, rec)
			})
			return nil
		})
	})
	if err != nil {
		if _, ok := errors.AsType[*contract.Error](err); ok {
			return contract.RecoveryOutcome{}, err
		}
		return contract.RecoveryOutcome{}, fmt.Errorf("recover %s: %w", ref, err)
	}
	return out, nil
}

// retryableLocked refuses an act on op unless it is a known failure of an executed
// Action that no later Operation retried. The project's ledger must be locked.
func (l *ledgerState) retryableLocked(agent string, op *operation) *contract.Error {
	if op.state != contract.OpFailed || op.execution == nil {
		return contract.Errorf(contract.CodeNotRetryable,
			"operation %s is %s; only a failed executed Action, a known failure, is run again (unknown and needs_person are a person's: docket reconcile)", opRef(agent, op.ordinal), op.state)
	}
	for _, later := range l.ops[agent][op.ordinal:] {
		if later.retryOf == op.ordinal {
			return contract.Errorf(contract.CodeNotRetryable, "operation %s was retried already as %s; act on that one", opRef(agent, op.ordinal), opRef(agent, later.ordinal))
		}
	}
	return nil
}

// outsidePolicyLocked says why act, as attempt, on the agent's op is outside the recovery
// policy p (version), or "". The project's ledger must be locked.
func (l *ledgerState) outsidePolicyLocked(agent string, op *operation, act string, attempt int64, p *policydoc.Recovery, version int64) string {
	switch {
	case act == actRequeue && !p.RequeueRefused:
		return fmt.Sprintf("the recovery policy (version %d) does not re-queue work a worker refused", version)
	case act == actRetry && !p.RetryFailed:
		return fmt.Sprintf("the recovery policy (version %d) does not retry failed Operations", version)
	case attempt > p.MaxAttempts:
		return fmt.Sprintf("attempt %d is past max_attempts = %d of the recovery policy (version %d)", attempt, p.MaxAttempts, version)
	}
	// An approval runs one call: running an approved call again is a member's decision.
	for first := op; first != nil; first = l.opLocked(agent, first.retryOf) {
		for _, id := range l.order {
			if r := l.requests[id]; !r.Recovery && r.RequestedBy.ID() == agent && r.Ordinal == first.ordinal {
				return "the call ran under a person's approval, which runs it once"
			}
		}
		if first.retryOf == 0 {
			break
		}
	}
	return ""
}

// retryOp is the new Operation next of agent that runs op (ordinal) again as attempt.
func retryOp(agent string, next, ordinal, attempt int64, op *operation) event.Operation {
	return event.Operation{Agent: agent, Ordinal: next, Tool: op.tool, Label: fmt.Sprintf("%s (attempt %d)", op.label, attempt), Input: op.input,
		State: contract.OpRunning, Stage: contract.StageNotDispatched, Execution: op.execution, RetryOf: ordinal, Attempt: attempt,
		TraceParent: op.traceParent}
}

// appendRetry appends the retry's Operation and its recovery.acted event.
func appendRetry(ctx context.Context, tx store.Tx, project contract.ProjectID, by contract.Principal, now time.Time, ev event.Operation, rec event.Recovery) error {
	if err := eventlog.Append(ctx, tx, project, by, now, event.OpAdmittedData(ev)); err != nil {
		return err
	}
	return eventlog.Append(ctx, tx, project, by, now, event.RecoveryActedData(rec))
}

// decideRecoveryLocked decides the recovery request req for member by: a denial only
// settles it; an approval runs the act it names, unless the Operation moved since (then
// the request is void). The project's ledger must be locked.
func (o *Operations) decideRecoveryLocked(ctx context.Context, w *boards.Write, l *ledger, by contract.Principal, req contract.Request, d contract.Decision, version int64) (contract.Request, error) {
	project := w.Project()
	now := o.nowUTC()
	if by.Kind() != contract.PrincipalMember {
		return contract.Request{}, contract.Errorf(contract.CodeForbidden, "a recovery request is a member's to decide; a member decides %s", req.ID)
	}
	req.DecidedBy, req.DecidedAt, req.Reason = by, &now, d.Reason
	ref := req.Vector.Args["operation"].Str()
	agent, ordinal, err := parseOpRef(ref)
	if err != nil {
		return contract.Request{}, err
	}
	attempt := req.Vector.Args["attempt"]
	// Decided on the ledger caught up inside the transaction, under the head lock: an
	// approval appends the retry as the agent's next Operation, an ordinal no other
	// instance takes before the commit (docs/architecture.md, "One commit function").
	spec := commitSpec{project: project, lockHead: true, bw: w, at: now, by: by,
		wrap: func(err error) error { return fmt.Errorf("decide %s: %w", req.ID, eventlog.Refuse(err, "request")) }}
	err = o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
		if cur := l.requests[req.ID]; cur == nil || cur.State != contract.RequestPending {
			return errDecidedFirst
		}
		var after func(tx store.Tx) error
		op := l.opLocked(agent, ordinal)
		switch {
		case d.Verdict == contract.VerdictDeny:
			req.State = contract.RequestDenied
		case op == nil || l.retryableLocked(agent, op) != nil || attempt.Kind() != contract.ValueInt || attempt.Int() != op.attempt+1 || l.unresolvedLocked(agent) != nil:
			req.State, req.Reason = contract.RequestVoid, "the Operation moved since the request; act on it as it stands"
		default:
			req.State = contract.RequestApproved
			next := int64(len(l.ops[agent])) + 1
			act := actRetry
			if op.errorCode == contract.CodeWorkRefused {
				act = actRequeue
			}
			rec := event.Recovery{Act: act, Operation: ref, Actor: by, Reason: req.Vector.Args["reason"].Str(), Policy: version,
				Result: "retried as " + opRef(agent, next) + " on request " + string(req.ID)}
			retry := retryOp(agent, next, ordinal, op.attempt+1, op)
			after = func(tx store.Tx) error {
				return appendRetry(ctx, tx, project, by, now, retry, rec)
			}
		}
		decided := req // as this attempt decided it
		wc.writes = append(wc.writes, func(tx store.Tx) error {
			return recordDecision(ctx, tx, store.Decision{Project: string(project), Request: string(decided.ID), Digest: d.Digest,
				RequestedBy: string(decided.RequestedBy), DecidedBy: string(by), Verdict: string(d.Verdict), At: now})
		}, func(tx store.Tx) error {
			if err := eventlog.Append(ctx, tx, project, by, now, event.RequestChangedData{Request: decided}); err != nil {
				return err
			}
			if after != nil {
				return after(tx)
			}
			return nil
		})
		return nil
	})
	if err != nil {
		return contract.Request{}, err
	}
	return req, nil
}

// retryCall answers an orchestrator's ApplyAction of ActionRetry.
func (o *Operations) retryCall(ctx context.Context, c identity.Caller, call Call, in *contract.ApplyActionInput) (Answer, error) {
	if err := o.acknowledge(ctx, c, call.Delivered); err != nil {
		return Answer{}, err
	}
	out, err := o.orchestratorRetry(ctx, c, in)
	if ce, ok := errors.AsType[*contract.Error](err); ok {
		return o.answer(ctx, c, call.Focus, refusal(ce), 0, nil, nil)
	}
	if err != nil {
		return Answer{}, err
	}
	extra, err := json.Marshal(out)
	if err != nil {
		return Answer{}, fmt.Errorf("encode recovery outcome: %w", err)
	}
	return o.answer(ctx, c, call.Focus, contract.ToolResult{}, 0, extra, nil)
}

// orchestratorRetry runs orchestrator c's recovery act that in names.
func (o *Operations) orchestratorRetry(ctx context.Context, c identity.Caller, in *contract.ApplyActionInput) (contract.RecoveryOutcome, error) {
	if c.AgentKind != contract.AgentKindOrchestrator {
		return contract.RecoveryOutcome{}, contract.Errorf(contract.CodeForbidden, "only an orchestrator Agent or a member acts on another Agent's Operations")
	}
	ref, reason := in.Params["operation"], in.Params["reason"]
	if len(in.Params) != 2 || ref.Kind() != contract.ValueString || reason.Kind() != contract.ValueString || in.CaseID != "" {
		return contract.RecoveryOutcome{}, contract.Errorf(contract.CodeInvalidArgument,
			`apply docket.retry with params {"operation": "<agent id>.<ordinal>", "reason": "…"} and no caseId`)
	}
	return o.recoveryAct(ctx, c.Principal(), c.Projects[0], ref.Str(), reason.Str(), false)
}
