package board_test

import (
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// TestReferenceWalk follows the verified calculation (examples/verified-calculation) on the Board alone:
// attested input → OpenCase → derived subtotal and total → write with bound values →
// outcome → independent read-back → acceptance derived → certified → completed receipt.
func TestReferenceWalk(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	setup := board.Setup{Tools: map[string]bool{"docket.workspace.read_json@1": true, "docket.workspace.write_json@1": true}}

	// 1. load_input runs outside any Case; its outcome is the attested input.
	load, err := b.ApplyAction(agent, "", "load_input", contract.Args{"path": str("data/input.json")})
	if err != nil || load.Request == nil {
		t.Fatalf("ApplyAction(load_input) = %+v, %v; want an execution request", load, err)
	}
	row := contract.Args{"job_id": str("calc-001"), "unit_price_cents": num(t, 129900), "quantity": num(t, 2), "shipping_cents": num(t, 3000)}
	if _, err := b.ApplyOutcome(workspace, *load.Request, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{row}}); err != nil {
		t.Fatalf("ApplyOutcome(load_input): %v", err)
	}

	// 2. The Case opens on the attested input.
	c := openCalc(t, b)
	if c.CaseID != "case-1" || c.Root != "case-1:root" || c.Status != contract.CaseRunning {
		t.Fatalf("OpenCase = %+v, want case-1 running with root case-1:root", c)
	}

	// 3. The rules derive subtotal 259800 and total 262800, attested.
	res, ok := holds(t, b, "calculation_result", contract.Args{"subtotal": num(t, 259800), "total": num(t, 262800)})
	if !ok || res.Kind != contract.NodeDerived || res.Tier != contract.TierAttested {
		t.Fatalf("calculation_result = %+v (found %v), want derived at attested with subtotal 259800, total 262800", res, ok)
	}
	if _, err := b.Certify(c.CaseID); contract.CodeOf(err) != contract.CodeCaseNotCertified {
		t.Fatalf("Certify before the write = %v, want case_not_certified", err)
	}

	// 4. write_result: the model may not pass total; the Board binds it.
	_, err = b.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/result.json"), "total": num(t, 1)})
	wantCode(t, err, contract.CodeBindingSupplied)
	view := b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{c.CaseID}, Setup: setup})
	if e := actionEntry(t, view, "write_result"); e.State != contract.ActionReady ||
		!cmp.Equal(e.Waits, []contract.Wait{contract.WaitExecution}) ||
		!cmp.Equal(e.Bound, []string{"job_id", "subtotal", "total"}) {
		t.Fatalf("View write_result = %+v, want ready, waiting on execution alone (approval none), bound job_id subtotal total", e)
	}
	write, err := b.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/result.json")})
	if err != nil || write.Request == nil {
		t.Fatalf("ApplyAction(write_result) = %+v, %v", write, err)
	}
	wantReq := contract.ExecutionRequest{Action: "write_result", CaseID: c.CaseID, Tool: "docket.workspace.write_json@1",
		Kind: "write", SourceTypes: []string{"file"}, Source: "workspace", Approval: "none", Bound: []string{"subtotal", "total"},
		Args: contract.Args{"job_id": str("calc-001"), "path": str("out/result.json"), "subtotal": num(t, 259800), "total": num(t, 262800)}}
	if diff := cmp.Diff(wantReq, *write.Request, valueEqual); diff != "" {
		t.Fatalf("write request (-want +got):\n%s", diff)
	}
	writer := board.Author{Principal: "tool:docket.workspace.write_json@1", Tier: contract.TierAttested, Words: workspace.Words}
	out, err := b.ApplyOutcome(writer, *write.Request, contract.ExecutionOutcome{OK: true})
	if err != nil {
		t.Fatalf("ApplyOutcome(write_result): %v", err)
	}
	if out.Case == nil || !cmp.Equal(out.Case.Terminal, []string{"write_result"}) {
		t.Errorf("write outcome Case = %+v, want write_result recorded as terminal", out.Case)
	}
	if _, err := b.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/result.json")}); contract.CodeOf(err) != contract.CodeActionOnce {
		t.Errorf("second write_result = %v, want action_once", err)
	}

	// 5. verify_result reads the file back independently; path is bound from the write.
	verify, err := b.ApplyAction(agent, c.CaseID, "verify_result", nil) // the job is the Case's key; the Action takes no parameter
	if err != nil || verify.Request == nil || verify.Request.Args["path"] != str("out/result.json") || len(verify.Request.Args) != 1 {
		t.Fatalf("ApplyAction(verify_result) = %+v, %v; want a read request with the bound path", verify.Request, err)
	}
	back := contract.Args{"job_id": str("calc-001"), "subtotal": num(t, 259800), "total": num(t, 262800)} // the file as the write left it
	if _, err := b.ApplyOutcome(workspace, *verify.Request, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{back}}); err != nil {
		t.Fatalf("ApplyOutcome(verify_result): %v", err)
	}

	// 6. The acceptance is derived, so the root is certified and the Case completes.
	acc, err := b.Certify(c.CaseID)
	if err != nil || acc.Kind != contract.NodeDerived || acc.Tier != contract.TierAttested || acc.Atom.Predicate != "calculation_verified" {
		t.Fatalf("Certify = %+v, %v; want calculation_verified derived at attested", acc, err)
	}
	view = b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{c.CaseID}, Setup: setup})
	if r := view.Roots.Items[0]; !r.Certified || len(r.Gaps.Items) != 0 {
		t.Errorf("View root = %+v, want certified with no gaps", r)
	}
	closed, err := b.CloseCase(agent.Principal, c.CaseID, contract.DispositionCompleted, "", at)
	if err != nil {
		t.Fatalf("CloseCase(completed): %v", err)
	}
	r := closed.Receipt
	if !r.Certified || r.Acceptance == nil || r.Acceptance.NodeID != acc.NodeID || r.ExplanationDigest == "" ||
		r.ReleaseDigest == "" || r.Release != "docket.verified-calculation@1.0.0" || r.Exploratory || !r.At.Equal(at) {
		t.Errorf("receipt = %+v, want certified with the acceptance node, its explanation digest and the release pins", r)
	}
	if closed.Case.Status != contract.CaseClosed || closed.Case.Disposition != contract.DispositionCompleted {
		t.Errorf("closed Case = %+v", closed.Case)
	}
	if e := actionEntry(t, b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{c.CaseID}, Setup: setup}), "verify_result"); e.Reason != contract.BlockCaseClosed {
		t.Errorf("verify_result after close = %+v, want blocked case_closed", e)
	}
}

