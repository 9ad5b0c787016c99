package task

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// heldPart is another part of the project log than the task ledger (the operation
// ledger, in the authority).
type heldPart struct{}

func (heldPart) Apply(store.Event) error { return nil }

// TestAskOpen_ThroughTheHeldLog checks AskOpen for a caller holding the project's log
// through another part of the Log the task ledger joined, inside its transaction (an
// approved ask's post, holding the operation ledger): it reads the asking task through
// the lock held, with no wait and no eventlog.ErrBusy (the bounded wait of a caller
// holding nothing would refuse: the lock is held), at the holder's catch-up inside the
// transaction, so a cancel another instance committed since is seen before the post.
func TestAskOpen_ThroughTheHeldLog(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const project = contract.ProjectID("p")
	at := time.Now().UTC().Round(0)
	member := contract.NewPrincipal(contract.PrincipalMember, "ada")
	appendOne := func(s store.Store, p event.Payload) {
		t.Helper()
		if err := s.Update(ctx, func(tx store.Tx) error { return eventlog.Append(ctx, tx, project, member, at, p) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Update(ctx, func(tx store.Tx) error {
		return tx.CreateProject(ctx, store.Project{ID: string(project), Name: "p", CreatedAt: at})
	}); err != nil {
		t.Fatal(err)
	}
	mem := eventlog.Remember(st, nil)
	l := eventlog.NewLog(mem)
	k := New(Config{Store: mem, Log: l})
	other := eventlog.Join(l, func() heldPart { return heldPart{} })
	appendOne(mem, event.TaskPostedData{Task: contract.Task{ID: "t-1", Project: project, Agent: "calc", Kind: contract.TaskKindTask, Text: "x",
		Conversation: "c-1", PostedBy: member, PostedAt: at, State: contract.TaskQueued, UpdatedAt: at}})

	// askOpen runs AskOpen of t-1 in a transaction that locks the head, holding the
	// project's log through the other part and catching it up inside the transaction,
	// as the operation ledger's write sequence does.
	askOpen := func() error {
		t.Helper()
		h := other.Lock(project)
		defer h.Unlock()
		var got error
		if err := h.Update(ctx, func(tx store.Tx, _ heldPart) error {
			got = k.AskOpen(ctx, h, tx, project, "t-1")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := askOpen(); err != nil {
		t.Fatalf("AskOpen of an open task through the held log = %v, want nil", err)
	}
	appendOne(st, event.TaskCancelRequestedData{Task: "t-1", TaskCancel: contract.TaskCancel{By: member, At: at}}) // another instance's
	err = askOpen()
	if errors.Is(err, eventlog.ErrBusy) {
		t.Fatalf("AskOpen through the held log = %v: it waited for the lock its caller holds", err)
	}
	if contract.CodeOf(err) != contract.CodeAskRefused {
		t.Fatalf("AskOpen after another instance's cancel = %v, want %s: the cancel is seen inside the transaction", err, contract.CodeAskRefused)
	}
}
