package operation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
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
	writes   []func(tx store.Tx) error // written after the Operation changes
	ops      []opChange
	opBy     contract.Principal
	change   *boards.Change
	// answer is returned after the commit: a refusal that is recorded (a judged report).
	answer error
	// parts are what several calls committed together each collected (a batch of
	// reports), written after wc's own collections, each in the order a transaction of
	// its own would write it.
	parts []*workCommit
}

// part returns a new part of wc: the same locked state, collecting on its own.
func (wc *workCommit) part() *workCommit {
	return &workCommit{b: wc.b, l: wc.l, w: wc.w, now: wc.now, conn: wc.conn, lease: wc.lease, opBy: "system"}
}

// all returns wc and its parts, in the order they are written.
func (wc *workCommit) all() []*workCommit { return append([]*workCommit{wc}, wc.parts...) }

// changed reports whether wc or a part of it changes the Board.
func (wc *workCommit) changed() bool {
	return slices.ContainsFunc(wc.all(), func(p *workCommit) bool { return p.change != nil })
}

// writes reports whether wc or a part of it writes anything.
func (wc *workCommit) writesAny() bool {
	return slices.ContainsFunc(wc.all(), func(p *workCommit) bool {
		return len(p.events) > 0 || len(p.writes) > 0 || len(p.ops) > 0 || p.change != nil
	})
}

// event collects a hop event with payload p. An encoding error is returned, never stored:
// an ignored one once wrote null into the hash chain, and the claim it held was lost.
func (wc *workCommit) event(id, actor string, p event.Payload) error {
	ne, err := eventlog.New("", id, contract.Principal(actor), wc.now, p)
	if err != nil {
		return err
	}
	wc.events = append(wc.events, ne)
	return nil
}

// opChange is an Operation's change and who makes it.
type opChange struct {
	e  event.Operation
	by contract.Principal
}

// op collects an Operation's change, made by wc.opBy as it stands now.
func (wc *workCommit) op(e event.Operation) { wc.opAs(e, wc.opBy) }

// opAs collects an Operation's change made by by: several claims committed together
// each change their Operation as their own Tool.
func (wc *workCommit) opAs(e event.Operation, by contract.Principal) {
	wc.ops = append(wc.ops, opChange{e: e, by: by})
}

// setLease makes l the Connection's lease when wc commits.
func (wc *workCommit) setLease(l *lease) { wc.newLease = l }

// commitWork runs fn in one transaction under project's Operation and hop locks, and,
// when onBoard is set, the project's Board lock before them (the lock order is in the
// package doc), and commits what fn collected. Only a call that may change the Board
// (a report applying an outcome) sets onBoard; a claim, an acquisition or a sweep keeps
// the Board's lock free for the project's other calls. With a Connection, the
// transaction first locks that Connection's lease row and fn sees it in wc.lease; the
// Operation and hop ledgers are caught up after that lock, inside the transaction, so
// they hold every claim, report and acquisition that any instance committed under that
// lease. That is what fences a takeover against a claim under the old generation:
// whichever locks the row second sees the first's commit. When fn fails nothing is
// written. A Board change the store refuses is dropped from memory.
//
// With onBoard, when another instance changed the Board first, fn runs once more on the
// rebuilt Board with everything caught up again (the write sequence,
// [boards.Cache.Write]), so fn must only read state and collect into wc.
func (d *Dispatcher) commitWork(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID, onBoard bool,
	fn func(wc *workCommit) error) error {
	if !onBoard {
		return d.commitWorkOnce(ctx, project, conn, nil, fn)
	}
	return d.boards.Write(ctx, project, "worker hop commit", func(bw *boards.Write) error {
		return d.commitWorkOnce(ctx, project, conn, bw, fn)
	})
}

// errHopBoardUnlocked is a hop call that changed the Board without taking its lock: a
// bug in this package, refused before anything is written.
var errHopBoardUnlocked = errors.New("a worker hop call changed the Board without its lock")

