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

// workCommit collects what one write of an Operation's life writes (an admission, or a
// hop call): events, Operation changes, at most one Board change, writes of its own and
// the Connection's new lease, committed in one transaction by [Operations.commitLocked].
type workCommit struct {
	b        *board.Board
	l        *ledger
	now      time.Time
	conn     contract.ConnectionID // the Connection whose lease is locked, or ""
	leases   leaseSet              // the Connection's leases as locked in the transaction; nil without one
	newLease *lease                // the lease to write (in its slot), or nil
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
	return &workCommit{b: wc.b, l: wc.l, now: wc.now, conn: wc.conn, leases: wc.leases, opBy: "system"}
}

// all returns wc and its parts, in the order they are written.
func (wc *workCommit) all() []*workCommit { return append([]*workCommit{wc}, wc.parts...) }

// changed reports whether wc or a part of it changes the Board.
func (wc *workCommit) changed() bool {
	return slices.ContainsFunc(wc.all(), func(p *workCommit) bool { return p.change != nil })
}

// event collects an event with payload p. An encoding error is returned, never stored:
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

// commitSpec says how one write of an Operation's life commits.
type commitSpec struct {
	project contract.ProjectID
	// conn is the Connection whose lease row the transaction locks first, or "".
	conn contract.ConnectionID
	// lockHead locks the log's head before the ledger catches up, rather than only reading
	// it: an admission, which no lease row serializes, keeps every other writer of the
	// project out from its catch-up to its commit, so no other instance takes the
	// ordinal it decides on.
	lockHead bool
	// knownHead, when not zero, is a head of the log the call read, which the ledger was
	// caught up to: the transaction reads no head and decides there
	// ([eventlog.Write.KnownHead]), for a write whose rules the store's own checks hold
	// at the commit (a decision: its row, docs/architecture.md, "Decisions that hold").
	knownHead int64
	// bw is the Board write the commit runs in, or nil for a write that never changes the
	// Board and leaves the Board's lock free.
	bw *boards.Write
	// at is the time the decision is made at; when zero, clock is read once per
	// transaction, in UTC at the precision the event log keeps.
	at    time.Time
	clock func() time.Time
	// by makes the Operation changes the decision collects, unless it says otherwise.
	by contract.Principal
	// wrap, when set, wraps a failure of the transaction itself (not the decision's own
	// refusal, and not [boards.ErrWroteFirst], which the write sequence runs again on).
	wrap func(error) error
}

// errBoardUnlocked is a write that changed the Board without taking its lock: a bug in
// this package, refused before anything is written.
var errBoardUnlocked = errors.New("a write of an Operation changed the Board without its lock")

