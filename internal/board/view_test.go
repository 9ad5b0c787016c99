package board_test

import (
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestBoard_View_Bounds fills a Board past every bound of the View and checks each list
// stops at its bound and says it was truncated.
func TestBoard_View_Bounds(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	var ops []contract.Operation
	for i := range board.ViewMaxCases + 5 {
		ops = append(ops, assertFact(calcInput(t, fmt.Sprintf("calc-%03d", i))))
	}
	apply(t, b, workspace, ops...)
	var focus []contract.CaseID
	for i := range board.ViewMaxCases + 5 {
		c, _, err := b.OpenCase(agent.Principal, calcType, contract.Args{"job_id": str(fmt.Sprintf("calc-%03d", i))}, at)
		if err != nil {
			t.Fatal(err)
		}
		focus = append(focus, c.CaseID)
	}
	v := b.View(board.ViewRequest{Principal: agent.Principal, Focus: focus})
	tests := []struct {
		name      string
		got, want int
		truncated bool
	}{
		{"cases", len(v.Cases.Items), board.ViewMaxCases, v.Cases.Truncated},
		{"roots", len(v.Roots.Items), board.ViewMaxRoots, v.Roots.Truncated},
		{"nodes", len(v.Nodes.Items), board.ViewMaxNodes, v.Nodes.Truncated},
	}
	for _, tt := range tests {
		if tt.got != tt.want || !tt.truncated {
			t.Errorf("View %s: %d items, truncated %v; want %d, truncated", tt.name, tt.got, tt.truncated, tt.want)
		}
	}
	if v.Cases.Items[0].CaseID != focus[len(focus)-1] {
		t.Errorf("the directory starts with %s, want the newest open Case %s", v.Cases.Items[0].CaseID, focus[len(focus)-1])
	}
	if v.Nodes.Items[0].NodeID != "case-1:root" || v.Nodes.Items[0].Holds == nil || *v.Nodes.Items[0].Holds {
		t.Errorf("the first node = %+v, want the first focused root, not holding", v.Nodes.Items[0])
	}
	if v.CaseTypes.Truncated || len(v.CaseTypes.Items) != 2 || v.Actions.Truncated || len(v.Actions.Items) != 3 {
		t.Errorf("caseTypes %+v, actions %+v; want 2 Case Types and 3 Actions, untruncated", v.CaseTypes, v.Actions)
	}
	if e := actionEntry(t, v, "load_input"); e.Reason != contract.BlockNeedsSetup {
		t.Errorf("load_input without setup = %+v, want blocked needs_setup", e)
	}
}

func TestBoard_View_Position(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	tests := []struct {
		name                 string
		by                   contract.Principal
		writes, cases, rules bool // open?
	}{
		{"agent", agent.Principal, true, true, false},
		{"member", member.Principal, true, true, true},
		{"tool", workspace.Principal, true, false, false},
		{"capability", "capability:x@1", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.View(board.ViewRequest{Principal: tt.by}).Position
			got := [3]bool{p.Writes == contract.PositionOpen, p.NewCases == contract.PositionOpen, p.Rules == contract.PositionOpen}
			if want := [3]bool{tt.writes, tt.cases, tt.rules}; got != want {
				t.Errorf("position for %s = %+v, want open: writes %v, newCases %v, rules %v", tt.by, p, tt.writes, tt.cases, tt.rules)
			}
		})
	}
}

// BenchmarkView computes the View on a Board of 100,000 attested inputs (and as many
// derived results), focused on one Case and unfocused.
func BenchmarkView(b *testing.B) {
	bd := newCalcBoard(b)
	const n = 100_000
	ops := make([]contract.Operation, 0, contract.MaxBatchOps)
	flush := func() {
		if len(ops) > 0 {
			apply(b, bd, workspace, ops...)
			ops = ops[:0]
		}
	}
	for i := range n {
		ops = append(ops, assertFact(calcInput(b, fmt.Sprintf("calc-%06d", i))))
		if len(ops) == contract.MaxBatchOps {
			flush()
		}
	}
	flush()
	c, _, err := bd.OpenCase(agent.Principal, calcType, contract.Args{"job_id": str("calc-000042")}, at)
	if err != nil {
		b.Fatal(err)
	}
	setup := board.Setup{Tools: map[string]bool{"docket.workspace.read_json@1": true, "docket.workspace.write_json@1": true}}
	for _, bc := range []struct {
		name  string
		focus []contract.CaseID
	}{{"focused", []contract.CaseID{c.CaseID}}, {"unfocused", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			req := board.ViewRequest{Principal: agent.Principal, Focus: bc.focus, Setup: setup}
			b.ReportAllocs()
			for b.Loop() {
				bd.View(req)
			}
		})
	}
}
