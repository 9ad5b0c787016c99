package authority_test

import (
	"context"
	"errors"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

func TestAuthority_InstallCapability(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	up := authoritytest.ReadPackage(t, "testdata/calc")
	in, err := f.a.InstallCapability(ctx, f.admin, "default", up)
	if err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	if !in.Created || in.Release.ID != "demo.calc" || in.Release.Version != "1.0.0" {
		t.Errorf("first install = %+v, want demo.calc@1.0.0 created", in)
	}
	again, err := f.a.InstallCapability(ctx, f.admin, "default", up)
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.Release.Digest != in.Release.Digest {
		t.Errorf("second install = %+v, want the same release, not created", again)
	}

	changed := authoritytest.ReadPackage(t, "testdata/calc")
	changed.Files["rules.dl"] += "\ntriple(job: J, value: V) :- input(job: J, n: N), mul(left: N, right: 3, result: V).\n"
	_, err = f.a.InstallCapability(ctx, f.admin, "default", changed)
	wantCode(t, err, contract.CodeReleaseConflict)

	bad := contract.CapabilityUpload{Files: map[string]string{"capability.toml": "id = \"x\"\n"}}
	_, err = f.a.InstallCapability(ctx, f.admin, "default", bad)
	wantCode(t, err, contract.CodeCapabilityInvalid)

	rs, err := f.a.Installs(ctx, f.admin, "default")
	if err != nil || len(rs) != 1 || rs[0].Digest != in.Release.Digest {
		t.Errorf("Installs = %+v, %v; want the one release", rs, err)
	}
}

// faultStore is a store whose Update runs fn and then fails, so that the transaction is
// rolled back after the authority believed it would commit.
type faultStore struct {
	store.Store
	fail bool
}

var errInjected = errors.New("injected commit failure")

func (s *faultStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if s.fail {
			return errInjected
		}
		return nil
	})
}

func assertInput(job string, n int64) func(b *board.Board) (boards.Change, error) {
	return func(b *board.Board) (boards.Change, error) {
		v, err := contract.IntValue(n)
		if err != nil {
			return boards.Change{}, err
		}
		res, err := b.ApplyBatch(board.Author{Principal: "member:test", Tier: contract.TierAttested},
			contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "input", Args: contract.Args{"job": contract.StringValue(job), "n": v}}}}})
		if err != nil {
			return boards.Change{}, err
		}
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, nil
	}
}

// countInputs counts the input facts on the project's Board.
func countInputs(t *testing.T, a *authority.Authority) int {
	t.Helper()
	n := 0
	err := a.View(t.Context(), "default", func(b *board.Board) error {
		for _, nd := range b.Nodes() {
			if nd.Atom != nil && nd.Atom.Predicate == "input" {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAuthority_Commit(t *testing.T) {
	f := newFixture(t)
	fs := &faultStore{Store: f.st}
	a := authoritytest.Bare(t, authoritytest.Options{Store: fs, Key: f.key})
	ctx := t.Context()
	if _, err := a.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/calc")); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx, "default", f.admin.Principal(), assertInput("a", 2)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	head, err := f.st.Head(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}

	fs.fail = true
	err = a.Commit(ctx, "default", f.admin.Principal(), assertInput("b", 3))
	if !errors.Is(err, errInjected) {
		t.Fatalf("Commit with a failing store = %v, want the injected failure", err)
	}
	if got := countInputs(t, a); got != 1 {
		t.Errorf("after a failed commit the Board holds %d inputs, want 1 (the failed one undone)", got)
	}
	if h, _ := f.st.Head(ctx, "default"); h != head {
		t.Errorf("a failed commit moved the log head from %d to %d", head.Seq, h.Seq)
	}

	// A refused batch writes nothing either.
	fs.fail = false
	err = a.Commit(ctx, "default", f.admin.Principal(), func(b *board.Board) (boards.Change, error) {
		_, err := b.ApplyBatch(board.Author{Principal: "member:test"}, contract.Batch{Operations: []contract.Operation{{Op: contract.OpRetractNode, NodeID: "nope"}}})
		return boards.Change{}, err
	})
	if err == nil {
		t.Fatal("retracting a missing node committed")
	}
	if h, _ := f.st.Head(ctx, "default"); h != head {
		t.Errorf("a refused batch moved the log head from %d to %d", head.Seq, h.Seq)
	}

	// A new authority on the same store restores the committed Board.
	b := authoritytest.Open(t, authoritytest.Options{Store: f.st, Key: f.key})
	if got := countInputs(t, b); got != 1 {
		t.Errorf("restored Board holds %d inputs, want 1", got)
	}
}

// TestAuthority_CommitRefusesANonBoardType: a Board change whose event is of a type the
// catalog marks as leaving the Board alone is refused before anything is written, and the
// Board is rebuilt without it. Otherwise a cached Board on another instance, which moves
// its cursor over such events without a rebuild, would never see the change
// (docs/architecture.md, the event catalog).
func TestAuthority_CommitRefusesANonBoardType(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.a.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/calc")); err != nil {
		t.Fatal(err)
	}
	head, err := f.st.Head(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	err = f.a.Commit(ctx, "default", f.admin.Principal(), func(b *board.Board) (boards.Change, error) {
		ch, err := assertInput("a", 2)(b)
		ch.Event = event.AgentRevokedData{ID: "agt_hidden"}
		return ch, err
	})
	if err == nil {
		t.Fatal("a Board change under agent.revoked committed")
	}
	if got := countInputs(t, f.a); got != 0 {
		t.Errorf("after the refused change the Board holds %d inputs, want 0", got)
	}
	if h, _ := f.st.Head(ctx, "default"); h != head {
		t.Errorf("the refused change moved the log head from %d to %d", head.Seq, h.Seq)
	}
}
