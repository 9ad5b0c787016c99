package authority_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestManual_BoardActsWaitForAMember: a manual Agent's OpenCase, ApplyBatch and CloseCase
// each wait as a Request bound to the digest of the call (the call, the project, the
// Agent, its arguments), which only a member decides through the one decision path; an
// approval runs the act through the Board write sequence, checked again then, and a
// denial or an act that no longer holds settles it refused. On SQLite and
// PostgreSQL.
func TestManual_BoardActsWaitForAMember(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			st, _ := be.open(t)
			f := opsFixtureOver(t, st, time.Millisecond)
			ctx := t.Context()
			if _, err := f.a.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/grant")); err != nil {
				t.Fatal(err)
			}
			f.roster(t, "ann", "reader", "")
			boss := newOrchestrator(t, f.a, f.admin, "boss")
			if _, err := f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "manual"}); err != nil {
				t.Fatal(err)
			}
			// A delegation policy whose class covers every call of the Action a Board
			// act's vector would name if it named one: still no orchestrator decides it.
			if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml",
				Text: "[delegation_policy]\n[[delegation_policy.class]]\nname = \"all\"\naction = \"\"\npath = \"**\"\n"}); err == nil {
				t.Fatal("a class with an empty action was published")
			}

			var delivered []int64
			act := func(tool string, in any) contract.Request {
				t.Helper()
				ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: tool, Input: in, Delivered: func(o int64) bool { return contains(delivered, o) }})
				if err != nil {
					t.Fatal(err)
				}
				if state(ans) != contract.OpWaitingForDecision {
					t.Fatalf("a manual Agent's %s = %s %s %+v, want waiting for a decision", tool, ans.Result.ErrorCode, ans.Result.Teaching, ans.Result.Operations)
				}
				delivered = append(delivered, ans.Meta.Ordinal)
				r := f.pendingRequest(t)
				if r.Vector.Call != tool || r.Vector.Project != "default" || string(r.Vector.Agent) != f.agent.ID || r.Vector.Action != "" {
					t.Fatalf("request vector = %+v, want the call %s of calc in default", r.Vector, tool)
				}
				if d, err := operation.RequestDigest(r.Vector); err != nil || d != r.Digest {
					t.Fatalf("request digest %s is not the digest of its vector (%s, %v)", r.Digest, d, err)
				}
				return r
			}
			decide := func(r contract.Request, v contract.Verdict) contract.Request {
				t.Helper()
				got, err := f.ops.Operations().Decide(ctx, f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: v, Reason: "checked"})
				if err != nil {
					t.Fatalf("Decide(%s %s): %v", r.ID, v, err)
				}
				return got
			}

			// OpenCase: the vector holds the exact arguments; nobody but a member decides.
			open := act(contract.ToolOpenCase, &contract.OpenCaseInput{CaseType: "access", BusinessKey: contract.Args{"user": contract.StringValue("ann")}})
			var input contract.OpenCaseInput
			if err := json.Unmarshal(open.Vector.Input, &input); err != nil || input.CaseType != "access" || input.BusinessKey["user"].Str() != "ann" {
				t.Errorf("the OpenCase vector's input = %s (%v), want the call's arguments", open.Vector.Input, err)
			}
			if n := f.cases(t); n != 0 {
				t.Fatalf("%d Cases open before any decision, want none", n)
			}
			decideAsBoss := &contract.ApplyActionInput{Action: contract.ActionDecide, Params: contract.Args{"request": contract.StringValue(string(open.ID)),
				"digest": contract.StringValue(open.Digest), "verdict": contract.StringValue("approve")}}
			ans, err := f.ops.Call(ctx, boss, operation.Call{Tool: contract.ToolApplyAction, Input: decideAsBoss})
			if err != nil || ans.Result.ErrorCode != contract.CodeForbidden || !strings.Contains(ans.Result.Teaching, "level manual") {
				t.Errorf("an orchestrator's decision on a Board act = %s %s, %v; want forbidden: the Agent is manual", ans.Result.ErrorCode, ans.Result.Teaching, err)
			}
			if open.MemberOnly == "" {
				t.Errorf("a manual Agent's request = %+v, want it only a member's to decide", open)
			}
			_, err = f.ops.Operations().Decide(ctx, f.admin, "default", open.ID, contract.Decision{Digest: "sha256:" + strings.Repeat("0", 64), Verdict: contract.VerdictApprove})
			wantCode(t, err, contract.CodeDigestMismatch)
			if got := decide(open, contract.VerdictApprove); got.State != contract.RequestApproved || got.DecidedBy != f.admin.Principal() {
				t.Errorf("the approved OpenCase request = %+v", got)
			}
			e := f.opState(t)
			if e.State != contract.OpDone || !strings.Contains(string(e.Result), `"caseType":"access"`) {
				t.Fatalf("the approved OpenCase = %+v, want done with its Case", e)
			}
			if n := f.cases(t); n != 1 {
				t.Fatalf("Cases open after the approval = %d, want 1", n)
			}
			caseID := f.caseIDs(t)[0]

			// ApplyBatch: approved, it applies once as the Agent's batch.
			batch := act(contract.ToolApplyBatch, &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "note", Args: contract.Args{"x": contract.StringValue("y")}}}}})
			decide(batch, contract.VerdictApprove)
			if e := f.opState(t); e.State != contract.OpDone || !strings.Contains(string(e.Result), "nodeIds") {
				t.Fatalf("the approved ApplyBatch = %+v, want done", e)
			}

			// CloseCase: checked again when approved. The member closed the Case meanwhile,
			// so the act no longer holds: void, refused case_closed.
			cl := act(contract.ToolCloseCase, &contract.CloseCaseInput{CaseID: caseID, Disposition: contract.DispositionCancelled, Reason: "not needed"})
			if cl.Vector.CaseID != caseID {
				t.Errorf("the CloseCase vector names Case %q, want %s", cl.Vector.CaseID, caseID)
			}
			member := f.admin.Principal()
			err = f.a.Commit(ctx, "default", member, func(b *board.Board) (boards.Change, error) {
				cr, err := b.CloseCase(member, caseID, contract.DispositionAbandoned, "closed by hand", f.clock.Now())
				return boards.Change{Nodes: cr.Changes, Cases: []contract.Case{cr.Case}, Event: event.CaseClosedData{ClosureReceipt: cr.Receipt}}, err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := decide(cl, contract.VerdictApprove); got.State != contract.RequestVoid {
				t.Errorf("an approval of an act that no longer holds left the request %s, want void", got.State)
			}
			if e := f.opState(t); e.State != contract.OpRefused || e.ReasonCode != contract.CodeCaseClosed {
				t.Fatalf("the approved CloseCase of a closed Case = %+v, want refused case_closed", e)
			}

			// A denial refuses the act with the member's reason; nothing lands.
			den := act(contract.ToolApplyBatch, &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "note", Args: contract.Args{"x": contract.StringValue("z")}}}}})
			decide(den, contract.VerdictDeny)
			if e := f.opState(t); e.State != contract.OpRefused || !strings.Contains(e.Reason, "checked") {
				t.Errorf("the denied batch = %+v, want refused with the reason", e)
			}
			if n := f.count(t, "note"); n != 1 {
				t.Errorf("note facts = %d, want the approved one only", n)
			}
			// Reads stay free.
			if ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}}); err != nil || ans.Result.ErrorCode != "" {
				t.Errorf("a manual Agent's QueryBoard = %s, %v; want answered", ans.Result.ErrorCode, err)
			}
		})
	}
}

func (f *opsFixture) caseIDs(t *testing.T) []contract.CaseID {
	t.Helper()
	var out []contract.CaseID
	err := f.a.View(t.Context(), "default", func(b *board.Board) error {
		for _, c := range b.Cases() {
			if c.Status != contract.CaseClosed {
				out = append(out, c.CaseID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *opsFixture) cases(t *testing.T) int { return len(f.caseIDs(t)) }

func (f *opsFixture) count(t *testing.T, predicate string) int {
	t.Helper()
	n := 0
	err := f.a.View(t.Context(), "default", func(b *board.Board) error {
		got, err := b.Query(contract.Atom{Predicate: predicate}, "", 50)
		n = len(got.Items)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
