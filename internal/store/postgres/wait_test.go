package postgres_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/storetest"
)

// eventually fails t unless ok holds within d.
func eventually(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// appendLater appends to project on s once a wait had time to sleep.
func appendLater(t *testing.T, s store.Store, project string) func() {
	return func() {
		time.Sleep(10 * time.Millisecond)
		storetest.AppendOne(t, s, project)
	}
}

// TestWait_HeadReads checks when Wait reads the head while the listener listens: waits
// past this Store's own commits read none (their notifications included), and another
// instance's commit made before the wait is seen at once.
func TestWait_HeadReads(t *testing.T) {
	dsn := newDB(t)
	a, other := openAt(t, dsn), openAt(t, dsn)
	eventually(t, 5*time.Second, "the listener listens", a.Listening)
	storetest.AppendOne(t, a, "p")
	if seq, _ := storetest.WaitFor(t, a, "p", 1, appendLater(t, a, "p")); seq != 2 {
		t.Fatalf("Wait(after 1) = %d; want 2", seq)
	}
	first := a.WaitReads() // the first wait knows nothing yet: it reads
	for after := int64(2); after <= 6; after++ {
		if seq, _ := storetest.WaitFor(t, a, "p", after, appendLater(t, a, "p")); seq != after+1 {
			t.Fatalf("Wait(after %d) = %d; want %d", after, seq, after+1)
		}
	}
	if n := a.WaitReads() - first; n != 0 {
		t.Fatalf("waits past this Store's own commits read the head %d times; want none", n)
	}
	storetest.AppendOne(t, other, "p") // seq 8, before the wait
	if seq, took := storetest.WaitFor(t, a, "p", 7, nil); seq != 8 || took > postgres.PollInterval/2 {
		t.Fatalf("Wait(after 7) past another instance's append = %d after %v; want 8 at once", seq, took)
	}
}

// TestWait_ListenerLost checks that a waiter reads the head once the listener's
// connection is lost (a notification may have been lost with it), and sees an append
// made while the listener reconnects.
func TestWait_ListenerLost(t *testing.T) {
	dsn := newDB(t)
	a, other := openAt(t, dsn), openAt(t, dsn)
	eventually(t, 5*time.Second, "the listener listens", a.Listening)
	storetest.AppendOne(t, a, "p")
	storetest.WaitFor(t, a, "p", 1, appendLater(t, a, "p")) // a knows the head: later waits read none
	done := make(chan int64, 1)
	go func() {
		seq, err := a.Wait(t.Context(), "p", 2)
		if err != nil {
			t.Errorf("Wait(after 2): %v", err)
		}
		done <- seq
	}()
	time.Sleep(20 * time.Millisecond) // the wait sleeps
	reads := a.WaitReads()
	if err := postgres.ExecRaw(t.Context(), a, false, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN docket_events' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatalf("end the listeners' connections: %v", err)
	}
	eventually(t, postgres.PollInterval/2, "the waiter reads the head when the listener is lost", func() bool { return a.WaitReads() > reads })
	storetest.AppendOne(t, other, "p") // its notification is lost while the listeners reconnect
	select {
	case seq := <-done:
		if seq != 3 {
			t.Fatalf("Wait(after 2) = %d; want 3", seq)
		}
	case <-time.After(3 * postgres.PollInterval):
		t.Fatalf("Wait(after 2) missed another instance's append made while the listener reconnected")
	}
}
