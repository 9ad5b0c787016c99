package board_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// calcRelease is the release of the example capability, as rules and Actions name it.
const calcRelease = "docket.verified-calculation@1.0.0"

// verifiedBoard returns the example's Board with the input and the read-back attested by
// the workspace Tool, the Case open, and the id of its acceptance node.
func verifiedBoard(t *testing.T) (*board.Board, string) {
	t.Helper()
	b := newCalcBoard(t)
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	c := openCalc(t, b)
	apply(t, b, workspace, assertFact(&contract.Atom{Predicate: "output_file", Args: contract.Args{
		"job_id": str("calc-001"), "subtotal": num(t, 259800), "total": num(t, 262800)}}))
	acc, err := b.Certify(c.CaseID)
	if err != nil {
		t.Fatalf("Certify: %v", err)
	}
	return b, acc.NodeID
}

// outline renders a Why tree one node a line, indented by depth, with what each node says
// of where it comes from.
func outline(t *testing.T, w contract.Why) string {
	t.Helper()
	var sb strings.Builder
	var walk func(n contract.WhyNode, depth int)
	walk = func(n contract.WhyNode, depth int) {
		fmt.Fprintf(&sb, "%s%s %s %s", strings.Repeat("  ", depth), n.Kind, n.Atom.Predicate, n.Tier)
		if n.Rule != "" {
			fmt.Fprintf(&sb, " rule=%s by=%s", n.Rule, n.RuleBy)
		}
		if n.CreatedBy != "" {
			fmt.Fprintf(&sb, " by=%s", n.CreatedBy)
		}
		if a := n.Attestation; a != nil {
			fmt.Fprintf(&sb, " tool=%s action=%s release=%s", a.Tool, a.Action, a.Release)
		}
		if n.More > 0 {
			fmt.Fprintf(&sb, " more=%d", n.More)
		}
		if n.Repeat {
			sb.WriteString(" repeat")
		}
		sb.WriteString("\n")
		for _, p := range n.Premises {
			walk(p, depth+1)
		}
	}
	walk(w.Root, 0)
	fmt.Fprintf(&sb, "shown=%d omitted=%d\n", w.Shown, w.Omitted)
	return sb.String()
}

func TestBoard_Why(t *testing.T) {
	t.Parallel()
	capBy := "capability:" + calcRelease
	full := "derived calculation_verified attested rule=docket.verified-calculation/calculation_verified by=" + capBy + "\n" +
		"  derived calculation_result attested rule=docket.verified-calculation/calculation_result by=" + capBy + "\n" +
		"    fact calculation_input attested by=tool:docket.workspace.read_json@1 tool=docket.workspace.read_json@1 action=load_input release=" + calcRelease + "\n" +
		"  fact output_file attested by=tool:docket.workspace.read_json@1 tool=docket.workspace.read_json@1 action=verify_result release=" + calcRelease + "\n" +
		"shown=4 omitted=0\n"
	tests := []struct {
		name string
		lim  board.WhyLimits
		want string
	}{
		{"the acceptance rests on the read-back and the derived result", board.WhyLimits{}, full},
		{"the size bound cuts the deepest premises first", board.WhyLimits{Nodes: 3},
			"derived calculation_verified attested rule=docket.verified-calculation/calculation_verified by=" + capBy + "\n" +
				"  derived calculation_result attested rule=docket.verified-calculation/calculation_result by=" + capBy + " more=1\n" +
				"  fact output_file attested by=tool:docket.workspace.read_json@1 tool=docket.workspace.read_json@1 action=verify_result release=" + calcRelease + "\n" +
				"shown=3 omitted=1\n"},
		{"a root alone says how many premises it has", board.WhyLimits{Nodes: 1},
			"derived calculation_verified attested rule=docket.verified-calculation/calculation_verified by=" + capBy + " more=2\nshown=1 omitted=2\n"},
		{"the depth bound stops below the first level", board.WhyLimits{Depth: 1},
			"derived calculation_verified attested rule=docket.verified-calculation/calculation_verified by=" + capBy + "\n" +
				"  derived calculation_result attested rule=docket.verified-calculation/calculation_result by=" + capBy + " more=1\n" +
				"  fact output_file attested by=tool:docket.workspace.read_json@1 tool=docket.workspace.read_json@1 action=verify_result release=" + calcRelease + "\n" +
				"shown=3 omitted=1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, id := verifiedBoard(t)
			w, err := b.Why(id, tt.lim)
			if err != nil {
				t.Fatalf("Why(%s): %v", id, err)
			}
			// The premises come in rule-body order: calculation_result, then output_file.
			if diff := cmp.Diff(tt.want, outline(t, w)); diff != "" {
				t.Errorf("Why(%s) (-want +got):\n%s", id, diff)
			}
		})
	}
}

