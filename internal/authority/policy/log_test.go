package policy_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/policy"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
)

const project contract.ProjectID = "p1"

// other is another part of the project log than the Book: the seq it applied last.
type other struct{ seq int64 }

func (o *other) Apply(e store.Event) error {
	o.seq = e.Seq
	return nil
}

// backends open a fresh store holding project: SQLite always, PostgreSQL when
// DOCKET_TEST_POSTGRES names a server.
var backends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", func(t *testing.T) store.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"postgres", func(t *testing.T) store.Store {
		st, err := postgres.Open(t.Context(), authoritytest.PostgresDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

// publishRecovery appends version n of the recovery policy to project's log through st,
// as a publication does (another instance's, when st is not the Book's store).
func publishRecovery(t *testing.T, st store.Store, n int64) {
	t.Helper()
	text := policydoc.BuiltinText(contract.PolicyRecovery) + "\n# version " + string(rune('0'+n)) + "\n"
	v := contract.PolicyVersion{Kind: contract.PolicyRecovery, Version: n, Digest: contract.Sum([]byte(text)).String(), File: "r.toml", Text: text}
	if err := st.Update(t.Context(), func(tx store.Tx) error {
		return eventlog.Append(t.Context(), tx, project, "member:m1", time.Now().UTC(), event.PolicyPublishedData{PolicyVersion: v})
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBook_OnASharedLog checks the Book as a part of a project log another part joined
// (the operation ledger, in the authority), on SQLite and PostgreSQL: a call holding the
// project's lock through the other part reads the policy in force through it, at that
// part's catch-up, without locking again (which would wait for good: the lock is the
// one it holds); a read that holds nothing answers from the Book's published state
// while the other part holds the lock, when that state covers the call's head; and a
// read at a head past it locks and catches up, so no answer is older than its head.
func TestBook_OnASharedLog(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			st := be.open(t)
			if err := st.Update(ctx, func(tx store.Tx) error {
				return tx.CreateProject(ctx, store.Project{ID: string(project), Name: "p", CreatedAt: time.Now().UTC()})
			}); err != nil {
				t.Fatal(err)
			}
			mem := eventlog.Remember(st, nil)
			l := eventlog.NewLog(mem)
			b := policy.Join(l, time.Now)
			o := eventlog.Join(l, func() *other { return &other{} })
			if b.Log() != l {
				t.Fatal("the Book is on another Log than the one it joined")
			}
			publishRecovery(t, mem, 2)

			h := o.Lock(project)
			if _, err := h.CatchUp(ctx, mem); err != nil {
				h.Unlock()
				t.Fatal(err)
			}
			v, _, err := b.InForceAlong(h, contract.PolicyRecovery)
			seq := h.Seq()
			h.Unlock() // publishes the Book's state at seq
			if err != nil || v.Version != 2 {
				t.Fatalf("InForceAlong under the other part's lock = version %d (%v), want 2", v.Version, err)
			}

			h = o.Lock(project)
			v, _, err = b.InForce(eventlog.WithHead(ctx, project, seq), project, contract.PolicyRecovery)
			h.Unlock()
			if err != nil || v.Version != 2 {
				t.Fatalf("InForce, holding nothing, while the other part holds the lock = version %d (%v), want 2 from the published state", v.Version, err)
			}

			publishRecovery(t, st, 3) // another instance's: past the published state
			v, _, err = b.InForce(context.WithoutCancel(ctx), project, contract.PolicyRecovery)
			if err != nil || v.Version != 3 {
				t.Fatalf("InForce at a head past the published state = version %d (%v), want 3", v.Version, err)
			}
			h = o.Lock(project)
			at := h.Seq()
			h.Unlock()
			if at != 2 {
				t.Errorf("the other part stands at %d after the Book's catch-up, want 2: one cursor for both", at)
			}
		})
	}
}
