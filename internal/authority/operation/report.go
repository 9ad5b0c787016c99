package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
)

// Report settles claimed work with the worker's outcome. An ok report
// applies the returned rows to the Board as facts at the Source's tier, only for its
// words, and the Operation is done; a refused call fails it; an unknown effect makes it
// need a person. A receipt retry with the same bytes lands once and is answered as the
// first was; a different report for the same claim is refused. A report under a lease
// that was lost is judged: recorded, its Operation made needs_person, never applied.
//
// Reports of one Connection that arrive while another of its claims or reports commits
// are committed together, with the claims that arrived meanwhile, in one Board write and
// one transaction ([Dispatcher.hopBatch]), each judged on its own and in the order they
// arrived: one Board write each, each holding the project's lock through its commit,
// made them wait for one another's commits.
func (d *Dispatcher) Report(ctx context.Context, conn contract.Connection, req contract.ReportRequest) (contract.WorkAnswer, error) {
	agent, ordinal, ok := parseWorkID(req.ID)
	if !ok {
		return contract.WorkAnswer{}, errNoWork(req.ID)
	}
	digest, err := reportDigest(req)
	if err != nil {
		return contract.WorkAnswer{}, fmt.Errorf("report %s: %w", req.ID, err)
	}
	r := newPending(ctx, &hopCall{report: &reportCall{req: req, agent: agent, ordinal: ordinal, digest: digest}})
	if err := d.queue(conn).await(r, func(batch []*pending[*hopCall]) { d.hopBatch(conn, batch) }); err != nil {
		return contract.WorkAnswer{}, err
	}
	return contract.WorkAnswer{Accepted: true}, nil
}

// reportsIn judges each of reports against the state and the Board wc locked, in the
// order they arrived, each collecting into a part of its own ([workCommit.part]), written
// in that order as one transaction each would have written them. A report of the same
// work after it is judged against it, as it would be against one committed before; one
// refused (or failing) on its own writes nothing and keeps its answer; one failing after
// it changed the Board fails the transaction, so that the Board is dropped from memory.
func (d *Dispatcher) reportsIn(ctx context.Context, wc *workCommit, conn contract.Connection, reports []*reportCall) error {
	wc.parts = nil
	seen := map[string]*reportCall{}
	for _, r := range reports {
		r.first, r.answer = seen[r.req.ID], nil
		if r.first != nil {
			continue // sent again while the first waited: answered from it (reportAnswer)
		}
		part := wc.part()
		err := d.reportIn(ctx, part, conn, r)
		if err != nil && part.change != nil {
			// Kept among the parts so that the refused transaction drops the
			// changed Board from memory ([Dispatcher.commitWorkOnce]).
			wc.parts = append(wc.parts, part)
			return fmt.Errorf("report %s failed after changing the Board: %w", r.req.ID, err)
		}
		if err != nil {
			r.answer = err // refused (or failed) alone: its part is not written
			continue
		}
		r.answer = part.answer
		seen[r.req.ID] = r
		wc.parts = append(wc.parts, part)
	}
	return nil
}

// reportAnswer is report r's answer once its batch's transaction ended with err.
func reportAnswer(r *reportCall, err error) error {
	switch {
	case err != nil:
		return err
	case r.first != nil && r.first.digest != r.digest:
		return contract.Errorf(contract.CodeReportConflict, "work %s was already reported with other content; a receipt retry must send the same bytes.", r.req.ID)
	case r.first != nil:
		return r.first.answer
	}
	return r.answer
}

