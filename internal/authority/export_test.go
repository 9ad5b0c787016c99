package authority

import (
	"context"
	"slices"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// BoardBuilds reports how often a's Board of project was built from the store, so tests
// can show that a fresh Board is kept and a stale one rebuilt.
func (a *Authority) BoardBuilds(project contract.ProjectID) int { return a.boards.Builds(project) }

// View runs fn on project's Board for reading, under the project's lock, so tests can
// look at the Board itself rather than at what a caller is shown of it.
func (a *Authority) View(ctx context.Context, project contract.ProjectID, fn func(b *board.Board) error) error {
	return a.boards.View(ctx, project, fn)
}

// Commit runs fn on project's Board and persists what it changed, the node and Case
// records and one event, in one store transaction, through the write sequence every
// production write uses, so tests can write a Board directly. Either all of it is
// kept or none: when fn fails the Board is unchanged (board mutations are all-or-nothing);
// when the store fails, the Board is rebuilt from the store, so memory never holds a
// change the log lacks. Calls on one project are serialized in this instance; when
// another instance changed the Board first, the Board is rebuilt and fn runs once more,
// so fn must change nothing but the Board it is given.
func (a *Authority) Commit(ctx context.Context, project contract.ProjectID, actor contract.Principal, fn func(b *board.Board) (boards.Change, error)) error {
	return a.boards.Write(ctx, project, "commit to "+string(project), func(w *boards.Write) error {
		ch, err := fn(w.Board())
		if err != nil {
			return err
		}
		return w.Commit(ctx, &ch, actor, a.nowUTC(), "record", nil, nil)
	})
}

// Dispatched records that a worker took the agent's queued Operation ordinal: its stage
// becomes at_worker, as a claim makes it, without the hop. The Operation must be queued
// for a worker ([operation.Operations.Queued]); the ledger reads the event at its next
// catch-up, as it reads another instance's.
func (o *Operations) Dispatched(ctx context.Context, project contract.ProjectID, agent string, ordinal int64) error {
	queued, err := o.ops.Queued(ctx, project)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(queued, func(d operation.Dispatch) bool { return d.Agent == agent && d.Ordinal == ordinal }) {
		return contract.Errorf(contract.CodeInvalidArgument, "operation %d of %s is not queued for a worker", ordinal, agent)
	}
	ev := event.OpChangedData{Agent: agent, Ordinal: ordinal, State: contract.OpRunning, Stage: contract.StageAtWorker}
	return o.a.store.Update(ctx, func(tx store.Tx) error {
		return eventlog.Append(ctx, tx, project, contract.NewPrincipal(contract.PrincipalAgent, agent), o.a.nowUTC(), ev)
	})
}

// WriteInTx runs a Board write as a worker's report runs it ([boards.Cache.WriteInTx]),
// one that changes nothing: each attempt reads the head in its transaction and checks
// the Board there ([boards.Write.Fresh]); fn sees the Board of the attempt that passed.
// It returns how many attempts ran.
func (a *Authority) WriteInTx(ctx context.Context, project contract.ProjectID, fn func(b *board.Board)) (attempts int, err error) {
	err = a.boards.WriteInTx(ctx, project, "test write", func(w *boards.Write) error {
		attempts++
		return a.store.Update(ctx, func(tx store.Tx) error {
			head, err := tx.Head(ctx, string(project))
			if err != nil {
				return err
			}
			if err := w.Fresh(ctx, tx, head.Seq); err != nil {
				return err
			}
			fn(w.Board())
			return nil
		})
	})
	return attempts, err
}

// JoinLog joins to a's project log a part whose States fresh makes (eventlog.Join), so
// that a test can have one State refuse an event every other part applies.
func JoinLog[S eventlog.State](a *Authority, fresh func() S) *eventlog.Driver[S] {
	return eventlog.Join(a.projectLog, fresh)
}
