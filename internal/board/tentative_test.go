package board_test

import (
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// undone runs step on b inside a tentative record and undoes it. An exact undo must
// leave b showing what it showed before (nodes, Cases, facts, View), as a Board built
// from its records does; one it reports inexact is replaced by the Board its records
// build, as the authority builds it again. Then it runs step on that Board and on twin, a
// Board with b's history that never ran it, and fails rt unless the two show the same:
// the same ids minted, the same Seqs, the same Case ids. It returns the Board step ran
// on, whether the undo was exact, and step's error on twin.
func undone(rt fataler, what string, b, twin *board.Board, decls board.Declarations, step func(b *board.Board) error) (*board.Board, bool, error) {
	rt.Helper()
	before := boardState(rt, b)
	nodes, cases := b.Nodes(), b.Cases()
	tent := b.Tentative()
	tried := step(b)
	exact := tent.Undo()
	if exact {
		if got := boardState(rt, b); got != before {
			rt.Fatalf("after %s was undone (it returned %v) the Board differs:\nbefore:\n%s\nafter:\n%s", what, tried, before, got)
		}
	} else {
		var err error
		if b, err = board.Restore(board.Config{Declarations: []board.Declarations{decls}}, nodes, cases); err != nil {
			rt.Fatal(err)
		}
	}
	sameBoard(rt, what+" undone", twin, b, decls)
	errB, errTwin := step(b), step(twin)
	if contract.CodeOf(errB) != contract.CodeOf(errTwin) {
		rt.Fatalf("%s run again = %v, on a Board that never undid it = %v", what, errB, errTwin)
	}
	sameBoard(rt, what+" run again", twin, b, decls)
	return b, exact, errTwin
}

// TestTentative_Undo: a change made under a tentative record and undone leaves the Board
// as it was, down to the counters its next ids are minted from, or says it could not (a
// Board built again from its records then goes on as one that never made it), through
// every kind of change a call makes: facts, rules and goals added, revised and
// retracted, a Case opened, held, released, marked by a once-per-case Action and closed,
// an exploration's nodes removed at its close.
func TestTentative_Undo(t *testing.T) {
	t.Parallel()
	decls := calcDecls(t)
	t.Run("walk", func(t *testing.T) {
		t.Parallel()
		b, twin := newCalcBoard(t), newCalcBoard(t)
		var req contract.ExecutionRequest
		// Every step is undone exactly but the exploration's close, which puts its rule
		// back (Undo).
		step := func(what string, fn func(b *board.Board) error) {
			t.Helper()
			var exact bool
			var err error
			b, exact, err = undone(t, what, b, twin, decls, fn)
			if wantExact := what != "the exploration's close"; err != nil || exact != wantExact {
				t.Fatalf("%s: undone exactly %v (want %v), then %v", what, exact, wantExact, err)
			}
		}
		step("load_input", func(b *board.Board) error {
			r, err := b.ApplyAction(agent, "", "load_input", contract.Args{"path": str("data/input.json")})
			if r.Request != nil {
				req = *r.Request
			}
			return err
		})
		row := contract.Args{"job_id": str("calc-001"), "unit_price_cents": num(t, 129900), "quantity": num(t, 2), "shipping_cents": num(t, 3000)}
		step("the input's outcome", func(b *board.Board) error {
			_, err := b.ApplyOutcome(workspace, req, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{row}})
			return err
		})
		var id contract.CaseID
		step("OpenCase", func(b *board.Board) error {
			c, _, err := b.OpenCase(agent.Principal, calcType, calcKey, at)
			id = c.CaseID
			return err
		})
		var holdID string
		step("HoldCase", func(b *board.Board) error {
			c, _, err := b.HoldCase(id, contract.CaseHold{Owner: contract.HoldMember, By: member.Principal, Reason: "checking", At: at})
			if err == nil {
				holdID = c.Holds[0].ID
			}
			return err
		})
		step("ReleaseHold", func(b *board.Board) error {
			_, _, err := b.ReleaseHold(id, holdID, contract.HoldMember, "")
			return err
		})
		step("write_result", func(b *board.Board) error {
			r, err := b.ApplyAction(agent, id, "write_result", contract.Args{"path": str("out/result.json")})
			if r.Request != nil {
				req = *r.Request
			}
			return err
		})
		writer := board.Author{Principal: "tool:docket.workspace.write_json@1", Tier: contract.TierAttested, Words: workspace.Words}
		step("write_result's outcome, once per Case", func(b *board.Board) error {
			_, err := b.ApplyOutcome(writer, req, contract.ExecutionOutcome{OK: true})
			return err
		})
		step("verify_result", func(b *board.Board) error {
			r, err := b.ApplyAction(agent, id, "verify_result", nil)
			if r.Request != nil {
				req = *r.Request
			}
			return err
		})
		back := contract.Args{"job_id": str("calc-001"), "subtotal": num(t, 259800), "total": num(t, 262800)}
		step("verify_result's outcome", func(b *board.Board) error {
			_, err := b.ApplyOutcome(workspace, req, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{back}})
			return err
		})
		step("CloseCase", func(b *board.Board) error {
			_, err := b.CloseCase(agent.Principal, id, contract.DispositionCompleted, "", at)
			return err
		})
		step("OpenCase of the closed key", func(b *board.Board) error {
			_, _, err := b.OpenCase(agent.Principal, calcType, calcKey, at)
			return err
		})
		var explore contract.CaseID
		step("an exploration", func(b *board.Board) error {
			c, _, err := b.OpenCase(agent.Principal, board.ExplorationCaseType, contract.Args{"topic": str("bulk")}, at)
			explore = c.CaseID
			return err
		})
		step("an exploration's rule and fact", func(b *board.Board) error {
			_, err := b.ApplyBatch(agent, contract.Batch{Operations: []contract.Operation{
				{Op: contract.OpAddAxiom, CaseID: explore, Rule: &contract.Rule{
					Head: contract.Atom{Predicate: "bulk", Args: contract.Args{"job_id": contract.VarValue("j")}},
					Body: []contract.Literal{{Predicate: "calculation_input", Args: contract.Args{"job_id": contract.VarValue("j"), "quantity": contract.VarValue("q")}}}}},
				{Op: contract.OpAssertFact, CaseID: explore, Atom: &contract.Atom{Predicate: "hunch", Args: contract.Args{"text": str("bulk is common")}}},
			}})
			return err
		})
		step("the exploration's close", func(b *board.Board) error {
			_, err := b.CloseCase(agent.Principal, explore, contract.DispositionAbandoned, "explored enough", at)
			return err
		})
	})
	t.Run("random batches", func(t *testing.T) {
		t.Parallel()
		var exacts atomic.Int64
		defer func() {
			if exacts.Load() == 0 {
				t.Error("no random batch was undone exactly")
			}
		}()
		rapid.Check(t, func(rt *rapid.T) {
			b, twin := twoBoards(rt, decls)
			var known []string
			for range rapid.IntRange(1, 8).Draw(rt, "batches") {
				by := rapid.SampledFrom([]board.Author{member, agent}).Draw(rt, "by")
				batch := genBatch(rt, known)
				if _, err := restored(rt, b, decls).ApplyBatch(by, batch); err != nil {
					continue // a refused batch is rolled back by the Board, not undone (TestBoard_Apply)
				}
				var ids []string
				var exact bool
				var err error
				if b, exact, err = undone(rt, batchText(batch), b, twin, decls, func(b *board.Board) error {
					res, err := b.ApplyBatch(by, batch)
					ids = res.NodeIDs
					return err
				}); err != nil {
					rt.Fatalf("%s: %v", batchText(batch), err)
				}
				if exact {
					exacts.Add(1)
				}
				known = append(known, ids...)
			}
		})
	})
}

