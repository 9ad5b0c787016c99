package board_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// TestBoard_ApplyBatchGroupedAsStepwise is the differential test of ApplyBatch, which
// asserts a run of quiet facts (of relations no rule reads) in one engine mutation,
// against ApplyBatchStepwise, a mutation an operation, as ApplyBatch was: over fixed and
// random sequences of batches on Boards built alike, with a fact cap small enough to be
// reached, every batch gives the same result (node ids and changes, in order) or the
// same refusal (the failing operation, its code and its words), and leaves the same
// Board (its nodes, Cases, facts with their tiers and provenance, and View). The grouped
// run alone (ApplyBatchGroupedOnly) refuses only batches the oracle refuses, so a
// grouped run that goes wrong is not hidden by the second run ApplyBatch makes of a
// refused batch. The batches mix quiet facts with facts the capability's rules read,
// goals, rules that start reading a quiet relation in the middle of a batch (with and
// without not), retractions, revisions, ids chosen twice and content asserted twice.
func TestBoard_ApplyBatchGroupedAsStepwise(t *testing.T) {
	decls := calcDecls(t)
	item := func(n string) contract.Operation {
		return assertFact(&contract.Atom{Predicate: "item", Args: contract.Args{"n": str(n)}})
	}
	note := func(n string) contract.Operation {
		return assertFact(&contract.Atom{Predicate: "note", Args: contract.Args{"n": str(n)}})
	}
	lonely := contract.Operation{Op: contract.OpAddAxiom, Rule: &contract.Rule{
		Head: contract.Atom{Predicate: "lonely", Args: contract.Args{"n": contract.VarValue("n")}},
		Body: []contract.Literal{{Predicate: "item", Args: contract.Args{"n": contract.VarValue("n")}},
			{Predicate: "note", NAF: true, Args: contract.Args{"n": contract.VarValue("n")}}}}}
	batch := func(ops ...contract.Operation) contract.Batch { return contract.Batch{Operations: ops} }
	fixed := []struct {
		name     string
		maxFacts int
		batches  []contract.Batch
		code     contract.Code // the last batch's refusal; "" when it is accepted
	}{
		{"quiet facts, one asserted twice", 0, []contract.Batch{batch(item("1"), item("2"), item("1"), note("1"))}, ""},
		{"a rule that reads them added first in the batch", 0, []contract.Batch{batch(item("0"), lonely, item("1"), note("1"), item("2"))}, ""},
		// One mutation a fact derives lonely(1) between item(1) and note(1), a fact
		// over the cap; asserted together they would not.
		{"the cap reached only between the facts of a rule's relation", 2, []contract.Batch{batch(lonely), batch(item("1"), note("1"))}, contract.CodeResourceLimit},
		{"the cap reached by quiet facts", 3, []contract.Batch{batch(item("1"), item("2"), item("3"), item("4"))}, contract.CodeResourceLimit},
		{"an id chosen twice among quiet facts", 0, []contract.Batch{batch(item("1"),
			contract.Operation{Op: contract.OpAssertFact, NodeID: "x", Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str("2")}}},
			contract.Operation{Op: contract.OpDeclareGoal, NodeID: "x", Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.VarValue("n")}}})}, contract.CodeNodeConflict},
	}
	for _, tt := range fixed {
		t.Run(tt.name, func(t *testing.T) {
			boards := newBoardsAlike(t, decls, engine.Limits{MaxFacts: tt.maxFacts})
			var err error
			for i, b := range tt.batches {
				_, err = boards.apply(t, i, member, b)
			}
			if contract.CodeOf(err) != tt.code {
				t.Fatalf("the last batch gave %v, want code %q", err, tt.code)
			}
		})
	}
	t.Run("random", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			boards := newBoardsAlike(rt, decls, engine.Limits{MaxFacts: rapid.IntRange(2, 60).Draw(rt, "maxFacts")})
			var known []string // node ids the batches made, to retract and revise
			for i := range rapid.IntRange(1, 6).Draw(rt, "batches") {
				by := rapid.SampledFrom([]board.Author{member, agent}).Draw(rt, "by")
				ids, _ := boards.apply(rt, i, by, genBatch(rt, known))
				known = append(known, ids...)
			}
		})
	})
}

// boardsAlike are Boards built alike, each given the same batches: by ApplyBatch, by the
// oracle and by the grouped run alone.
type boardsAlike struct{ grouped, stepwise, groupedOnly *board.Board }

// fataler is a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func newBoardsAlike(rt fataler, decls board.Declarations, lim engine.Limits) boardsAlike {
	var bs [3]*board.Board
	for i := range bs {
		b, err := board.NewConfig(board.Config{Declarations: []board.Declarations{decls}, Limits: lim})
		if err != nil {
			rt.Fatal(err)
		}
		bs[i] = b
	}
	return boardsAlike{bs[0], bs[1], bs[2]}
}

