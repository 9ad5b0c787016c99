package board_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

// reviewFiles is a capability with two Case Types: review takes direct Actions
// (direct_actions), strict does not.
var reviewFiles = map[string][]byte{
	"capability.toml": []byte(`id = "test.review"
version = "1.0.0"
title = "Review"

[[source]]
name  = "notes"
type  = "file"
words = ["note"]

[[case_type]]
name           = "review"
title          = "Review"
key            = { predicate = "note", args = ["topic"] }
opening        = "note"
opening_floor  = "attested"
acceptance     = "reviewed"
minimum_grounding_floor = "attested"
direct_actions = true

[[case_type]]
name       = "strict"
title      = "Strict"
key        = { predicate = "note", args = ["topic"] }
opening    = "note"
opening_floor = "attested"
acceptance = "reviewed"
minimum_grounding_floor = "attested"
`),
	"review.dl": []byte("@reviewed\nreviewed(topic: T) :- note(topic: T).\n"),
}

// notesTool is a locked read Tool whose rows become note facts.
func notesTool() contract.ToolLock {
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	return contract.ToolLock{Connection: "con_1", Tool: "acme.notes.list@1", Digest: "sha256:11", Approval: "none", LockedAt: &at,
		Descriptor: &contract.ToolDescriptor{Tool: "acme.notes.list@1", Digest: "sha256:11", Kind: "read", SourceTypes: []string{"file"}, Direct: true,
			Params: []contract.ToolParam{{Name: "dir", Type: "string", Required: true}},
			Facts:  []contract.ToolFact{{Predicate: "note", Args: map[string]string{"topic": "$name"}}}}}
}

// directBoard is a Board of the review capability and the direct Action of notesTool,
// with a note on "a" attested so Cases of either type open.
func directBoard(t *testing.T) *board.Board {
	t.Helper()
	pkg, err := capability.Check(reviewFiles)
	if err != nil {
		t.Fatal(err)
	}
	direct, ok, err := capability.Direct([]contract.ToolLock{notesTool()})
	if err != nil || !ok {
		t.Fatalf("Direct = %v, %v", ok, err)
	}
	b, err := board.New(pkg.Declarations, direct)
	if err != nil {
		t.Fatal(err)
	}
	notes := board.Author{Principal: "tool:acme.notes.list@1", Tier: contract.TierAttested, Words: []string{"note"}}
	apply(t, b, notes, assertFact(&contract.Atom{Predicate: "note", Args: contract.Args{"topic": str("a")}}))
	return b
}

func TestBoard_DirectActions(t *testing.T) {
	b := directBoard(t)
	open := func(caseType string, key contract.Args) contract.CaseID {
		c, _, err := b.OpenCase(agent.Principal, caseType, key, at)
		if err != nil {
			t.Fatalf("OpenCase(%s): %v", caseType, err)
		}
		return c.CaseID
	}
	cases := map[string]contract.CaseID{
		"exploration": open(board.ExplorationCaseType, contract.Args{"topic": str("notes")}),
		"review":      open("review", contract.Args{"topic": str("a")}),
		"strict":      open("strict", contract.Args{"topic": str("a")}),
	}
	tests := []struct {
		name      string
		caseID    contract.CaseID
		wantCode  contract.Code // of ApplyAction; "" runs
		wantState contract.ActionState
	}{
		{"without a Case it is blocked", "", contract.CodeActionBlocked, contract.ActionBlocked},
		{"an exploration Case runs it", cases["exploration"], "", contract.ActionReady},
		{"a Case Type that opts in runs it", cases["review"], "", contract.ActionReady},
		{"a Case Type that does not opt in blocks it", cases["strict"], contract.CodeActionBlocked, contract.ActionBlocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var focus []contract.CaseID
			if tc.caseID != "" {
				focus = []contract.CaseID{tc.caseID}
			}
			v := b.View(board.ViewRequest{Principal: agent.Principal, Focus: focus, Setup: board.Setup{Tools: map[string]bool{"acme.notes.list@1": true}}})
			var entry contract.ActionEntry
			for _, e := range v.Actions.Items {
				if e.Name == "acme.notes.list@1" {
					entry = e
				}
			}
			if entry.State != tc.wantState || tc.wantState == contract.ActionBlocked && entry.Reason != contract.BlockCaseType {
				t.Errorf("View entry = %+v, want %s (case_type when blocked)", entry, tc.wantState)
			}
			res, err := b.ApplyAction(agent, tc.caseID, "acme.notes.list@1", contract.Args{"dir": str("docs")})
			if tc.wantCode != "" {
				wantCode(t, err, tc.wantCode)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Request; r == nil || r.Tool != "acme.notes.list@1" || r.Kind != "read" || r.Approval != board.ApprovalNone || r.Args["dir"] != str("docs") {
				t.Errorf("request = %+v, want the Tool's read with dir, needing no approval", r)
			}
		})
	}

	t.Run("its rows land as facts at the Source's tier", func(t *testing.T) {
		req, err := b.Evaluate(agent, cases["exploration"], "acme.notes.list@1", contract.Args{"dir": str("docs")})
		if err != nil {
			t.Fatal(err)
		}
		by := board.Author{Principal: "tool:acme.notes.list@1", Tier: contract.TierAttested, Words: []string{"note"}}
		if _, err := b.ApplyOutcome(by, req, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{{"name": str("b")}}}); err != nil {
			t.Fatal(err)
		}
		n, ok := holds(t, b, "note", contract.Args{"topic": str("b")})
		if !ok || n.Tier != contract.TierAttested || n.CreatedBy != by.Principal {
			t.Errorf("note(b) = %+v (found %v), want attested by the Tool", n, ok)
		}
		other := board.Author{Principal: "tool:acme.notes.list@1", Tier: contract.TierAttested, Words: []string{"elsewhere"}}
		_, err = b.ApplyOutcome(other, req, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{{"name": str("c")}}})
		if err == nil {
			t.Error("a row whose predicate the Source does not attest landed")
		}
	})
}