func TestBoard_Why_Nodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		by       board.Author
		pred     string
		wantKind contract.NodeKind
		want     string
	}{
		{"an agent's fact is asserted by the agent", agent, "note", contract.NodeFact,
			"fact note asserted by=agent:calc\nshown=1 omitted=0\n"},
		{"a member's fact names the member", member, "note", contract.NodeFact,
			"fact note asserted by=member:ada\nshown=1 omitted=0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCalcBoard(t)
			res := apply(t, b, tt.by, assertFact(&contract.Atom{Predicate: tt.pred, Args: contract.Args{"x": str("1")}}))
			id := res.Changes[0].Put.NodeID
			w, err := b.Why(id, board.WhyLimits{})
			if err != nil {
				t.Fatalf("Why(%s): %v", id, err)
			}
			if w.Root.Kind != tt.wantKind {
				t.Errorf("kind = %s, want %s", w.Root.Kind, tt.wantKind)
			}
			if diff := cmp.Diff(tt.want, outline(t, w)); diff != "" {
				t.Errorf("Why(%s) (-want +got):\n%s", id, diff)
			}
		})
	}
}

func TestBoard_Why_RuleAndUnknown(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	w, err := b.Why("docket.verified-calculation/calculation_verified", board.WhyLimits{})
	if err != nil {
		t.Fatalf("Why(a rule id): %v", err)
	}
	want := contract.WhyNode{NodeID: "docket.verified-calculation/calculation_verified", Kind: contract.NodeRule, Tier: contract.TierVerified,
		CreatedBy: contract.Principal("capability:" + calcRelease)}
	if diff := cmp.Diff(want, w.Root, valueEqual); diff != "" {
		t.Errorf("Why(rule) (-want +got):\n%s", diff)
	}
	_, err = b.Why("no-such-node", board.WhyLimits{})
	wantCode(t, err, contract.CodeNodeNotFound)
}

// TestBoard_Why_JSON: the tree is plain data, so it encodes without loss.
func TestBoard_Why_JSON(t *testing.T) {
	t.Parallel()
	b, id := verifiedBoard(t)
	w, err := b.Why(id, board.WhyLimits{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back contract.Why
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, back, valueEqual); diff != "" {
		t.Errorf("Why JSON round trip (-want +got):\n%s", diff)
	}
}

func TestBoard_Evidence(t *testing.T) {
	t.Parallel()
	t.Run("a certified Case lists the facts its acceptance rests on", func(t *testing.T) {
		b, id := verifiedBoard(t)
		ev, err := b.Evidence("case-1", board.WhyLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acceptance == nil || ev.Acceptance.NodeID != id || ev.Why == nil || ev.Why.Root.NodeID != id {
			t.Fatalf("acceptance = %+v, why = %+v; want node %s", ev.Acceptance, ev.Why, id)
		}
		var got []string
		for _, f := range ev.Facts {
			got = append(got, f.Atom.Predicate+" "+f.Tier.String()+" "+f.Attestation.Action)
		}
		want := []string{"calculation_input attested load_input", "output_file attested verify_result"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("facts (-want +got):\n%s", diff)
		}
	})
	t.Run("a Case not certified lists the facts naming its key", func(t *testing.T) {
		b := newCalcBoard(t)
		apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
		apply(t, b, workspace, assertFact(calcInput(t, "calc-002")))
		c := openCalc(t, b)
		ev, err := b.Evidence(c.CaseID, board.WhyLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acceptance != nil || ev.Why != nil || len(ev.Facts) != 1 || ev.Facts[0].Atom.Args["job_id"] != str("calc-001") {
			t.Errorf("evidence = %+v; want only calc-001's input and no acceptance", ev)
		}
	})
	t.Run("an unknown Case", func(t *testing.T) {
		_, err := newCalcBoard(t).Evidence("case-9", board.WhyLimits{})
		wantCode(t, err, contract.CodeCaseNotFound)
	})
}

// TestBoard_Why_Repeat: a derived fact reached by two premises is expanded once; the
// second time it is marked Repeat, so the tree stays a tree of bounded size.
func TestBoard_Why_Repeat(t *testing.T) {
	t.Parallel()
	stmts, err := syntax.Parse("diamond.dl", []byte(`
@mid
mid(x: X) :- base(x: X).
@top
top(x: X) :- mid(x: X), mid(x: X), base(x: X).
`))
	if err != nil {
		t.Fatal(err)
	}
	d := board.Declarations{Release: "test.diamond@1", Digest: "sha256:00"}
	for _, s := range stmts {
		d.Rules = append(d.Rules, *s.Rule)
	}
	b, err := board.New(d)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, b, member, assertFact(&contract.Atom{Predicate: "base", Args: contract.Args{"x": str("1")}}))
	q, err := b.Query(contract.Atom{Predicate: "top", Args: contract.Args{"x": str("1")}}, "", 10)
	if err != nil || len(q.Items) != 1 {
		t.Fatalf("Query(top) = %+v, %v; want the derived fact", q, err)
	}
	w, err := b.Why(q.Items[0].NodeID, board.WhyLimits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "derived top asserted rule=top by=capability:test.diamond@1\n" +
		"  derived mid asserted rule=mid by=capability:test.diamond@1\n" +
		"    fact base asserted by=member:ada\n" +
		"  derived mid asserted rule=mid by=capability:test.diamond@1 repeat\n" +
		"  fact base asserted by=member:ada\n" +
		"shown=5 omitted=0\n"
	if diff := cmp.Diff(want, outline(t, w)); diff != "" {
		t.Errorf("Why(top) (-want +got):\n%s", diff)
	}
}
