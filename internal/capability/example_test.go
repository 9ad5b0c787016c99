package capability_test

import (
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

const exampleDir = "../../examples/verified-calculation/capability"

// TestLoad_VerifiedCalculation loads the reference capability (examples/verified-calculation) and checks
// the contract the workflow relies on.
func TestLoad_VerifiedCalculation(t *testing.T) {
	t.Parallel()
	pkg, err := capability.Load(exampleDir)
	if err != nil {
		t.Fatalf("Load(%s): %v", exampleDir, err)
	}
	d := pkg.Declarations
	if got, want := d.Release, "docket.verified-calculation@1.0.0"; got != want {
		t.Errorf("Release = %q, want %q", got, want)
	}
	if len(d.CaseTypes) != 1 || d.CaseTypes[0].Acceptance != "calculation_verified" || d.CaseTypes[0].Floor != contract.TierAttested {
		t.Errorf("CaseTypes = %+v, want verified_calculation accepting calculation_verified at attested", d.CaseTypes)
	}
	for _, a := range d.Actions {
		if a.Name != "write_result" {
			continue
		}
		bound := map[string]string{}
		for _, b := range a.Bindings {
			bound[b.Param] = b.Var
		}
		if bound["subtotal"] == "" || bound["total"] == "" {
			t.Errorf("write_result bindings = %v, want subtotal and total bound by the Board", a.Bindings)
		}
	}
}

// TestVerifiedCalculation_Derives runs the example's rules on the example's input:
// the result is 259800 / 262800, and the job is verified only once the read-back agrees.
func TestVerifiedCalculation_Derives(t *testing.T) {
	t.Parallel()
	pkg, err := capability.Load(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Limits{})
	if _, err := e.AddRules(pkg.Declarations.Rules...); err != nil {
		t.Fatalf("AddRules: %v", err)
	}
	assert := func(id, text string) {
		t.Helper()
		a, err := syntax.ParseAtom(id, text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Assert(engine.Fact{ID: id, Atom: a, Tier: contract.TierAttested}); err != nil {
			t.Fatalf("Assert(%s): %v", text, err)
		}
	}
	holds := func(text string) (engine.Entry, bool) {
		t.Helper()
		a, err := syntax.ParseAtom("want", text)
		if err != nil {
			t.Fatal(err)
		}
		return e.Holds(a)
	}
	assert("input", `calculation_input(job_id: "calc-001", unit_price_cents: 129900, quantity: 2, shipping_cents: 3000)`)
	result, ok := holds(`calculation_result(job_id: "calc-001", subtotal: 259800, total: 262800)`)
	if !ok || result.Tier != contract.TierAttested {
		t.Fatalf("calculation_result = %+v, %v; want subtotal 259800, total 262800 at attested", result, ok)
	}
	if _, ok := holds(`calculation_verified(job_id: "calc-001")`); ok {
		t.Fatal("calculation_verified holds before the output file was read back")
	}
	assert("wrong", `output_file(job_id: "calc-001", subtotal: 259800, total: 262801)`)
	if _, ok := holds(`calculation_verified(job_id: "calc-001")`); ok {
		t.Fatal("calculation_verified holds for a read-back with the wrong total")
	}
	assert("readback", `output_file(job_id: "calc-001", subtotal: 259800, total: 262800)`)
	verified, ok := holds(`calculation_verified(job_id: "calc-001")`)
	if !ok || !verified.Derived || verified.Tier != contract.TierAttested {
		t.Fatalf("calculation_verified = %+v, %v; want derived at attested", verified, ok)
	}
}