// reportIn judges report r against the state and the Board wc locked, and collects what
// it writes into wc; wc.answer is then its answer when it is recorded as refused (judged).
func (d *Dispatcher) reportIn(ctx context.Context, wc *workCommit, conn contract.Connection, r *reportCall) error {
	req, agent, ordinal, digest := r.req, r.agent, r.ordinal, r.digest
	if prev, ok := wc.l.reports[req.ID]; ok {
		if prev.Digest != digest {
			return contract.Errorf(contract.CodeReportConflict, "work %s was already reported with other content; a receipt retry must send the same bytes.", req.ID)
		}
		if prev.Judged {
			wc.answer = &contract.Error{Code: prev.Code, Teaching: prev.Teaching}
		}
		return nil
	}
	c, ok := wc.l.claims[req.ID]
	if !ok || c.Connection != conn.ID {
		return errNoWork(req.ID)
	}
	if c.WorkerID != req.WorkerID || c.Generation != req.Generation || c.GrantDigest != grant.Digest([]byte(req.Grant)) {
		return contract.Errorf(contract.CodeGrantMismatch,
			"the report of work %s names another instance, generation or grant than its claim; report with the workerId, workerGeneration and grant it was claimed with.", req.ID)
	}
	if len(req.Facts) > 0 || req.OK && (req.Result == nil || req.EffectUnknown) {
		return contract.Errorf(contract.CodeWorkBody,
			"the report of work %s is not a receipt the hop takes: an ok report carries result.rows and no facts (facts come only from the Action's returns), and never effectUnknown.", req.ID)
	}
	op := wc.l.opLocked(agent, ordinal)
	if op == nil || op.execution == nil {
		return errNoWork(req.ID)
	}
	wc.opBy = contract.NewPrincipal(contract.PrincipalTool, op.execution.Tool)
	rep := event.WorkReportedData{Work: req.ID, Digest: digest}
	atWorker := op.state == contract.OpRunning && op.stage == contract.StageAtWorker
	if lerr := checkLease(wc.leases, req.WorkerID, req.Generation, wc.now); lerr != nil || !atWorker {
		rep.Judged, rep.Code = true, contract.CodeWorkTaken
		rep.Teaching = fmt.Sprintf("the Operation of work %s no longer waits for this worker (a person settled it); the report was recorded, not applied.", req.ID)
		if ce, ok := errors.AsType[*contract.Error](lerr); ok {
			rep.Code = ce.Code
			rep.Teaching = fmt.Sprintf("the report of work %s arrived after its lease generation %d was lost; it was recorded, not applied, and a person must reconcile the Operation (docket reconcile).", req.ID, req.Generation)
		}
		wc.answer = &contract.Error{Code: rep.Code, Teaching: rep.Teaching}
		if atWorker {
			wc.op(event.Operation{Agent: agent, Ordinal: ordinal, State: contract.OpNeedsPerson, ReasonCode: contract.CodeWorkerLost,
				Reason: "a worker reported after losing its lease; a person must check what happened (docket reconcile)."})
		}
		return wc.event("report-"+req.ID, string(wc.opBy), rep)
	}
	if err := wc.event("report-"+req.ID, string(wc.opBy), rep); err != nil {
		return err
	}
	ev := event.Operation{Agent: agent, Ordinal: ordinal}
	switch {
	case req.OK:
		by := board.Author{Principal: wc.opBy, Tier: contract.TierAsserted} // a source-free Tool attests nothing
		if c.Source != nil {
			by.Tier, by.Words = c.Source.Tier, c.Source.Words
		}
		rows, err := d.ops.spillRows(ctx, wc, conn.Project, agent, req.Result.Rows)
		if err != nil {
			return err
		}
		wc.change, ev = applyOutcome(wc.b, op, by, contract.ExecutionOutcome{OK: true, Rows: rows}, ev)
	case req.EffectUnknown:
		ev.State, ev.ErrorCode = contract.OpNeedsPerson, req.Code
		ev.Reason = "the worker could not tell whether the call took effect (" + truncate(req.Reason, 300) + "); a person must check (docket reconcile)."
	case req.Code == contract.CodePathNeedsMember && !req.OK:
		// The worker found the path a delegated call lands on needs a member: the
		// Operation fails and a new one asks a member ([Operations.askMember]),
		// unless no orchestrator's approval is behind it.
		ask, write, ok, err := d.ops.askMember(ctx, wc.l, conn.Project, agent, ordinal, truncate(req.Reason, 1000), wc.now)
		if err != nil {
			return err
		}
		if ok {
			wc.writes = append(wc.writes, write)
			ev = ask
			break
		}
		fallthrough
	default:
		// The worker claimed the work and refused it (or the call failed before any
		// effect): the Operation says so in a word, with the worker's code and reason.
		ev.State, ev.ErrorCode, ev.Reason = contract.OpFailed, req.Code, truncate(req.Reason, 1000)
		ev.ReasonCode = contract.CodeWorkerRefused
		var err error
		if ev.Result, err = json.Marshal(map[string]any{"ok": false, "errorCode": req.Code, "reason": ev.Reason}); err != nil {
			return fmt.Errorf("encode the refusal of work %s: %w", req.ID, err)
		}
	}
	wc.op(ev)
	return nil
}

