package authority_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/materials"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

var planSHA = "sha256:" + strings.Repeat("ab", 32)

func TestMaterials_FactsAndWhoMay(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := authoritytest.New(t, authoritytest.Options{Store: st, Agent: "calc"})
	ctx := t.Context()
	other, err := p.A.Directory().CreateAgent(ctx, p.Admin, "default", contract.CreateAgentRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	otherCaller, err := p.A.Directory().Authenticate(ctx, identity.Token(other.Token))
	if err != nil {
		t.Fatal(err)
	}
	in := contract.MaterialAdd{Conversation: "c1", Name: "plan.txt", Size: 12, MediaType: "text/plain", SHA256: planSHA}

	if _, err := p.A.AddMaterial(ctx, p.Agent, "default", "calc", in); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("an Agent adding a material = %v, want forbidden: only a member adds", err)
	}
	m, err := p.A.AddMaterial(ctx, p.Admin, "default", "calc", in)
	if err != nil || m.Name != "plan.txt" || m.Basis != contract.MaterialAsserted || m.Disclosed || m.AddedBy != p.Admin.Principal() {
		t.Fatalf("AddMaterial = %+v, %v", m, err)
	}
	// The material is a Board fact at project scope, asserted by the member, holding its
	// metadata; adding the same file again asserts nothing more.
	if _, err := p.A.AddMaterial(ctx, p.Admin, "default", "calc", in); err != nil {
		t.Fatalf("AddMaterial again = %v", err)
	}
	facts, err := p.A.Facts(ctx, p.Admin, "default", contract.Atom{Predicate: materials.FactPredicate, Args: contract.Args{}}, 10)
	if err != nil || len(facts.Items) != 1 {
		t.Fatalf("the material facts = %+v, %v; want one", facts, err)
	}
	if f := facts.Items[0]; f.Tier != contract.TierAsserted || f.CreatedBy != p.Admin.Principal() || f.Atom.Args["sha256"].Str() != planSHA ||
		f.Atom.Args["name"].Str() != "plan.txt" || f.Atom.Args["size"].Int() != 12 || f.Atom.Args["agent"].Str() != p.Agent.ID || f.Atom.Args["conversation"].Str() != "c1" {
		t.Errorf("the material fact = %+v, want plan.txt's metadata for calc, asserted by the member", f)
	}
	// The Agent reads its own material's disclosure; another Agent is refused.
	if got, err := p.A.Material(ctx, p.Agent, "default", p.Agent.ID, planSHA); err != nil || got.Disclosed {
		t.Errorf("the Agent's own material = %+v, %v; want it, not disclosed", got, err)
	}
	if _, err := p.A.Material(ctx, otherCaller, "default", "calc", planSHA); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("another Agent reading calc's material = %v, want forbidden", err)
	}
	if _, err := p.A.Material(ctx, otherCaller, "default", other.Agent.Name, planSHA); contract.CodeOf(err) != contract.CodeMaterialNotFound {
		t.Errorf("another Agent's own lookup of calc's material = %v, want material_not_found: disclosure is per Agent", err)
	}
	if _, err := p.A.SetMaterialDisclosure(ctx, p.Agent, "default", "calc", planSHA, true); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("an Agent allowing its own disclosure = %v, want forbidden", err)
	}
	if _, err := p.A.SetMaterialDisclosure(ctx, p.Admin, "default", "other", planSHA, true); contract.CodeOf(err) != contract.CodeMaterialNotFound {
		t.Errorf("disclosing a material to an Agent that was not given it = %v, want material_not_found", err)
	}
	if m, err = p.A.SetMaterialDisclosure(ctx, p.Admin, "default", "calc", planSHA, true); err != nil || !m.Disclosed || m.DisclosureBy != p.Admin.Principal() {
		t.Errorf("SetMaterialDisclosure = %+v, %v", m, err)
	}
	// A second authority over the same store agrees: the facts are in the log.
	again := authoritytest.Open(t, authoritytest.Options{Store: st})
	ms, err := again.Materials(ctx, p.Admin, "default", "")
	if err != nil || len(ms) != 1 || !ms[0].Disclosed || ms[0].AgentName != "calc" {
		t.Errorf("Materials from another authority = %+v, %v", ms, err)
	}

	for _, bad := range []contract.MaterialAdd{
		{Name: "a.txt", Size: 1, MediaType: "text/plain", SHA256: "sha256:xyz"},
		{Name: "../a.txt", Size: 1, MediaType: "text/plain", SHA256: planSHA},
		{Name: "a.txt", Size: -1, MediaType: "text/plain", SHA256: planSHA},
		{Name: "a.txt", Size: 1, MediaType: "plain", SHA256: planSHA},
	} {
		if _, err := p.A.AddMaterial(ctx, p.Admin, "default", "calc", bad); contract.CodeOf(err) != contract.CodeMaterialInvalid {
			t.Errorf("AddMaterial(%+v) = %v, want material_invalid", bad, err)
		}
	}
}

