package board_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// follow applies one change a leader Board made to a follower, as the authority applies
// another instance's record: the puts and deletes of changes, and the Cases it changed.
func follow(rt fataler, f *board.Board, changes []contract.NodeChange, cases ...contract.Case) {
	rt.Helper()
	var puts []contract.Node
	var deleted []string
	for _, ch := range changes {
		switch {
		case ch.Put != nil:
			puts = append(puts, *ch.Put)
		case ch.Delete != "":
			deleted = append(deleted, ch.Delete)
		}
	}
	if err := f.Apply(puts, deleted, cases); err != nil {
		rt.Fatalf("Apply: %v", err)
	}
}

// twoBoards returns two new Boards of decls.
func twoBoards(rt fataler, decls board.Declarations) (*board.Board, *board.Board) {
	rt.Helper()
	var bs [2]*board.Board
	for i := range bs {
		b, err := board.New(decls)
		if err != nil {
			rt.Fatal(err)
		}
		bs[i] = b
	}
	return bs[0], bs[1]
}

// sameBoard fails unless follower shows what leader shows, and what Restore from
// leader's records builds (docs/architecture.md, "The project state and its driver").
func sameBoard(rt fataler, step string, leader, follower *board.Board, decls board.Declarations) {
	rt.Helper()
	want := boardState(rt, leader)
	if got := boardState(rt, follower); got != want {
		rt.Fatalf("after %s the follower differs:\nleader:\n%s\nfollower:\n%s", step, want, got)
	}
	restored, err := board.Restore(board.Config{Declarations: []board.Declarations{decls}}, leader.Nodes(), leader.Cases())
	if err != nil {
		rt.Fatalf("after %s: Restore: %v", step, err)
	}
	if got := boardState(rt, restored); got != want {
		rt.Fatalf("after %s the restored Board differs:\nleader:\n%s\nrestored:\n%s", step, want, got)
	}
}