// Reconcile settles an Operation that needs a person with what a member found: done (the effect happened), failed (it did not) or unknown. Failed and unknown
// need a reason. Nothing is run again and no fact is added: a person's word is not a
// Source's. Only members reconcile. An Operation at a worker whose claim the log lacks
// is reconciled too: older versions stored a Source-free Tool's claim as null, so no
// report and no sweep could ever settle it.
func (d *Dispatcher) Reconcile(ctx context.Context, c identity.Caller, project contract.ProjectID, work string, req contract.ReconcileRequest) (contract.OperationEntry, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.OperationEntry{}, err
	}
	var state contract.OperationState
	switch req.Outcome {
	case contract.ReconcileDone:
		state = contract.OpDone
	case contract.ReconcileFailed:
		state = contract.OpFailed
	case contract.ReconcileUnknown:
		state = contract.OpUnknown
	default:
		return contract.OperationEntry{}, contract.Errorf(contract.CodeInvalidArgument, "outcome %.40q is not done, failed or unknown; say what you found.", req.Outcome)
	}
	if state != contract.OpDone && req.Reason == "" || len(req.Reason) > 1000 {
		return contract.OperationEntry{}, contract.Errorf(contract.CodeInvalidArgument, "a %s reconciliation needs a reason of at most 1000 bytes; say what you checked (--reason).", req.Outcome)
	}
	agent, ordinal, ok := parseWorkID(work)
	if !ok {
		return contract.OperationEntry{}, contract.Errorf(contract.CodeNotFound, "%.80q is not an Operation id; write it as <agent>.<ordinal>, as the Operation's grant invocation names it.", work)
	}
	var out contract.OperationEntry
	err := d.commitWork(ctx, project, "", false, func(wc *workCommit) error {
		op := wc.l.opLocked(agent, ordinal)
		if op == nil {
			return contract.Errorf(contract.CodeNotFound, "agent %s has no Operation %d in project %s.", agent, ordinal, project)
		}
		_, claimed := wc.l.claims[work]
		lost := op.state == contract.OpRunning && op.stage == contract.StageAtWorker && !claimed
		if op.state != contract.OpNeedsPerson && !lost {
			return contract.Errorf(contract.CodeNotNeedsPerson, "Operation %s is %s; only an Operation that needs a person is reconciled.", work, op.state)
		}
		wc.opBy = c.Principal()
		res, err := json.Marshal(map[string]string{"reconciled": req.Outcome, "by": string(c.Principal()), "reason": req.Reason})
		if err != nil {
			return fmt.Errorf("encode reconciliation of %s: %w", work, err)
		}
		wc.op(event.Operation{Agent: agent, Ordinal: ordinal, State: state, Reason: req.Reason, Result: res})
		return nil
	})
	if err != nil {
		return contract.OperationEntry{}, err
	}
	l := d.ops.ledger(project)
	l.lock()
	defer l.unlock()
	if op := l.opLocked(agent, ordinal); op != nil {
		out = op.entry()
	}
	return out, nil
}

// truncate bounds s to n bytes, for reasons that leave a worker.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
