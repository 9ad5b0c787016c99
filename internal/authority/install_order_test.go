package authority_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// orderPackage is a capability release id@1.0.0 declaring one Case Type, <name>_case, and
// one Action, <name>_act.
func orderPackage(id, name string) contract.CapabilityUpload {
	return contract.CapabilityUpload{Files: map[string]string{"capability.toml": fmt.Sprintf(`id      = %[1]q
version = "1.0.0"
title   = "Declaration order test"

[[source]]
name  = "%[2]s_src"
type  = "file"
words = ["%[2]s_fact"]
tier  = "attested"

[[case_type]]
name        = "%[2]s_case"
title       = "%[2]s"
description = "A Case of %[2]s."
key         = { predicate = "%[2]s_fact", args = ["k"] }
opening       = "%[2]s_fact"
opening_floor = "attested"
acceptance    = "%[2]s_ok"
minimum_grounding_floor = "attested"

[[action]]
name        = "%[2]s_act"
description = "Mark k done."
effects     = ["%[2]s_done(k: ?k)"]
[[action.param]]
name = "k"
type = "string"
`, id, name),
		"rules.dl": fmt.Sprintf("%[1]s_ok(k: K) :- %[1]s_done(k: K).\n", name)}}
}

// declared lists what a's Board of project default declares, in the Board's order: its
// Case Types, then its Actions.
func declared(t *testing.T, a *authority.Authority) []string {
	t.Helper()
	var out []string
	if err := a.View(t.Context(), "default", func(b *board.Board) error {
		v := b.View(board.ViewRequest{Principal: "member:ada"})
		for _, ct := range v.CaseTypes.Items {
			out = append(out, "case "+ct.Name)
		}
		for _, ac := range v.Actions.Items {
			out = append(out, "action "+ac.Name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAuthority_OneDeclarationOrder: the Board declares its installed releases in release
// id order (bytes, as Go compares them) and then the direct Actions, on every path that
// makes one: the installing instance's Board, another instance's that follows the log, and
// one built from the store at a start, on SQLite and PostgreSQL, whatever order the store
// lists the releases in. The instance following the log applies the install from its
// event (boards/follow.go), with no build. A release whose id sorts before an installed one is installed
// after it, with a Tool locked, so the installing instance's Board, made from its own
// sources, would otherwise hold it last.
func TestAuthority_OneDeclarationOrder(t *testing.T) {
	want := []string{
		"case alpha_case", "case zeta_case", "case exploration",
		"action alpha_act", "action zeta_act", "action acme.notes.list@1",
	}
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newFixtureOn(t, s1)
			ctx := t.Context()
			if _, err := f.a.InstallCapability(ctx, f.admin, "default", orderPackage("zeta.order", "zeta")); err != nil {
				t.Fatalf("install zeta.order: %v", err)
			}
			if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "notes"}); err != nil {
				t.Fatal(err)
			}
			d := notesList
			if _, err := f.a.Directory().LockTool(ctx, f.admin, "default", "notes", contract.ToolLock{Tool: string(d.Tool), Digest: d.Digest, Descriptor: &d}); err != nil {
				t.Fatal(err)
			}
			other := newAuthorityOn(t, s2, f.key)
			if err := other.Restore(ctx); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			declared(t, f.a) // the first instance's Board follows the log from here
			builds := f.a.BoardBuilds("default")
			if _, err := other.InstallCapability(ctx, f.admin, "default", orderPackage("alpha.order", "alpha")); err != nil {
				t.Fatalf("install alpha.order: %v", err)
			}
			fresh := newAuthorityOn(t, s1, f.key)
			if err := fresh.Restore(ctx); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			for _, c := range []struct {
				name string
				a    *authority.Authority
			}{
				{"the installing instance", other},
				{"another instance following the log", f.a},
				{"an instance built at its start", fresh},
			} {
				if diff := cmp.Diff(want, declared(t, c.a)); diff != "" {
					t.Errorf("%s declares (-want +got):\n%s", c.name, diff)
				}
			}
			if n := f.a.BoardBuilds("default") - builds; n != 0 {
				t.Errorf("the instance following the log built its Board %d times over the other's install, want 0: it is applied from its event", n)
			}
		})
	}
}

// wholeView is the View member ada is shown of a's Board of project default.
func wholeView(t *testing.T, a *authority.Authority) contract.View {
	t.Helper()
	var v contract.View
	if err := a.View(t.Context(), "default", func(b *board.Board) error {
		v = b.View(board.ViewRequest{Principal: "member:ada"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}
