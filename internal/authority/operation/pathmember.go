package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// askMember is the authority's answer to a worker that refused, with
// contract.CodePathNeedsMember, a call an orchestrator approved under a path class (issue
// 14): the worker found that the path the call lands on is not plainly inside its
// Source — a second hard link, a symbolic link — which the authority, knowing the path
// and not the file, could not see when the request was decided. The approval is void;
// the Operation fails with the worker's code and reason; and a new Operation of the same
// call (retrying it, so no one retries the failed one again) waits for a fresh request
// for the same vector, which only a member decides and which names what the worker found
// (why). The call then runs only as a member approves it.
//
// It returns the failed Operation's event and the write that records the rest, both for
// the hop's transaction, in which l is locked and caught up; ok is false when no
// orchestrator's approval under a path class is behind the call, and the refusal then
// fails the Operation like any other.
func (o *Operations) askMember(ctx context.Context, l *ledger, project contract.ProjectID, agent string, ordinal int64, why string, now time.Time) (event.Operation, func(tx store.Tx) error, bool, error) {
	old := l.approvedRequestLocked(agent, ordinal)
	op := l.opLocked(agent, ordinal)
	if old == nil || old.Delegated == nil || old.Delegated.Path == "" || op == nil {
		return event.Operation{}, nil, false, nil
	}
	version, _, err := o.inForce(ctx, l, project, contract.PolicyDelegation)
	if err != nil {
		return event.Operation{}, nil, false, err
	}
	next := int64(len(l.ops[agent])) + 1
	void := *old
	void.State, void.Reason, void.Policy = contract.RequestVoid, string(contract.CodePathNeedsMember)+": "+why, version
	fresh, err := o.newRequest(project, old.RequestedBy, old.Vector, now)
	if err != nil {
		return event.Operation{}, nil, false, err
	}
	fresh.Ordinal, fresh.TaskBy = next, old.TaskBy
	fresh.MemberOnly = fmt.Sprintf("an orchestrator approved the call under class %q (delegation policy version %d), and then the worker found: %s",
		old.Delegated.Class, old.Policy, why)
	failed := event.Operation{Agent: agent, Ordinal: ordinal, State: contract.OpFailed, ErrorCode: contract.CodePathNeedsMember, ReasonCode: contract.CodeWorkerRefused,
		Reason: why + " (a member is asked in request " + string(fresh.ID) + ", as operation " + opRef(agent, next) + ")"}
	if failed.Result, err = json.Marshal(map[string]any{"ok": false, "errorCode": contract.CodePathNeedsMember, "reason": why,
		"request": fresh.ID, "operation": opRef(agent, next)}); err != nil {
		return event.Operation{}, nil, false, fmt.Errorf("encode the refusal of operation %s: %w", opRef(agent, ordinal), err)
	}
	again := event.Operation{Agent: agent, Ordinal: next, Tool: op.tool, Label: op.label, Input: op.input, State: contract.OpWaitingForDecision,
		Decision: string(fresh.ID), Execution: op.execution, RetryOf: ordinal, Attempt: op.attempt}
	write := func(tx store.Tx) error {
		if err := eventlog.Append(ctx, tx, project, old.RequestedBy, now, event.RequestChangedData{Request: void}); err != nil {
			return err
		}
		if err := eventlog.Append(ctx, tx, project, old.RequestedBy, now, event.OpAdmittedData(again)); err != nil {
			return err
		}
		return raise(ctx, tx, fresh)
	}
	return failed, write, true, nil
}
