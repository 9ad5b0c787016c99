package operation

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// servedAs is how the worker hop would run a queued call on one Connection: the digest
// its Tool is locked at there and the record of the Source it runs against
// ("<name>@sha256:<hex>", empty for a source-free Tool).
type servedAs struct {
	ToolDigest string
	Source     string
}

// checkServed reports whether q may run as s: a call no person approved may, and an
// approved one only when s is what the person approved — the bound arguments, and the
// Tool digest and Source record wherever the approved vector fixed them.
// A vector that fixed neither, because several Connections could run the call when it was
// approved, was approved as such.
//
// When s differs, the call does not run here. If the call, evaluated again on the
// project's setup, no longer comes to the approved digest (a Source rebound or a Tool
// re-locked since the approval), the approval is void (call_changed) and a new Request
// for the call as it stands asks again; else another Connection still serves it as
// approved, and it waits for that one.
func (o *Operations) checkServed(ctx context.Context, project contract.ProjectID, q Dispatch, s servedAs) (bool, error) {
	if q.Approved == nil {
		return true, nil
	}
	ok, err := servedAsApproved(*q.Approved, q.Request.Args, s)
	if err != nil || ok {
		return ok, err
	}
	return false, o.reask(ctx, project, q.Agent, q.Ordinal)
}

// servedAsApproved reports whether args run as s are the vector approved.
func servedAsApproved(approved contract.RequestVector, args contract.Args, s servedAs) (bool, error) {
	served := approved
	served.Args = args
	if approved.ToolDigest != "" {
		served.ToolDigest = s.ToolDigest
	}
	if approved.Source != "" {
		served.Source = s.Source
	}
	want, err := RequestDigest(approved)
	if err != nil {
		return false, err
	}
	got, err := RequestDigest(served)
	return got == want, err
}

// reask voids the approval of the agent's queued Operation ordinal and raises a new
// Request for the call as it stands, when it no longer comes to the approved digest. It
// decides under the write sequence's locks, on the ledger caught up, so a claim or a
// second instance's reask that came first wins.
func (o *Operations) reask(ctx context.Context, project contract.ProjectID, agent string, ordinal int64) error {
	err := o.boards.Write(ctx, project, fmt.Sprintf("ask again for operation %d of %s", ordinal, agent), func(w *boards.Write) error {
		l := o.ledger(project)
		l.lockAlong(w.Held())
		defer l.unlock()
		// changed returns the Operation's approved Request and the vector the call comes
		// to now, when that no longer matches the approval; nil when there is nothing to
		// ask again.
		changed := func() (*contract.Request, contract.RequestVector, error) {
			op := l.opLocked(agent, ordinal)
			if op == nil || op.state != contract.OpRunning || op.stage != contract.StageNotDispatched || op.execution == nil {
				return nil, contract.RequestVector{}, nil // claimed, settled or asked again already
			}
			old := l.approvedRequestLocked(agent, ordinal)
			if old == nil {
				return nil, contract.RequestVector{}, nil
			}
			var in contract.ApplyActionInput
			if err := json.Unmarshal(op.input, &in); err != nil {
				return nil, contract.RequestVector{}, fmt.Errorf("read the recorded call of operation %d of %s: %w", ordinal, agent, err)
			}
			vec := executionVector(l.liveConnsLocked(), &in, op.execution)
			digest, err := RequestDigest(vec)
			if err != nil || digest == old.Digest {
				return nil, contract.RequestVector{}, err // still served as approved, elsewhere
			}
			return old, vec, nil
		}
		// Read at the head the Board was caught up to (a read made during the call).
		rctx := eventlog.WithHead(ctx, project, w.Seq())
		if err := l.catchUpLocked(rctx, o.store); err != nil {
			return err
		}
		if old, _, err := changed(); old == nil || err != nil {
			return err
		}
		version, _, err := o.inForce(rctx, l, project, contract.PolicyDelegation)
		if err != nil {
			return err
		}
		now := o.nowUTC()
		// Decided again on the ledger caught up under the head lock, so a claim or a
		// second instance's reask that came first wins (docs/architecture.md, "One
		// commit function").
		spec := commitSpec{project: project, lockHead: true, bw: w, at: now, by: contract.Principal("system"),
			wrap: func(err error) error { return eventlog.Refuse(err, "request") }}
		return o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
			old, vec, err := changed()
			if old == nil || err != nil {
				return err
			}
			void := *old
			void.Policy = version
			void.State, void.Reason = contract.RequestVoid, string(contract.CodeCallChanged)+": the call's Tool digest or Source changed after the approval"
			fresh, err := o.newRequest(project, old.RequestedBy, vec, now)
			if err != nil {
				return err
			}
			fresh.Ordinal, fresh.TaskBy = ordinal, old.TaskBy
			ev := event.Operation{Agent: agent, Ordinal: ordinal, State: contract.OpWaitingForDecision, Decision: string(fresh.ID),
				ErrorCode: contract.CodeCallChanged, Reason: "the call changed after its approval (its Tool digest or Source); a new request asks again"}
			by := old.RequestedBy
			wc.writes = append(wc.writes, func(tx store.Tx) error {
				if err := eventlog.Append(ctx, tx, project, by, now, event.RequestChangedData{Request: void}); err != nil {
					return err
				}
				if err := raise(ctx, tx, fresh); err != nil {
					return err
				}
				return eventlog.Append(ctx, tx, project, by, now, event.OpChangedData(ev))
			})
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("ask again for operation %d of %s: %w", ordinal, agent, err)
	}
	return nil
}