// restored is b built again from its records.
func restored(rt fataler, b *board.Board, decls board.Declarations) *board.Board {
	rt.Helper()
	r, err := board.Restore(board.Config{Declarations: []board.Declarations{decls}}, b.Nodes(), b.Cases())
	if err != nil {
		rt.Fatal(err)
	}
	return r
}

// TestBoard_AtomHeldTwice: of two facts asserting one atom, the older names it (its
// Entry's id, the premise an explanation names), and still does after the older was
// taken out and back in: by a refused batch's rollback, or by an undone change. A Board
// built from the records names it so, and another instance's would.
func TestBoard_AtomHeldTwice(t *testing.T) {
	t.Parallel()
	decls := calcDecls(t)
	item := &contract.Atom{Predicate: "item", Args: contract.Args{"n": str("0")}}
	twice := func(t *testing.T) *board.Board {
		t.Helper()
		b := newCalcBoard(t)
		if _, err := b.ApplyBatch(agent, contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAssertFact, NodeID: "older", Atom: item},
			{Op: contract.OpAssertFact, NodeID: "newer", Atom: item},
		}}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	named := func(t *testing.T, b *board.Board) string {
		t.Helper()
		facts := b.Facts(0).Items
		if len(facts) != 1 {
			t.Fatalf("facts = %+v, want the one atom", facts)
		}
		return facts[0].NodeID
	}
	tests := []struct {
		name string
		out  func(t *testing.T, b *board.Board) // takes "older" out and back in
	}{
		{"a refused batch rolled back", func(t *testing.T, b *board.Board) {
			_, err := b.ApplyBatch(agent, contract.Batch{Operations: []contract.Operation{
				{Op: contract.OpRetractNode, NodeID: "older"},
				{Op: contract.OpRetractNode, NodeID: "missing"},
			}})
			if contract.CodeOf(err) != contract.CodeNodeNotFound {
				t.Fatalf("the batch = %v, want refused %s", err, contract.CodeNodeNotFound)
			}
		}},
		{"a change undone", func(t *testing.T, b *board.Board) {
			tent := b.Tentative()
			if _, err := b.ApplyBatch(agent, contract.Batch{Operations: []contract.Operation{{Op: contract.OpRetractNode, NodeID: "older"}}}); err != nil {
				t.Fatal(err)
			}
			if !tent.Undo() {
				t.Fatal("the undo of a retraction was not exact")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, twin := twice(t), twice(t)
			if got := named(t, b); got != "older" {
				t.Fatalf("the atom is named %s, want older", got)
			}
			tc.out(t, b)
			if got := named(t, b); got != "older" {
				t.Errorf("after it the atom is named %s, want older", got)
			}
			sameBoard(t, tc.name, twin, b, decls)
		})
	}
}
