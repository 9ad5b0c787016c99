package authority

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// wroteFirst reports whether err refuses a write because another instance wrote first:
// it changed the Board this one ran on, or took the Operation ordinal it admitted. The
// write runs once more on what is read again.
func wroteFirst(err error) bool {
	return errors.Is(err, errBoardStale) || errors.Is(err, errOrdinalTaken)
}

// boardWrite is one attempt of a write on a project's Board, run by [Authority.write]
// with the project's Board lock held and the Board caught up with the log.
type boardWrite struct {
	a       *Authority
	project contract.ProjectID
	what    string // what the write does, for its errors
	pb      *projectBoard
	b       *board.Board
}

// write is the write sequence every write on a project's Board runs: lock the project's
// Board, catch it up with the log, run once (which reads what it decides on and commits
// with [boardWrite.commit]), and when another instance wrote first run once more on what
// is read again; a second refusal reaches the caller as unavailable. once must change
// nothing but the Board it is given and what it commits, so running it again is safe.
func (a *Authority) write(ctx context.Context, project contract.ProjectID, what string, once func(w *boardWrite) error) error {
	for retried := false; ; retried = true {
		err := a.writeOnce(ctx, project, what, once)
		if !wroteFirst(err) {
			return err
		}
		if retried {
			return fmt.Errorf("%s: %w", what, staleRefusal(err))
		}
	}
}

func (a *Authority) writeOnce(ctx context.Context, project contract.ProjectID, what string, once func(w *boardWrite) error) error {
	pb := a.boards.get(project)
	pb.mu.Lock()
	defer pb.mu.Unlock()
	b, err := a.boardLocked(ctx, project, pb)
	if err != nil {
		return err
	}
	return once(&boardWrite{a: a, project: project, what: what, pb: pb, b: b})
}

// commit persists ch (nil when the Board is unchanged) with its event, by actor at at,
// between what before and after write (either may be nil), in one store transaction that commits only while the Board ch
// was made on is still the project's. When the store refuses, a changed Board is rebuilt
// from the store, so memory never holds a change the log lacks. A refusal because another
// instance wrote first is returned as it is, for [Authority.write] to run again; any other
// is wrapped with what the write does, noun naming what it records.
func (w *boardWrite) commit(ctx context.Context, ch *Change, actor contract.Principal, at time.Time, noun string, before, after func(tx store.Tx) error) error {
	err := w.a.updateBoard(ctx, w.project, w.pb, ch != nil, func(tx store.Tx) error {
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		if ch != nil {
			if err := persistChange(ctx, tx, w.project, *ch); err != nil {
				return err
			}
			if err := eventlog.Append(ctx, tx, w.project, ch.Event, actor, at, ch.Data); err != nil {
				return err
			}
		}
		if after != nil {
			return after(tx)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	if ch != nil {
		w.a.dropBoardLocked(ctx, w.project, w.pb)
	}
	if wroteFirst(err) {
		return err
	}
	return fmt.Errorf("%s: %w", w.what, eventlog.Refuse(err, noun))
}
