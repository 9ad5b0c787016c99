package task

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestAskOpen_DoesNotWaitInATransaction checks the one call into the task ledger made from
// inside another writer's transaction: while a task write holds the ledger (and may be
// waiting for the head that transaction holds), AskOpen refuses after its bounded wait
// with eventlog.ErrBusy, for the caller's write to run again, instead of waiting for good;
// held by a read that ends within the bound (another ask's origin), it waits for it and
// checks the task; free, it checks the task as before.
func TestAskOpen_DoesNotWaitInATransaction(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const project = contract.ProjectID("p")
	if err := st.Update(ctx, func(tx store.Tx) error {
		return tx.CreateProject(ctx, store.Project{ID: string(project), Name: "p", CreatedAt: time.Now().UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	k := New(Config{Store: eventlog.Remember(st, nil)})
	askOpen := func() error {
		var got error
		if err := st.Update(ctx, func(tx store.Tx) error {
			got = k.AskOpen(ctx, nil, tx, project, "t-gone")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}

	h := k.ledgers.Lock(project)
	err = askOpen()
	h.Unlock()
	if !errors.Is(err, eventlog.ErrBusy) {
		t.Fatalf("AskOpen in a transaction while the ledger is held = %v, want %v", err, eventlog.ErrBusy)
	}
	if err := askOpen(); contract.CodeOf(err) != contract.CodeAskRefused {
		t.Fatalf("AskOpen of a task that does not exist, ledger free = %v, want %s", err, contract.CodeAskRefused)
	}

	// A read holds the ledger and lets go while the transaction's check waits for it.
	h = k.ledgers.Lock(project)
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(askOpenWait / 20)
		h.Unlock()
	}()
	err = askOpen()
	<-released
	if contract.CodeOf(err) != contract.CodeAskRefused {
		t.Fatalf("AskOpen in a transaction while a read briefly holds the ledger = %v, want %s after waiting for it", err, contract.CodeAskRefused)
	}
}
