package authority

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// workCommit collects what one hop call writes: hop events, Operation changes, at most
// one Board change and the Connection's new lease, committed in one transaction by
// [Dispatcher.commitWork].
type workCommit struct {
	b        *board.Board
	l        *ledger
	w        *workLedger
	now      time.Time
	conn     contract.ConnectionID // the Connection whose lease is locked, or ""
	lease    *lease                // the Connection's lease as locked in the transaction; nil without one
	newLease *lease                // the lease to write, or nil
	events   []store.NewEvent
	ops      []opEvent
	opBy     contract.Principal
	change   *Change
	// answer is returned after the commit: a refusal that is recorded (a judged report).
	answer error
}

func (wc *workCommit) event(id, typ, actor string, data any) {
	b, _ := json.Marshal(data)
	wc.events = append(wc.events, store.NewEvent{ID: id, Type: typ, At: wc.now, Actor: actor, Data: b})
}

func (wc *workCommit) op(e opEvent) { wc.ops = append(wc.ops, e) }

// setLease makes l the Connection's lease when wc commits.
func (wc *workCommit) setLease(l *lease) { wc.newLease = l }

// commitWork runs fn in one transaction under project's Board, Operation and hop locks
// (in that order) and commits what fn collected. With a Connection, the transaction
// first locks that Connection's lease row and fn sees it in wc.lease; the Operation and
// hop ledgers are caught up after that lock, inside the transaction, so they hold every
// claim, report and acquisition that any instance committed under that lease. That is
// what fences a takeover against a claim under the old generation: whichever locks the
// row second sees the first's commit. When fn fails nothing is written. A Board change
// the store refuses is dropped from memory.
//
// When another instance changed the Board first, fn runs once more on the rebuilt Board
// with everything caught up again, so fn must only read state and collect into wc.
func (d *Dispatcher) commitWork(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID, fn func(wc *workCommit) error) error {
	for retried := false; ; retried = true {
		err := d.commitWorkOnce(ctx, project, conn, fn)
		if !errors.Is(err, errBoardStale) {
			return err
		}
		if retried {
			return fmt.Errorf("worker hop commit: %w", staleRefusal(err))
		}
	}
}

func (d *Dispatcher) commitWorkOnce(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID, fn func(wc *workCommit) error) error {
	a := d.o.a
	pb := a.boards.get(project)
	pb.mu.Lock()
	defer pb.mu.Unlock()
	b, err := a.boardLocked(ctx, project, pb)
	if err != nil {
		return err
	}
	l := d.o.ledger(project)
	l.mu.Lock()
	defer l.mu.Unlock()
	w := d.work(project)
	w.mu.Lock()
	defer w.mu.Unlock()
	var wc *workCommit
	var refused error // fn's error, returned as fn gave it
	after := int64(-1)
	err = a.store.Update(ctx, func(tx store.Tx) error {
		wc = &workCommit{b: b, l: l, w: w, now: a.nowUTC(), conn: conn, opBy: "system"}
		if conn != "" {
			row, err := tx.LockLease(ctx, string(project), string(conn))
			if err != nil {
				return fmt.Errorf("lock lease of %s: %w", conn, err)
			}
			wc.lease = leaseOf(row)
		}
		if err := l.catchUpLocked(ctx, tx, project); err != nil {
			return err
		}
		if err := w.catchUpLocked(ctx, tx, project); err != nil {
			return err
		}
		if refused = fn(wc); refused != nil {
			return refused
		}
		return d.writeWork(ctx, tx, project, pb, wc, &after)
	})
	if err != nil {
		if refused != nil {
			return refused
		}
		if wc != nil && wc.change != nil {
			d.o.dropBoardLocked(ctx, project, pb)
		}
		if errors.Is(err, errBoardStale) {
			return err
		}
		return fmt.Errorf("worker hop commit: %w", err)
	}
	if after >= 0 {
		pb.seq = after
	}
	if len(wc.events) > 0 || len(wc.ops) > 0 || wc.change != nil {
		if err := l.catchUpLocked(ctx, a.store, project); err != nil {
			return err
		}
		if err := w.catchUpLocked(ctx, a.store, project); err != nil {
			return err
		}
	}
	return wc.answer
}

// writeWork writes what wc collected in tx. A Board change is written only if the Board
// it was made on is still the project's, as [Authority.updateBoard] checks; then *after
// is the head it leaves.
func (d *Dispatcher) writeWork(ctx context.Context, tx store.Tx, project contract.ProjectID, pb *projectBoard, wc *workCommit, after *int64) error {
	a := d.o.a
	if wc.newLease != nil {
		if err := tx.PutLease(ctx, store.Lease{Project: string(project), Connection: string(wc.conn), WorkerID: wc.newLease.worker,
			Generation: wc.newLease.gen, ExpiresAt: wc.newLease.expires}); err != nil {
			return fmt.Errorf("write lease: %w", err)
		}
	}
	if wc.change != nil {
		if err := lockFresh(ctx, tx, project, pb); err != nil {
			return err
		}
	}
	for _, e := range wc.events {
		e.Project = string(project)
		if _, err := tx.Append(ctx, e); err != nil {
			return fmt.Errorf("append %s event: %w", e.Type, err)
		}
	}
	if wc.change != nil {
		if err := persistChange(ctx, tx, project, *wc.change); err != nil {
			return err
		}
		if err := a.appendEvent(ctx, tx, project, wc.change.Event, wc.opBy, wc.now, wc.change.Data); err != nil {
			return err
		}
	}
	for _, e := range wc.ops {
		if err := a.appendEvent(ctx, tx, project, event.OpChanged, wc.opBy, wc.now, e); err != nil {
			return err
		}
	}
	if wc.change != nil {
		head, err := tx.LockHead(ctx, string(project))
		if err != nil {
			return err
		}
		*after = head.Seq
	}
	return nil
}