// commitWorkOnce is one attempt of commitWork; bw is the Board write it runs in, or nil
// without the Board.
func (d *Dispatcher) commitWorkOnce(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID, bw *boards.Write,
	fn func(wc *workCommit) error) error {
	var b *board.Board
	if bw != nil {
		b = bw.Board()
	}
	l := d.ops.ledger(project)
	l.mu.Lock()
	defer l.mu.Unlock()
	w := d.work(project)
	w.mu.Lock()
	defer w.mu.Unlock()
	var wc *workCommit
	var refused error // fn's error, returned as fn gave it
	after := int64(-1)
	var left int64 // the head the commit leaves, which the ledgers then catch up to
	err := d.store.Update(ctx, func(tx store.Tx) error {
		wc = &workCommit{b: b, l: l, w: w, now: d.nowUTC(), conn: conn, opBy: "system"}
		if conn != "" {
			row, err := tx.LockLease(ctx, string(project), string(conn))
			if err != nil {
				return fmt.Errorf("lock lease of %s: %w", conn, err)
			}
			wc.lease = leaseOf(row)
		}
		// One head read serves both ledgers: nothing can append between them, and an
		// instance that appends after it did so after the lease row was locked here.
		head, err := tx.Head(ctx, string(project))
		if err != nil {
			return fmt.Errorf("read the head of %s: %w", project, err)
		}
		if err := l.catchUpToLocked(ctx, tx, project, head.Seq); err != nil {
			return err
		}
		if err := w.catchUpToLocked(ctx, tx, project, head.Seq); err != nil {
			return err
		}
		if refused = fn(wc); refused != nil {
			return refused
		}
		if wc.changed() && bw == nil {
			return errHopBoardUnlocked
		}
		if err := d.writeWork(ctx, tx, project, bw, wc, &after); err != nil {
			return err
		}
		left, err = eventlog.HeadLeft(ctx, tx, project)
		return err
	})
	if err != nil {
		if wc != nil && wc.changed() && bw != nil {
			bw.Drop(ctx) // memory never keeps a change the log lacks
		}
		if refused != nil {
			return refused
		}
		if errors.Is(err, boards.ErrWroteFirst) {
			return err
		}
		return fmt.Errorf("worker hop commit: %w", err)
	}
	if after >= 0 {
		bw.Committed(after)
	}
	if wc.writesAny() {
		if err := l.catchUpToLocked(ctx, d.store, project, left); err != nil {
			return err
		}
		if err := w.catchUpToLocked(ctx, d.store, project, left); err != nil {
			return err
		}
	}
	return wc.answer
}

// writeWork writes what wc collected in tx. A Board change is written only if the Board
// it was made on is still the project's ([boards.Write.LockFresh], taken after the lease
// row); then *after is the head it leaves.
func (d *Dispatcher) writeWork(ctx context.Context, tx store.Tx, project contract.ProjectID, bw *boards.Write, wc *workCommit, after *int64) error {
	if wc.newLease != nil {
		if err := tx.PutLease(ctx, store.Lease{Project: string(project), Connection: string(wc.conn), WorkerID: wc.newLease.worker,
			Generation: wc.newLease.gen, ExpiresAt: wc.newLease.expires}); err != nil {
			return fmt.Errorf("write lease: %w", err)
		}
	}
	changed := wc.changed()
	if changed {
		if err := bw.LockFresh(ctx, tx); err != nil {
			return err
		}
	}
	for _, p := range wc.all() {
		for _, e := range p.events {
			e.Project = string(project)
			if _, err := tx.Append(ctx, e); err != nil {
				return fmt.Errorf("append %s event: %w", e.Type, err)
			}
		}
		if p.change != nil {
			if err := bw.Persist(ctx, tx, *p.change, p.opBy, p.now); err != nil {
				return err
			}
		}
		for _, c := range p.ops {
			if err := eventlog.Append(ctx, tx, project, c.by, p.now, event.OpChangedData(c.e)); err != nil {
				return err
			}
		}
		for _, write := range p.writes {
			if err := write(tx); err != nil {
				return err
			}
		}
	}
	if changed {
		head, err := tx.LockHead(ctx, string(project))
		if err != nil {
			return err
		}
		*after = head.Seq
	}
	return nil
}