// commitLocked is the one write path of an Operation's life, which an admission and
// every hop call that writes (an acquisition, a release, claims, reports, a sweep, a
// reconciliation, an explanation) take: the project's write sequence
// ([eventlog.Held.UpdateWith]), which in one store transaction locks the Connection's
// lease rows (s.conn) before the log's head, reads the head once (locks it, with
// s.lockHead), checks s.bw's Board at that head, catches the project's ledger l up to it
// inside the transaction, runs decide, which reads that state and collects into wc what
// it writes, appends what decide collected in one call, commits, and then catches the
// ledger up to the head its commit left. l must be locked: through s.bw's hold of the
// project's lock ([ledger.lockAlong]) for a write on the Board, which never locks again
// (the lock order is in the authority's package doc).
//
// Catching up after the lease row lock, inside the transaction, is what fences a
// takeover against a claim under the old generation: whichever locks the row second sees
// the first's commit; and, under the head lock, what keeps an admission's ordinal its
// own. When decide fails nothing is written and its error is returned as it gave it. A
// Board change the store refuses is dropped from memory, so memory never keeps a change
// the log lacks; a refusal because another instance wrote first ([boards.ErrWroteFirst])
// is returned as it is, for the write sequence ([boards.Cache.Write]) to run decide once
// more on what it reads again, so decide must only read state and collect into wc.
func (o *Operations) commitLocked(ctx context.Context, s commitSpec, l *ledger, decide func(wc *workCommit) error) error {
	var b *board.Board
	if s.bw != nil {
		b = s.bw.Board()
	}
	var wc *workCommit
	var refused error // decide's error, returned as decide gave it
	w := eventlog.Write{
		ReadHead:  !s.lockHead,
		KnownHead: s.knownHead,
		Before: func(ctx context.Context, tx store.Tx) (int64, error) {
			now := s.at
			if now.IsZero() {
				now = s.clock().UTC().Round(0)
			}
			wc = &workCommit{b: b, l: l, now: now, conn: s.conn, opBy: s.by}
			if s.conn == "" {
				return 0, nil
			}
			// The head read with the rows, after their locks, is the write sequence's one
			// head read (Write.ReadHead; docs/architecture.md, "One commit function").
			rows, head, err := tx.LockLeasesHead(ctx, string(s.project), string(s.conn))
			if err != nil {
				return 0, fmt.Errorf("lock leases of %s: %w", s.conn, err)
			}
			wc.leases = leasesOf(rows)
			return head.Seq, nil
		},
	}
	if s.bw != nil {
		// A report's or an admission's Board is checked at the head read or locked here,
		// rather than by a head read before the write ([boards.Cache.WriteInTx]).
		w.AtHead = s.bw.Fresh
	}
	left, err := l.held.UpdateWith(ctx, w, func(tx store.Tx, st *ledgerState) error {
		l.ledgerState = st
		if refused = decide(wc); refused != nil {
			return refused
		}
		if wc.changed() && s.bw == nil {
			return errBoardUnlocked
		}
		return writeWork(ctx, tx, s.project, s.bw, wc)
	})
	l.caughtUp(nil) // a catch-up may have rebuilt the State, also on a failure
	if err = l.committed(ctx, err); err != nil {
		if wc != nil && wc.changed() && s.bw != nil {
			s.bw.Drop(ctx) // memory never keeps a change the log lacks
		}
		if refused != nil {
			return refused
		}
		if errors.Is(err, boards.ErrWroteFirst) || s.wrap == nil {
			return err
		}
		return s.wrap(err)
	}
	// Committed: a changed Board's cursor moves to the head the commit left, even when
	// the ledger's catch-up after the commit failed (its next catch-up applies it).
	if wc.changed() {
		s.bw.Committed(ctx, left)
	}
	return wc.answer
}

// commitWork runs fn, a hop call's decision, through [Operations.commitLocked] under
// project's ledger, and, when onBoard is set, in a write on the Board, whose hold of the
// project's lock the ledger is taken through. Only a call that may change the Board (a report applying an
// outcome) sets onBoard; a claim, an acquisition or a sweep keeps the Board's lock free
// for the project's other calls. With a Connection, the transaction first locks that
// Connection's lease row and fn sees them in wc.leases. With onBoard, when another instance
// changed the Board first, fn runs once more on the rebuilt Board with everything caught
// up again (the write sequence, [boards.Cache.Write]).
func (d *Dispatcher) commitWork(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID, onBoard bool,
	fn func(wc *workCommit) error) error {
	if !onBoard {
		return d.commitWorkOnce(ctx, project, conn, nil, fn)
	}
	return d.boards.WriteInTx(ctx, project, "worker hop commit", func(bw *boards.Write) error {
		return d.commitWorkOnce(ctx, project, conn, bw, fn)
	})
}

// commitWorkOnce is one attempt of commitWork; bw is the Board write it runs in, or nil
// without the Board.
func (d *Dispatcher) commitWorkOnce(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID, bw *boards.Write,
	fn func(wc *workCommit) error) error {
	l := d.ops.ledger(project)
	if bw != nil {
		l.lockAlong(bw.Held())
	} else {
		l.lock()
	}
	defer l.unlock()
	return d.ops.commitLocked(ctx, commitSpec{project: project, conn: conn, bw: bw, clock: d.now, by: "system",
		wrap: func(err error) error { return fmt.Errorf("worker hop commit: %w", err) }}, l, fn)
}

// writeWork writes what wc collected in tx. A Board change is written only if the Board
// it was made on is still the project's ([boards.Write.LockFresh], taken after the lease
// row). tx is the write sequence's ([eventlog.Held.UpdateWith]), which appends the events
// collected here in one call and hands back the head they leave.
func writeWork(ctx context.Context, tx store.Tx, project contract.ProjectID, bw *boards.Write, wc *workCommit) error {
	if wc.newLease != nil {
		if err := tx.PutLease(ctx, store.Lease{Project: string(project), Connection: string(wc.conn), Slot: wc.newLease.slot, WorkerID: wc.newLease.worker,
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
	// The events are held back by tx and appended with one store call, at the end or
	// when a write reads the log (docs/architecture.md, "The write sequence").
	for _, p := range wc.all() {
		for _, e := range p.events {
			e.Project = string(project)
			if err := eventlog.AppendNew(ctx, tx, e); err != nil {
				return err
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
	return nil
}
