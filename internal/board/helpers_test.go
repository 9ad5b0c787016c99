package board_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// Principals and times of the tests.
var (
	agent    = board.Author{Principal: "agent:calc"}
	other    = board.Author{Principal: "agent:other"}
	member   = board.Author{Principal: "member:ada"}
	at       = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	calcKey  = contract.Args{"job_id": contract.StringValue("calc-001")}
	calcType = "verified_calculation"
)

// workspace is the Tool principal of the example's workspace Source, with the Source's
// tier and words as the authority would pass them.
var workspace = board.Author{Principal: "tool:docket.workspace.read_json@1", Tier: contract.TierAttested,
	Words: []string{"calculation_input", "output_file"}}

var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

// calcDecls loads examples/verified-calculation/capability through the capability package.
func calcDecls(t testing.TB) board.Declarations {
	t.Helper()
	pkg, err := capability.Load(filepath.Join("..", "..", "examples", "verified-calculation", "capability"))
	if err != nil {
		t.Fatalf("load the example capability: %v", err)
	}
	return pkg.Declarations
}

func newCalcBoard(t testing.TB) *board.Board {
	t.Helper()
	b, err := board.New(calcDecls(t))
	if err != nil {
		t.Fatalf("board.New: %v", err)
	}
	return b
}

func str(s string) contract.Value { return contract.StringValue(s) }

func num(t testing.TB, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// calcInput is the example's data/input.json as a calculation_input atom.
func calcInput(t testing.TB, job string) *contract.Atom {
	return &contract.Atom{Predicate: "calculation_input", Args: contract.Args{
		"job_id": str(job), "unit_price_cents": num(t, 129900), "quantity": num(t, 2), "shipping_cents": num(t, 3000),
	}}
}

func assertFact(a *contract.Atom) contract.Operation {
	return contract.Operation{Op: contract.OpAssertFact, Atom: a}
}

func apply(t testing.TB, b *board.Board, by board.Author, ops ...contract.Operation) board.BatchResult {
	t.Helper()
	res, err := b.ApplyBatch(by, contract.Batch{Operations: ops})
	if err != nil {
		t.Fatalf("ApplyBatch by %s: %v", by.Principal, err)
	}
	return res
}

func openCalc(t testing.TB, b *board.Board) contract.Case {
	t.Helper()
	c, _, err := b.OpenCase(agent.Principal, calcType, calcKey, at)
	if err != nil {
		t.Fatalf("OpenCase: %v", err)
	}
	return c
}

func wantCode(t testing.TB, err error, want contract.Code) {
	t.Helper()
	if got := contract.CodeOf(err); got != want {
		t.Fatalf("error = %v, want code %s", err, want)
	}
}

// holds returns the fact or derived node with pred and args that the View of every
// Case shows (derived facts appear for focused business keys).
func holds(t testing.TB, b *board.Board, pred string, args contract.Args) (contract.Node, bool) {
	t.Helper()
	for _, n := range b.View(board.ViewRequest{Principal: agent.Principal, Focus: focusAll(b)}).Nodes.Items {
		if n.Atom == nil || n.Atom.Predicate != pred || n.Kind == contract.NodeGoal {
			continue
		}
		match := true
		for k, v := range args {
			if n.Atom.Args[k] != v {
				match = false
			}
		}
		if match {
			return n, true
		}
	}
	return contract.Node{}, false
}

func focusAll(b *board.Board) []contract.CaseID {
	var ids []contract.CaseID
	for _, c := range b.Cases() {
		ids = append(ids, c.CaseID)
	}
	return ids
}