// apply gives batch, the i-th, to every Board and fails rt where they disagree; it
// returns the node ids the batch made, or its refusal.
func (bs boardsAlike) apply(rt fataler, i int, by board.Author, batch contract.Batch) ([]string, error) {
	rt.Helper()
	gres, gerr := bs.grouped.ApplyBatch(by, batch)
	sres, serr := bs.stepwise.ApplyBatchStepwise(by, batch)
	ores, oerr := bs.groupedOnly.ApplyBatchGroupedOnly(by, batch)
	if fmt.Sprint(gerr) != fmt.Sprint(serr) || contract.CodeOf(gerr) != contract.CodeOf(serr) {
		rt.Fatalf("batch %d %s: ApplyBatch refused %v (%s); one mutation an operation refused %v (%s)",
			i, batchText(batch), gerr, contract.CodeOf(gerr), serr, contract.CodeOf(serr))
	}
	if oerr != nil && serr == nil {
		rt.Fatalf("batch %d %s: the grouped run alone refused %v; one mutation an operation accepted it", i, batchText(batch), oerr)
	}
	want := mustJSON(rt, sres)
	if g := mustJSON(rt, gres); g != want {
		rt.Fatalf("batch %d %s: ApplyBatch gave\n%s\none mutation an operation gave\n%s", i, batchText(batch), g, want)
	}
	if o := mustJSON(rt, ores); oerr == nil && o != want {
		rt.Fatalf("batch %d %s: the grouped run alone gave\n%s\none mutation an operation gave\n%s", i, batchText(batch), o, want)
	}
	state := boardState(rt, bs.stepwise)
	if g := boardState(rt, bs.grouped); g != state {
		rt.Fatalf("batch %d %s: the Boards differ:\nApplyBatch:\n%s\none mutation an operation:\n%s", i, batchText(batch), g, state)
	}
	if o := boardState(rt, bs.groupedOnly); o != state {
		rt.Fatalf("batch %d %s: the Boards differ:\nthe grouped run alone:\n%s\none mutation an operation:\n%s", i, batchText(batch), o, state)
	}
	return gres.NodeIDs, gerr
}

// genBatch draws a batch of 1 to 12 operations.
func genBatch(rt *rapid.T, known []string) contract.Batch {
	var ops []contract.Operation
	for range rapid.IntRange(1, 12).Draw(rt, "ops") {
		ops = append(ops, genOp(rt, known))
	}
	return contract.Batch{Operations: ops}
}

// genOp draws one operation, quiet facts most often.
func genOp(rt *rapid.T, known []string) contract.Operation {
	id := func() string {
		if rapid.IntRange(0, 2).Draw(rt, "explicitID") == 0 {
			return rapid.SampledFrom([]string{"x0", "x1", "x2"}).Draw(rt, "id")
		}
		return "" // minted from the content
	}
	atom := func() *contract.Atom {
		pred := rapid.SampledFrom([]string{"item", "item", "item", "note", "calculation_input", "output_file"}).Draw(rt, "pred")
		a := &contract.Atom{Predicate: pred, Args: contract.Args{"n": contract.StringValue(fmt.Sprint(rapid.IntRange(0, 3).Draw(rt, "n")))}}
		switch pred {
		case "calculation_input":
			a.Args = contract.Args{"job_id": a.Args["n"], "unit_price_cents": intValue(rt, 100), "quantity": intValue(rt, 2), "shipping_cents": intValue(rt, 30)}
		case "output_file":
			a.Args = contract.Args{"job_id": a.Args["n"], "total": intValue(rt, 230), "subtotal": intValue(rt, 200)}
		default:
			a.Negated = rapid.IntRange(0, 5).Draw(rt, "negated") == 0
		}
		return a
	}
	known = append(known, "x0", "nope")
	switch rapid.IntRange(0, 11).Draw(rt, "op") {
	case 0:
		return contract.Operation{Op: contract.OpDeclareGoal, NodeID: id(), Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.VarValue("n")}}}
	case 1:
		return contract.Operation{Op: contract.OpRetractNode, NodeID: rapid.SampledFrom(known).Draw(rt, "retract")}
	case 2:
		return contract.Operation{Op: contract.OpReviseFact, NodeID: rapid.SampledFrom(known).Draw(rt, "revise"), Atom: atom()}
	case 3:
		// A rule that reads a quiet relation from here on, under not or not.
		head := rapid.SampledFrom([]string{"seen", "seen2"}).Draw(rt, "head")
		body := []contract.Literal{{Predicate: "item", Args: contract.Args{"n": contract.VarValue("n")}}}
		if rapid.Bool().Draw(rt, "naf") {
			body = append(body, contract.Literal{Predicate: "note", NAF: true, Args: contract.Args{"n": contract.VarValue("n")}})
		}
		return contract.Operation{Op: contract.OpAddAxiom, Rule: &contract.Rule{Head: contract.Atom{Predicate: head, Args: contract.Args{"n": contract.VarValue("n")}}, Body: body}}
	default:
		return contract.Operation{Op: contract.OpAssertFact, NodeID: id(), Atom: atom()}
	}
}

func intValue(rt *rapid.T, i int64) contract.Value {
	v, err := contract.IntValue(i)
	if err != nil {
		rt.Fatal(err)
	}
	return v
}

// boardState is everything observable about a Board, as the snapshot of batch_test.go
// has it.
func boardState(rt fataler, b *board.Board) string {
	return mustJSON(rt, struct {
		Nodes []contract.Node
		Cases []contract.Case
		Facts contract.Bounded[contract.Node]
		View  contract.View
	}{b.Nodes(), b.Cases(), b.Facts(0), b.View(board.ViewRequest{Principal: agent.Principal, Focus: focusAll(b)})})
}

func mustJSON(rt fataler, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		rt.Fatal(err)
	}
	return string(data)
}

func batchText(b contract.Batch) string {
	data, err := json.Marshal(b)
	if err != nil {
		return err.Error()
	}
	return string(data)
}