// TestBoard_Apply: a follower Board that applies each change a leader Board makes, as
// it returns it, shows what the leader shows after each (nodes, Cases, facts, View):
// through the verified calculation's walk (an Action's outcome, a Case opened, held,
// released and completed), an exploration Case whose close removes its nodes, and
// random batches of facts, goals, rules, retractions and revisions.
func TestBoard_Apply(t *testing.T) {
	t.Parallel()
	decls := calcDecls(t)
	t.Run("walk", func(t *testing.T) {
		t.Parallel()
		leader, follower := newCalcBoard(t), newCalcBoard(t)
		check := func(step string) { t.Helper(); sameBoard(t, step, leader, follower, decls) }

		load, err := leader.ApplyAction(agent, "", "load_input", contract.Args{"path": str("data/input.json")})
		if err != nil || load.Request == nil {
			t.Fatalf("ApplyAction(load_input) = %+v, %v", load, err)
		}
		row := contract.Args{"job_id": str("calc-001"), "unit_price_cents": num(t, 129900), "quantity": num(t, 2), "shipping_cents": num(t, 3000)}
		out, err := leader.ApplyOutcome(workspace, *load.Request, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{row}})
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, out.Changes)
		check("the input's outcome")

		c, changes, err := leader.OpenCase(agent.Principal, calcType, calcKey, at)
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, changes, c)
		check("OpenCase")
		if _, _, err := follower.OpenCase(agent.Principal, calcType, calcKey, at); contract.CodeOf(err) != contract.CodeCaseExists {
			t.Fatalf("the follower opened the Case again: %v, want case_exists", err)
		}

		held, _, err := leader.HoldCase(c.CaseID, contract.CaseHold{Owner: contract.HoldMember, By: member.Principal, Reason: "checking", At: at})
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, nil, held)
		check("HoldCase")
		released, _, err := leader.ReleaseHold(c.CaseID, held.Holds[0].ID, contract.HoldMember, "")
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, nil, released)
		check("ReleaseHold")

		write, err := leader.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/result.json")})
		if err != nil || write.Request == nil {
			t.Fatalf("ApplyAction(write_result) = %+v, %v", write, err)
		}
		writer := board.Author{Principal: "tool:docket.workspace.write_json@1", Tier: contract.TierAttested, Words: workspace.Words}
		out, err = leader.ApplyOutcome(writer, *write.Request, contract.ExecutionOutcome{OK: true})
		if err != nil {
			t.Fatal(err)
		}
		var cases []contract.Case
		if out.Case != nil {
			cases = append(cases, *out.Case)
		}
		follow(t, follower, out.Changes, cases...)
		check("write_result's outcome")

		verify, err := leader.ApplyAction(agent, c.CaseID, "verify_result", nil)
		if err != nil || verify.Request == nil {
			t.Fatalf("ApplyAction(verify_result) = %+v, %v", verify, err)
		}
		back := contract.Args{"job_id": str("calc-001"), "subtotal": num(t, 259800), "total": num(t, 262800)}
		out, err = leader.ApplyOutcome(workspace, *verify.Request, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{back}})
		if err != nil {
			t.Fatal(err)
		}
		cases = cases[:0]
		if out.Case != nil {
			cases = append(cases, *out.Case)
		}
		follow(t, follower, out.Changes, cases...)
		check("verify_result's outcome")

		closed, err := leader.CloseCase(agent.Principal, c.CaseID, contract.DispositionCompleted, "", at)
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, closed.Changes, closed.Case)
		check("CloseCase")

		// Closed, the key opens a Case again: here on the follower, which the leader
		// follows.
		again, changes, err := follower.OpenCase(agent.Principal, calcType, calcKey, at)
		if err != nil {
			t.Fatalf("the follower opens the closed Case's key again: %v", err)
		}
		follow(t, leader, changes, again)
		check("OpenCase again")

		e, changes, err := leader.OpenCase(agent.Principal, board.ExplorationCaseType, contract.Args{"topic": str("bulk")}, at)
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, changes, e)
		res, err := leader.ApplyBatch(agent, contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAddAxiom, CaseID: e.CaseID, Rule: &contract.Rule{
				Head: contract.Atom{Predicate: "bulk", Args: contract.Args{"job_id": contract.VarValue("j")}},
				Body: []contract.Literal{{Predicate: "calculation_input", Args: contract.Args{"job_id": contract.VarValue("j"), "quantity": contract.VarValue("q")}}}}},
			{Op: contract.OpAssertFact, CaseID: e.CaseID, Atom: &contract.Atom{Predicate: "hunch", Args: contract.Args{"text": str("bulk is common")}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		follow(t, follower, res.Changes)
		check("an exploration's rule and fact")
		closedE, err := leader.CloseCase(agent.Principal, e.CaseID, contract.DispositionAbandoned, "explored enough", at)
		if err != nil {
			t.Fatal(err)
		}
		if len(closedE.Changes) == 0 {
			t.Fatal("the exploration's close deleted nothing")
		}
		follow(t, follower, closedE.Changes, closedE.Case)
		check("the exploration's close")
	})
	t.Run("random batches", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(rt *rapid.T) {
			leader, follower := twoBoards(rt, decls)
			var known []string
			for range rapid.IntRange(1, 8).Draw(rt, "batches") {
				by := rapid.SampledFrom([]board.Author{member, agent}).Draw(rt, "by")
				batch := genBatch(rt, known)
				res, err := leader.ApplyBatch(by, batch)
				if err != nil {
					// A refused batch is rolled back: the leader shows what the follower,
					// which never saw it, shows (an atom held twice and taken out and
					// back in is TestBoard_AtomHeldTwice's case, which these batches
					// seldom draw).
					sameBoard(rt, "a refused "+batchText(batch), leader, follower, decls)
					continue
				}
				known = append(known, res.NodeIDs...)
				follow(rt, follower, res.Changes)
				sameBoard(rt, batchText(batch), leader, follower, decls)
			}
		})
	})
}

// TestBoard_ApplyRefuses: a change that does not fit the Board it is applied to (made
// on another Board) is refused whole, and the Board is left as it was.
func TestBoard_ApplyRefuses(t *testing.T) {
	t.Parallel()
	leader := newCalcBoard(t)
	res := apply(t, leader, workspace, assertFact(calcInput(t, "calc-001")))
	fact := *res.Changes[0].Put
	capNode := fact
	capNode.NodeID, capNode.CreatedBy = "cap-x", "capability:docket.verified-calculation@1.0.0"
	orphan := contract.Case{CaseID: "case-9", Root: "case-9:root", CaseType: calcType, Status: contract.CaseRunning}
	tests := []struct {
		name    string
		puts    []contract.Node
		deleted []string
		cases   []contract.Case
		code    contract.Code
	}{
		{"a delete of a node it lacks", []contract.Node{fact}, []string{"n-missing"}, nil, contract.CodeNodeNotFound},
		{"a capability node", []contract.Node{fact, capNode}, nil, nil, contract.CodeInvalidArgument},
		{"a Case whose root it lacks", []contract.Node{fact}, nil, []contract.Case{orphan}, contract.CodeNodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCalcBoard(t)
			before := boardState(t, b)
			err := b.Apply(tt.puts, tt.deleted, tt.cases)
			wantCode(t, err, tt.code)
			if after := boardState(t, b); after != before {
				t.Errorf("a refused change left the Board changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
