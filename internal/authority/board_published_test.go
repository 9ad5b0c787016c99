package authority_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// commitItem asserts the fact item(n) on a's Board as admin, a member's Board write:
// it holds the project's Board lock across its store transaction.
func commitItem(ctx context.Context, a *authority.Authority, admin identity.Caller, n string) error {
	return a.Commit(ctx, "default", admin.Principal(), func(bd *board.Board) (boards.Change, error) {
		res, err := bd.ApplyBatch(board.Author{Principal: admin.Principal(), Tier: contract.TierAttested},
			contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.StringValue(n)}}}}})
		if err != nil {
			return boards.Change{}, err
		}
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, nil
	})
}

// viewHasItem reports whether the View an answer carries lists the fact item(n).
func viewHasItem(v contract.View, n string) bool {
	for _, node := range v.Nodes.Items {
		if node.Atom != nil && node.Atom.Predicate == "item" && node.Atom.Args["n"] == contract.StringValue(n) {
			return true
		}
	}
	return false
}

// TestOperations_QueryDuringBoardWrite shows that an Agent's QueryBoard does not wait
// for a write that holds the project's Board lock across its store transaction: it is
// answered meanwhile from what the Board cache published at its last commit, without the
// change still in flight, and once the write commits the next QueryBoard shows it
// (docs/architecture.md, "The project state and its driver").
func TestOperations_QueryDuringBoardWrite(t *testing.T) {
	ps := pausedSQLite(t)
	f := opsFixtureOver(t, ps, time.Millisecond)
	ctx := t.Context()
	if err := commitItem(ctx, f.a, f.admin, "1"); err != nil {
		t.Fatal(err)
	}
	queryBoard(t, f.ops, f.agent) // the View is built, and published with the Board

	release, done := startPaused(t, ps, func() error { return commitItem(ctx, f.a, f.admin, "2") })
	during := queryBoard(t, f.ops, f.agent)
	release()
	if err := <-done; err != nil {
		t.Fatalf("the Board write: %v", err)
	}
	if v := during.Result.View; !viewHasItem(v, "1") || viewHasItem(v, "2") {
		t.Errorf("QueryBoard during the write's transaction shows %+v, want item 1 and not item 2", v.Nodes.Items)
	}
	if v := queryBoard(t, f.ops, f.agent).Result.View; !viewHasItem(v, "2") {
		t.Errorf("QueryBoard after the write committed shows %+v, want item 2", v.Nodes.Items)
	}
}

// TestOperations_PublishedBoardNotStale shows that what the Board cache published never
// answers past the head a call read: another instance over the same store changes the
// Board, and the next QueryBoard of this instance shows the change, on both backends,
// also when the operation ledger's snapshot already covers that head.
func TestOperations_PublishedBoardNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			f, other := twoInstances(t, be.open)
			ctx := t.Context()
			for round := range 3 {
				n := fmt.Sprint(round)
				before := queryBoard(t, f.ops, f.agent)
				queryBoard(t, f.ops, f.agent) // read again, now from what was published
				if err := commitItem(ctx, other, f.admin, n); err != nil {
					t.Fatalf("the other instance's Board write: %v", err)
				}
				if round%2 == 1 {
					// The strip catches the ledger up to the new head, so only the
					// Board's check keeps the QueryBoard off the published Board.
					if _, err := f.ops.Operations().State(ctx, f.agent); err != nil {
						t.Fatal(err)
					}
				}
				after := queryBoard(t, f.ops, f.agent)
				if !viewHasItem(after.Result.View, n) {
					t.Errorf("round %d: QueryBoard after another instance's Board change shows %+v, want item %s", round, after.Result.View.Nodes.Items, n)
				}
				if after.Meta.BoardRevision <= before.Meta.BoardRevision {
					t.Errorf("round %d: QueryBoard after another instance's change answers at %d, want past %d", round, after.Meta.BoardRevision, before.Meta.BoardRevision)
				}
			}
		})
	}
}

// TestOperations_PublishedBoardFailedCommit shows that a Board change whose COMMIT
// fails is never answered from what the Board cache published: not while its
// transaction is open, not after its COMMIT failed, on both backends (a deferred
// constraint fails the COMMIT for real); the same change committed is answered.
func TestOperations_PublishedBoardFailedCommit(t *testing.T) {
	for _, be := range scenarioBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, _, exec := be.open(t)
			for _, q := range be.failAtCommit {
				exec(q)
			}
			ps := &pauseStore{Store: s1}
			f := opsFixtureOver(t, ps, time.Millisecond)
			ctx := t.Context()
			if err := commitItem(ctx, f.a, f.admin, "1"); err != nil {
				t.Fatal(err)
			}
			queryBoard(t, f.ops, f.agent) // the View is built, and published with the Board
			queryBoard(t, f.ops, f.agent)

			exec(fmt.Sprintf(`INSERT INTO fail_at_commit (type) VALUES ('%s')`, event.BatchApplied))
			release, done := startPaused(t, ps, func() error { return commitItem(ctx, f.a, f.admin, "lost") })
			during := queryBoard(t, f.ops, f.agent)
			release()
			if err := <-done; err == nil {
				t.Fatal("the Board write whose COMMIT fails returned nil")
			}
			if v := during.Result.View; !viewHasItem(v, "1") || viewHasItem(v, "lost") {
				t.Errorf("QueryBoard during the transaction shows %+v, want item 1 and not the lost item", v.Nodes.Items)
			}
			for range 2 {
				if v := queryBoard(t, f.ops, f.agent).Result.View; !viewHasItem(v, "1") || viewHasItem(v, "lost") {
					t.Errorf("QueryBoard after the failed COMMIT shows %+v, want item 1 and not the lost item", v.Nodes.Items)
				}
			}

			exec(`DELETE FROM fail_at_commit`)
			if err := commitItem(ctx, f.a, f.admin, "kept"); err != nil {
				t.Fatal(err)
			}
			if v := queryBoard(t, f.ops, f.agent).Result.View; !viewHasItem(v, "kept") || viewHasItem(v, "lost") {
				t.Errorf("QueryBoard after the healed commit shows %+v, want the kept item and not the lost one", v.Nodes.Items)
			}
		})
	}
}

// TestOperations_QueryDuringReport shows the same of a worker's report, which holds the
// Board lock and the operation ledger's across the transaction that applies its
// outcome to the Board: a QueryBoard meanwhile answers with the Operation still at the
// worker, and after the commit with it done.
func TestOperations_QueryDuringReport(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 {
		t.Fatalf("Poll served %d rows, want 1", len(rows))
	}
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatalf("Claim: %v", err)
	}
	queryBoard(t, f.ops, f.agent) // the View is built, and published with the Board

	release, done := startPaused(t, ps, func() error {
		_, err := f.d.Report(context.Background(), f.conn, okReport(l, rows[0], "a.txt"))
		return err
	})
	during := queryBoard(t, f.ops, f.agent).Result.Operations
	release()
	if err := <-done; err != nil {
		t.Fatalf("Report: %v", err)
	}
	if len(during) != 1 || during[0].State != contract.OpRunning || during[0].Stage != contract.StageAtWorker {
		t.Errorf("QueryBoard during the report's transaction shows %+v, want the fetch running at the worker", during)
	}
	if after := queryBoard(t, f.ops, f.agent).Result.Operations; len(after) != 1 || after[0].State != contract.OpDone {
		t.Errorf("QueryBoard after the report shows %+v, want the fetch done", after)
	}
}
