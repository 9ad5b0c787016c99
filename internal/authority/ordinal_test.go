package authority_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// opsPair is two Operations on two Authority instances over one database, as two
// `docket serve` processes would run them, with one Agent of project default.
type opsPair struct {
	a     [2]*authority.Authority
	ops   [2]*authority.Operations
	agent identity.Caller
	admin identity.Caller
}

func newOpsPair(t *testing.T, open func(t *testing.T) (store.Store, store.Store)) opsPair {
	t.Helper()
	ctx := t.Context()
	s1, s2 := open(t)
	f := newFixtureOn(t, s1)
	if _, err := f.a.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/ops")); err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	at, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatalf("CreateAgent: %v", err)
	}
	agent, err := f.a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	b := newAuthorityOn(t, s2, f.key)
	if err := b.Restore(ctx); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return opsPair{a: [2]*authority.Authority{f.a, b}, agent: agent, admin: f.admin, ops: [2]*authority.Operations{
		authority.NewOperations(f.a, operation.Config{}),
		authority.NewOperations(b, operation.Config{}),
	}}
}

// TestOperations_OrdinalsAcrossInstances shows that an Agent's writes admitted at the same
// moment by two instances over one store get distinct ordinals with no gap: the second admission sees the first under the log's head lock and takes the
// next ordinal. Every outcome counts as delivered, so the gate admits each call.
func TestOperations_OrdinalsAcrossInstances(t *testing.T) {
	const rounds = 12
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			p := newOpsPair(t, be.open)
			var mu sync.Mutex
			var got []int64
			for r := range rounds {
				var wg sync.WaitGroup
				for i, ops := range p.ops {
					wg.Go(func() {
						// Even rounds assert a new fact (the Board changes); odd rounds retract a
						// node that does not exist (the Operation settles refused, the Board
						// unchanged), so both ways through the write gate race.
						op := contract.Operation{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "seen",
							Args: contract.Args{"x": contract.StringValue(fmt.Sprintf("%d-%d", r, i))}}}
						if r%2 == 1 {
							op = contract.Operation{Op: contract.OpRetractNode, NodeID: "missing"}
						}
						ans, err := ops.Call(t.Context(), p.agent, operation.Call{Tool: contract.ToolApplyBatch,
							Input:     &contract.Batch{Operations: []contract.Operation{op}},
							Delivered: func(int64) bool { return true }})
						if err != nil {
							t.Errorf("round %d instance %d: %v", r, i, err)
							return
						}
						if ans.Meta.Ordinal == 0 {
							t.Errorf("round %d instance %d: refused by the gate: %s %s", r, i, ans.Result.ErrorCode, ans.Result.Teaching)
							return
						}
						mu.Lock()
						got = append(got, ans.Meta.Ordinal)
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			slices.Sort(got)
			want := make([]int64, 2*rounds)
			for i := range want {
				want[i] = int64(i + 1)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ordinals (-want +got):\n%s", diff)
			}
			for i, ops := range p.ops {
				st, err := ops.Operations().State(t.Context(), p.agent)
				if err != nil {
					t.Fatalf("State on instance %d: %v", i, err)
				}
				if len(st.State) == 0 || st.State[0].Ordinal != 2*rounds {
					t.Errorf("instance %d strip = %+v, want the newest Operation %d first", i, st.State, 2*rounds)
				}
			}
		})
	}
}
