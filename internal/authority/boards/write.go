package boards

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// ErrWroteFirst refuses a write because another instance wrote first: it changed the
// Board this one ran on, or (wrapped by the caller's own error) took what the write was
// about to take. [Cache.Write] runs the write again on what it reads again.
var ErrWroteFirst = errors.New("another instance wrote first")

// errBoardStale refuses a Board write because another writer changed project's Board
// after this instance built it.
var errBoardStale = fmt.Errorf("the board changed in another instance: %w", ErrWroteFirst)

// writeAttempts is how many times [Cache.Write] runs a write while other instances keep
// writing first. Each refusal means another serve's write landed, so the attempts make
// progress; several serves over one project refused a busy Board's writes at the second
// (a worker then sent its report again a second later), so a write is tried a few times
// before the caller is told (benchmarks/README.md, "Three serves on one PostgreSQL").
const writeAttempts = 5

// staleRefusal is a write refused writeAttempts times because other instances kept
// writing first.
func staleRefusal(err error) error {
	return &contract.Error{Code: contract.CodeUnavailable, Err: err,
		Teaching: "another docket serve changed this project's Board at the same moment; send the call again."}
}

// Write is one attempt of a write on a project's Board, run by [Cache.Write] with the
// project's Board lock held and the Board caught up with the log.
type Write struct {
	bs      *Cache
	project contract.ProjectID
	what    string // what the write does, for its errors
	pb      *projectBoard
	// unread: the Board was caught up only to the newest head this process knew, not to
	// one read from the store, before the write began ([Cache.WriteInTx]); its
	// transaction checks it with [Write.Fresh], and a decision taken without one with
	// [Write.Current].
	unread bool // seq is the head of the log the Board was caught up to when the write began.
	seq    int64
	// dropped: the Board was rebuilt from the store during the write ([Write.Drop]).
	dropped bool
	// tent records the Board's changes made in memory ahead of their transaction
	// ([Write.Tentative]).
	tent *board.Tentative
}

// Project is the project written.
func (w *Write) Project() contract.ProjectID { return w.project }

// Seq is the sequence number of the log's head the Board was caught up to when the write
// began: read from the store ([Cache.Write]), or the newest this process knew
// ([Cache.WriteInTx]). What the write reads beside the Board is read at it (see
// [eventlog.WithHead]).
func (w *Write) Seq() int64 { return w.seq }

// Held is the project's log as the write holds it, under the project's one lock: a step
// of the write that reads another part's State of the project (the operation ledger, the
// policies) takes it through it ([eventlog.Along]) and never locks again
// (docs/architecture.md, "The lock order"). Its catch-ups apply nothing to the Board the
// write may have changed in memory (boardPart).
func (w *Write) Held() eventlog.Holding { return w.pb.h }

// Board is the project's Board, caught up with the log. A write changes it only through
// a Board call whose [Change] it then commits.
func (w *Write) Board() *board.Board { return w.pb.st().b }

// Write is the write sequence every write on a project's Board runs: lock the project's
// Board, catch it up with the log, run once (which reads what it decides on and commits
// with [Write.Commit]), and when another instance wrote first ([ErrWroteFirst]) run again
// on what is read again, up to writeAttempts times in all; the last refusal reaches the
// caller as unavailable. once must change nothing but the Board it is given and what it
// commits, so running it again is safe. what says what the write does, for its errors.
func (a *Cache) Write(ctx context.Context, project contract.ProjectID, what string, once func(w *Write) error) error {
	return a.write(ctx, project, what, false, once)
}

// WriteInTx is [Cache.Write] for a write whose transaction reads the log's head anyway
// before it decides (a worker's report, an admission): its first attempt catches the
// Board up to the newest head this process knows without asking the store (the Board's
// cursor, the last seq this process committed, [eventlog.Latest], or the head ctx
// carries, [eventlog.WithHead]: in a single docket serve every event is its own; for
// staleSpan events after a check found another instance's Board change, it reads the
// head first instead, as Write does), and
// once checks it inside its transaction at the head read or locked there
// ([Write.Fresh]) before deciding on it, or, for a decision it takes without a
// transaction, at a head it reads then ([Write.Current]). That check, like LockFresh's
// under the head lock, is what keeps a write off a stale Board; the read before the
// write is only the cheaper way to find one. When another instance changed the Board,
// the write runs again as Write runs it, caught up to a head read first.
func (a *Cache) WriteInTx(ctx context.Context, project contract.ProjectID, what string, once func(w *Write) error) error {
	return a.write(ctx, project, what, true, once)
}