// TestReferenceWalk_FailureArms shows that the model's words never certify a Case.
func TestReferenceWalk_FailureArms(t *testing.T) {
	t.Parallel()
	t.Run("asserted acceptance does not certify", func(t *testing.T) {
		b := newCalcBoard(t)
		apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
		c := openCalc(t, b)
		apply(t, b, agent, assertFact(&contract.Atom{Predicate: "calculation_verified", Args: calcKey}))
		_, err := b.CloseCase(agent.Principal, c.CaseID, contract.DispositionCompleted, "", at)
		wantCode(t, err, contract.CodeCaseAcceptanceNotDerived)
	})
	t.Run("asserted input does not open the Case", func(t *testing.T) {
		b := newCalcBoard(t)
		apply(t, b, agent, assertFact(calcInput(t, "calc-001")))
		_, _, err := b.OpenCase(agent.Principal, calcType, calcKey, at)
		wantCode(t, err, contract.CodeCaseOpeningNotTrusted)
	})
	t.Run("an agent asking for attested still asserts", func(t *testing.T) {
		b := newCalcBoard(t)
		apply(t, b, board.Author{Principal: agent.Principal, Tier: contract.TierVerified}, assertFact(calcInput(t, "calc-001")))
		_, _, err := b.OpenCase(agent.Principal, calcType, calcKey, at)
		wantCode(t, err, contract.CodeCaseOpeningNotTrusted)
	})
	t.Run("asserted input opened leniently fails the floor at close", func(t *testing.T) {
		decls := calcDecls(t)
		for i := range decls.CaseTypes {
			decls.CaseTypes[i].OpeningFloor = contract.TierAsserted // a lenient opening, to reach the close
		}
		b, err := board.New(decls)
		if err != nil {
			t.Fatal(err)
		}
		apply(t, b, agent, assertFact(calcInput(t, "calc-001")))
		c := openCalc(t, b)
		// The bound values need trusted premises, so write_result cannot run on asserted input…
		_, err = b.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/result.json")})
		wantCode(t, err, contract.CodeBindingMissing)
		// …and a read-back the agent asserts derives the acceptance only at asserted.
		apply(t, b, agent, assertFact(&contract.Atom{Predicate: "output_file", Args: contract.Args{
			"job_id": str("calc-001"), "subtotal": num(t, 259800), "total": num(t, 262800)}}))
		_, err = b.CloseCase(agent.Principal, c.CaseID, contract.DispositionCompleted, "", at)
		wantCode(t, err, contract.CodeCaseAcceptanceFloor)
	})
}

func actionEntry(t testing.TB, v contract.View, name string) contract.ActionEntry {
	t.Helper()
	for _, e := range v.Actions.Items {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("the View has no Action %s", name)
	return contract.ActionEntry{}
}

// TestCertify_AssertedAndDerived: an acceptance fact the agent asserted early does not
// stand in for the derivation, nor hide it once the rules derive the same fact.
func TestCertify_AssertedAndDerived(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	c := openCalc(t, b)
	apply(t, b, agent, assertFact(&contract.Atom{Predicate: "calculation_verified", Args: calcKey}))
	_, err := b.Certify(c.CaseID)
	wantCode(t, err, contract.CodeCaseAcceptanceNotDerived)
	apply(t, b, workspace, assertFact(&contract.Atom{Predicate: "output_file", Args: contract.Args{
		"job_id": str("calc-001"), "subtotal": num(t, 259800), "total": num(t, 262800)}}))
	if acc, err := b.Certify(c.CaseID); err != nil || acc.Tier != contract.TierAttested {
		t.Errorf("Certify once derived = %+v, %v; want certified at attested", acc, err)
	}
}
