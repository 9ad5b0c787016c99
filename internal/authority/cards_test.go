package authority_test

import (
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// TestCard_PersistsAcrossRestart: a card recorded by one authority is open, and is
// confirmed once, through another authority started later over the same store; its
// delegate's revocation after that leaves the confirmed card as it was.
func TestCard_PersistsAcrossRestart(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	_, c := newDelegate(t, f, "asst")
	ops := authority.NewOperations(f.a, operation.Config{})
	card, err := ops.Propose(ctx, c, "default", authority.ConsentCall{Operation: operationNamed(t, "connection.create"),
		Path: "/api/v1/projects/default/connections", Body: []byte(`{"name":"w1"}`), Reason: "a worker for the calculation"})
	if err != nil {
		t.Fatal(err)
	}
	a2 := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: f.key})
	member, err := a2.Directory().Authenticate(ctx, f.token)
	if err != nil {
		t.Fatal(err)
	}
	open, err := a2.Directory().Cards(ctx, member, "default", contract.CardOpen)
	if err != nil || len(open) != 1 || open[0].ID != card.ID || open[0].Subject.Kind != "connection" {
		t.Fatalf("open cards after a restart = %+v, %v; want the card bound to connection w1", open, err)
	}
	ops2 := authority.NewOperations(a2, operation.Config{})
	got, err := ops2.ConfirmCard(ctx, member, card.ID)
	if err != nil || got.State != contract.CardConfirmed || got.ClosedBy != member.Principal() {
		t.Fatalf("ConfirmCard after a restart = %+v, %v; want confirmed by the member", got, err)
	}
	_, err = ops.ConfirmCard(ctx, f.admin, card.ID)
	wantCode(t, err, contract.CodeCardClosed)
	if _, err := f.a.Directory().RevokeDelegate(ctx, f.admin, "asst"); err != nil {
		t.Fatal(err)
	}
	if shown, err := f.a.Directory().Card(ctx, f.admin, card.ID); err != nil || shown.State != contract.CardConfirmed {
		t.Errorf("card after its delegate's revocation = %+v, %v; want it confirmed still", shown, err)
	}
}

// TestDelegate_OperationalRunsAsTheDelegate: an operational act — retrying a failed
// Operation — runs for a delegate with no card, through the same checks as its
// member's, and is recorded as member:<name>/<delegate>.
func TestDelegate_OperationalRunsAsTheDelegate(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	dt, err := f.a.Directory().CreateDelegate(ctx, f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "8h"})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	if err != nil {
		t.Fatal(err)
	}
	l := f.startup(t, "wkr-a")
	id := f.fetch(t, "a.txt")
	f.failed(t, l, id)
	before, err := f.st.Head(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.ops.Operations().Retry(ctx, dc, "default", id, contract.RetryRequest{Reason: "the disk was cleaned"})
	if err != nil || out.Retry == "" {
		t.Fatalf("the delegate's retry = %+v, %v; want a new Operation", out, err)
	}
	evs, err := f.st.Events(ctx, "default", before.Seq, 100)
	if err != nil {
		t.Fatal(err)
	}
	acted := false
	for _, e := range evs {
		if e.Type == event.CardRecorded {
			t.Error("an operational act recorded a card")
		}
		if e.Type == event.RecoveryActed {
			acted = true
			if e.Actor != "member:ada/asst" {
				t.Errorf("recovery.acted actor = %s, want member:ada/asst", e.Actor)
			}
		}
	}
	if !acted {
		t.Error("no recovery.acted event")
	}
}

// TestCard_SharedStore: two authorities over one database (SQLite, and PostgreSQL when
// DOCKET_TEST_POSTGRES is set) record one delegate's cards at once: exactly
// MaxOpenCards are open after, the rest refused card_limit; a card recorded through one
// is confirmed once through either.
func TestCard_SharedStore(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newFixtureOn(t, s1)
			ctx := t.Context()
			dt, err := f.a.Directory().CreateDelegate(ctx, f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "8h"})
			if err != nil {
				t.Fatal(err)
			}
			b := newAuthorityOn(t, s2, f.key)
			opsA, opsB := authority.NewOperations(f.a, operation.Config{}), authority.NewOperations(b, operation.Config{})
			create := operationNamed(t, "agent.create")
			const tries = contract.MaxOpenCards + 6
			errs := make(chan error, tries)
			for i := range tries {
				ops, a := opsA, f.a
				if i%2 == 1 {
					ops, a = opsB, b
				}
				go func() {
					c, err := a.Directory().Authenticate(ctx, identity.Token(dt.Token))
					if err == nil {
						_, err = ops.Propose(ctx, c, "default", authority.ConsentCall{Operation: create,
							Path: "/api/v1/projects/default/agents", Body: fmt.Appendf(nil, `{"name":"a%d"}`, i), Reason: "one of many"})
					}
					errs <- err
				}()
			}
			limited := 0
			for range tries {
				switch err := <-errs; contract.CodeOf(err) {
				case contract.CodeCardLimit:
					limited++
				case "":
					if err != nil {
						t.Errorf("Propose: %v", err)
					}
				default:
					t.Errorf("Propose: %v", err)
				}
			}
			open, err := b.Directory().Cards(ctx, f.admin, "default", contract.CardOpen)
			if err != nil || len(open) != contract.MaxOpenCards || limited != tries-contract.MaxOpenCards {
				t.Fatalf("open cards = %d (%v), refused %d; want %d open and %d refused", len(open), err, limited, contract.MaxOpenCards, tries-contract.MaxOpenCards)
			}
			confirmed := 0
			for _, ops := range []*authority.Operations{opsB, opsA} {
				if _, err := ops.ConfirmCard(ctx, f.admin, open[0].ID); err == nil {
					confirmed++
				} else if contract.CodeOf(err) != contract.CodeCardClosed {
					t.Errorf("ConfirmCard: %v", err)
				}
			}
			if confirmed != 1 {
				t.Errorf("card confirmed %d times through two authorities, want once", confirmed)
			}
		})
	}
}

// operationNamed returns the changing operation named name, failing t when the table has
// none.
func operationNamed(t *testing.T, name string) opclass.Operation {
	t.Helper()
	op, ok := opclass.ByName(name)
	if !ok {
		t.Fatalf("the operation table has no %s", name)
	}
	return op
}