func (a *Cache) write(ctx context.Context, project contract.ProjectID, what string, inTx bool, once func(w *Write) error) error {
	for attempt := 1; ; attempt++ {
		err := a.writeOnce(ctx, project, what, inTx && attempt == 1, once)
		if !errors.Is(err, ErrWroteFirst) {
			return err
		}
		if attempt == writeAttempts {
			return fmt.Errorf("%s: %w", what, staleRefusal(err))
		}
	}
}

// writeOnce runs one attempt of a write; unread catches a built Board up to the newest
// head this process knows, not one read from the store, for the write to check
// ([Write.Fresh], [Write.Current]).
func (a *Cache) writeOnce(ctx context.Context, project contract.ProjectID, what string, unread bool, once func(w *Write) error) error {
	pb := a.lock(project)
	defer pb.unlock()
	unread = unread && pb.st().b != nil
	bctx := ctx
	if unread {
		// Every seq up to Latest was committed, so the Board may be brought there: its
		// events come from memory, and another instance's among them from the store.
		known := max(eventlog.Latest(a.store, project), pb.h.Seq())
		if seq, ok := eventlog.KnownHead(ctx, project); ok {
			known = max(known, seq)
		}
		// While another instance goes on changing the Board, the head is read first, as
		// Write reads it: the check in the transaction would find its next change and
		// run the write again.
		if pb.changedAt > 0 && known-pb.changedAt < staleSpan {
			unread = false
		} else {
			bctx = eventlog.WithHead(ctx, project, known)
		}
	}
	if _, err := a.boardLocked(bctx, project, pb); err != nil {
		return err
	}
	pb.version++ // once may change the Board
	// Held until once ends: the catch-ups its steps make apply nothing to the Board it
	// may change in memory (boardPart).
	pb.st().hold = true
	err := once(&Write{bs: a, project: project, what: what, pb: pb, unread: unread, seq: pb.st().seq})
	a.settleLocked(ctx, project, pb)
	// Before the next write may change it: the Board holds only what was committed (a
	// change the store refused was dropped), see published.go.
	pb.publishLocked(false)
	return err
}

// Fresh checks, in tx, that the Board holds every Board change of the log up to head, a
// head tx read or locked, and refuses with [ErrWroteFirst] when another instance
// changed the Board since this instance caught it up; [Cache.WriteInTx] then runs the
// write again, caught up first. A write caught up when it began ([Cache.Write]) needs
// no check here: it was checked then, and LockFresh checks a change again.
func (w *Write) Fresh(ctx context.Context, tx store.Tx, head int64) error {
	if !w.unread {
		return nil
	}
	ok, err := w.pb.unchanged(ctx, tx, w.project, head)
	if err != nil {
		return err
	}
	if !ok {
		return errBoardStale
	}
	return nil
}

// errLogMoved refuses a decision taken without a transaction on a Board caught up only
// to the newest head this process knew ([Cache.WriteInTx]), when the log moved past it.
var errLogMoved = fmt.Errorf("the log moved past the head the write decided at: %w", ErrWroteFirst)

// Current checks, for a decision the write takes without a transaction (an admission
// refused at its gate, which writes nothing), that the log's head is still the one the
// Board and what the write read beside it were caught up to ([Write.Seq]), reading it
// once, and refuses with [ErrWroteFirst] when it moved, for [Cache.WriteInTx] to run
// the write again, caught up to a head read first. A write caught up to a head read
// when it began ([Cache.Write]) decided at that read, and needs no check.
func (w *Write) Current(ctx context.Context) error {
	if !w.unread {
		return nil
	}
	head, err := w.bs.store.Head(ctx, string(w.project))
	if err != nil {
		return fmt.Errorf("read head of %s: %w", w.project, err)
	}
	if head.Seq != w.seq {
		return errLogMoved
	}
	return nil
}

// Commit persists ch (nil when the Board is unchanged) with its event, by actor at at,
// between what before and after write (either may be nil), in one store transaction
// that commits only while the Board ch was made on is still the project's. When the store
// refuses, a changed Board is rebuilt from the store, so memory never holds a change the
// log lacks. A refusal because another instance wrote first is returned as it is, for
// [Cache.Write] to run again; any other is wrapped with what the write does, noun naming
// what it records.
func (w *Write) Commit(ctx context.Context, ch *Change, actor contract.Principal, at time.Time, noun string, before, after func(tx store.Tx) error) error {
	// The events are collected and appended with one store call (eventlog.Collect).
	err := w.bs.updateBoard(ctx, w.project, w.pb, ch != nil, func(tx store.Tx) error {
		return eventlog.Collect(ctx, tx, w.project, func(tx store.Tx) error {
			if before != nil {
				if err := before(tx); err != nil {
					return err
				}
			}
			if ch != nil {
				if err := w.Persist(ctx, tx, *ch, actor, at); err != nil {
					return err
				}
			}
			if after != nil {
				return after(tx)
			}
			return nil
		})
	})
	if err == nil {
		return nil
	}
	if ch != nil {
		w.Drop(ctx)
	}
	if errors.Is(err, ErrWroteFirst) {
		return err
	}
	return fmt.Errorf("%s: %w", w.what, eventlog.Refuse(err, noun))
}