func FuzzMaterialValidate(f *testing.F) {
	f.Add("a.txt", int64(3), "text/plain", planSHA, "c1")
	f.Add("../x", int64(-1), "", "sha256:", "")
	f.Fuzz(func(t *testing.T, name string, size int64, mt, sha, conv string) {
		in := contract.MaterialAdd{Name: name, Size: size, MediaType: mt, SHA256: sha, Conversation: conv}
		if materials.Validate(in) == nil && (strings.ContainsAny(name, `/\`) || size < 0 || len(sha) != 71 || name == "") {
			t.Fatalf("Validate accepted %+v", in)
		}
	})
}

// TestMaterials_AddWhileDisclosing adds materials for an Agent while members change the
// disclosure of another of its materials, all at once: an addition takes the materials
// lock before its transaction, as a disclosure does (materials.Keeper.Add), so neither
// waits for the other for good. Each call's store is one a disclosure waits for.
func TestMaterials_AddWhileDisclosing(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			st, _ := b.open(t)
			p := authoritytest.New(t, authoritytest.Options{Store: st, Agent: "calc"})
			ctx := t.Context()
			in := contract.MaterialAdd{Conversation: "c1", Name: "plan.txt", Size: 12, MediaType: "text/plain", SHA256: planSHA}
			if _, err := p.A.AddMaterial(ctx, p.Admin, "default", "calc", in); err != nil {
				t.Fatal(err)
			}
			const writers, each = 4, 25
			errs := make(chan error, 2*writers*each)
			done := make(chan struct{}) // closed by the goroutine below once every call returned
			go func() {
				defer close(done)
				var wg sync.WaitGroup
				for w := range writers {
					wg.Go(func() {
						for i := range each {
							add := in
							add.SHA256 = fmt.Sprintf("sha256:%064x", w*each+i+1)
							if _, err := p.A.AddMaterial(ctx, p.Admin, "default", "calc", add); err != nil {
								errs <- fmt.Errorf("add material %d: %w", w*each+i+1, err)
							}
						}
					})
					wg.Go(func() {
						for i := range each {
							if _, err := p.A.SetMaterialDisclosure(ctx, p.Admin, "default", "calc", planSHA, i%2 == 0); err != nil {
								errs <- fmt.Errorf("set the disclosure: %w", err)
							}
						}
					})
				}
				wg.Wait()
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("the additions and disclosures did not all return in a minute: they wait for each other")
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			ms, err := p.A.Materials(ctx, p.Admin, "default", "calc")
			if err != nil || len(ms) != writers*each+1 {
				t.Errorf("calc has %d materials (%v), want %d", len(ms), err, writers*each+1)
			}
		})
	}
}

// TestMaterials_AddWhileAdmitting adds materials for an Agent while the Agent's writes
// are admitted, all at once: an addition takes the Board lock before the materials' State,
// which is a part of the project log the operation ledger joins, as an admission takes
// the Board lock before the ledger's (docs/architecture.md, "The lock order"), so neither
// waits for the other for good.
func TestMaterials_AddWhileAdmitting(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	const writers, each = 4, 25
	errs := make(chan error, 2*writers*each)
	done := make(chan struct{}) // closed by the goroutine below once every call returned
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					add := contract.MaterialAdd{Conversation: "c1", Name: "plan.txt", Size: 12, MediaType: "text/plain",
						SHA256: fmt.Sprintf("sha256:%064x", w*each+i+1)}
					if _, err := f.a.AddMaterial(ctx, f.admin, "default", "calc", add); err != nil {
						errs <- fmt.Errorf("add material %d: %w", w*each+i+1, err)
					}
				}
			})
			wg.Go(func() {
				for i := range each {
					_, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction,
						Input: &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue(fmt.Sprintf("t%d-%d", w, i))}}})
					if err != nil {
						errs <- fmt.Errorf("admit a write: %w", err)
					}
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the additions and admissions did not all return in a minute: they wait for each other")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ms, err := f.a.Materials(ctx, f.admin, "default", "calc")
	if err != nil || len(ms) != writers*each {
		t.Errorf("calc has %d materials (%v), want %d", len(ms), err, writers*each)
	}
}
