package operation

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// List returns project's Operations for a member: every Agent's, or only agent's when
// it is not empty, oldest first by admission, each with what it waits for and why; with
// waiting, only those that wait for something (a worker, a decision or a person). The
// strip's Result and Summary are left out: a list says where an Operation stands, and its
// outcome belongs to the Agent it answers. It is read from the ledger's snapshot
// ([Operations.memberSnapshot]).
func (o *Operations) List(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, waiting bool) ([]contract.OperationInfo, error) {
	s, err := o.memberSnapshot(ctx, c, project)
	if err != nil {
		return nil, err
	}
	return s.operations(agent, waiting), nil
}

// memberSnapshot returns project's operation ledger as a member's read of it answers: the
// snapshot the ledger published when its seq covers the head the read makes, so that the
// read never waits for a claim batch, a report batch or an admission holding the ledger's
// lock across its store transaction; otherwise the one taken under the lock once the
// ledger caught up to that head. Either is as fresh as a read of that head
// (docs/architecture.md, "The project state and its driver"). What the caller lists from
// it, it lists after the lock is released.
func (o *Operations) memberSnapshot(ctx context.Context, c identity.Caller, project contract.ProjectID) (*ledgerSnap, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	head, err := o.head(ctx, project)
	if err != nil {
		return nil, err
	}
	if snap, ok := o.drv.Snapshot(project); ok && snap.Seq >= head {
		return snap.Value.(*ledgerSnap), nil
	}
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpToLocked(ctx, o.store, head); err != nil {
		return nil, err
	}
	return l.snapshot(), nil
}

// head returns the head of project's log: the one the call read already
// ([eventlog.WithHead]), else one read now.
func (o *Operations) head(ctx context.Context, project contract.ProjectID) (int64, error) {
	if head, ok := eventlog.KnownHead(ctx, project); ok {
		return head, nil
	}
	h, err := o.store.Head(ctx, string(project))
	if err != nil {
		return 0, fmt.Errorf("read the head of %s: %w", project, err)
	}
	return h.Seq, nil
}

// memberRead returns project's operation ledger locked and caught up with the log, for a
// member's read, and the func that unlocks it.
func (o *Operations) memberRead(ctx context.Context, c identity.Caller, project contract.ProjectID) (*ledger, func(), error) {
	if err := c.RequireMember(project); err != nil {
		return nil, nil, err
	}
	l := o.ledger(project)
	l.lock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		l.unlock()
		return nil, nil, err
	}
	return l, l.unlock, nil
}