// The parts of Commit, for a write that must take other locks in its transaction before
// the log's head (the worker hop locks a lease row first): in tx, [Write.LockFresh], then
// [Write.Persist], then, once tx committed, [Write.Committed] with the head it left, or
// [Write.Drop] when it did not.

// LockFresh locks the project's log head in tx, so no other writer appends until tx
// ends, and refuses with [ErrWroteFirst] when another instance changed the Board since it
// was read.
func (w *Write) LockFresh(ctx context.Context, tx store.Tx) error {
	return lockFresh(ctx, tx, w.project, w.pb)
}

// Persist writes ch's node and Case records and appends its event, then the
// [event.BoardRecorded] event holding those records in full, by actor at at, in tx. A
// Case close and an executed Action's outcome are then sealed by a signed checkpoint of
// the head, which covers their receipts, and so is a write that finds the log at least
// every events past this instance's last checkpoint.
func (w *Write) Persist(ctx context.Context, tx store.Tx, ch Change, actor contract.Principal, at time.Time) error {
	rec, ok, err := persistChange(ctx, tx, w.project, ch)
	if err != nil {
		return err
	}
	if err := eventlog.Append(ctx, tx, w.project, actor, at, ch.Event); err != nil {
		return err
	}
	if ok {
		if err := eventlog.Append(ctx, tx, w.project, actor, at, rec); err != nil {
			return err
		}
	}
	if w.bs.signer == nil {
		return nil
	}
	var reason, id string
	if len(ch.Cases) > 0 {
		id = string(ch.Cases[0].CaseID)
	}
	switch ch.Event.EventType() {
	case event.CaseClosed:
		reason = signing.ReasonCaseClosed
	case event.ActionCompleted:
		reason = signing.ReasonActionCompleted
	default:
		// The head the transaction leaves so far, held-back events included
		// (eventlog.Collect), without appending them.
		left, err := eventlog.HeadLeft(ctx, tx, w.project)
		if err != nil {
			return err
		}
		if left-w.pb.signed < w.bs.every {
			return nil
		}
		reason, id = signing.ReasonEvents, ""
	}
	cp, err := w.bs.appendCheckpoint(ctx, tx, w.project, reason, id, at)
	if err != nil {
		return err
	}
	// Set before the commit is known: a refused commit only delays the next checkpoint
	// by up to every events, which the interval checkpoints cover.
	w.pb.signed = cp.Seq
	return nil
}

// Committed records that the Board reflects the log up to head, after a transaction
// that LockFresh began committed: the project's log is caught up there (from memory, the
// commit's own events) and the Board made the State at it, linked (follow.go).
func (w *Write) Committed(ctx context.Context, head int64) {
	w.bs.committedLocked(ctx, w.project, w.pb, head)
}

// Tentative records the changes the write's steps make to the Board in memory from now
// on, ahead of the transaction that would write them (an admission's gate runs its
// calls on the Board before it), until [Write.EndTentative].
func (w *Write) Tentative() {
	if b := w.Board(); b != nil && w.tent == nil {
		w.tent = b.Tentative()
	}
}

// EndTentative ends the record [Write.Tentative] began: the changes are kept when their
// transaction committed (kept), and otherwise taken back, so the Board holds no change
// its log lacks; when they cannot be taken back exactly ([board.Tentative.Undo]) the
// Board is built again, as when it was dropped already.
func (w *Write) EndTentative(ctx context.Context, kept bool) {
	t := w.tent
	if t == nil {
		return
	}
	w.tent = nil
	switch {
	case kept:
		t.Keep()
	case w.dropped:
		// Built again from the store already: t is of a Board no longer used.
	case !t.Undo():
		w.Drop(ctx)
	}
}

// Drop rebuilds the Board after a transaction with a change the store refused, or a
// change made in memory that no transaction carried. It rebuilds once per write: the
// commit that refused a change and the write that made it may both drop it.
func (w *Write) Drop(ctx context.Context) {
	if w.dropped {
		return
	}
	w.dropped = true
	w.bs.dropBoardLocked(ctx, w.project, w.pb)
}
