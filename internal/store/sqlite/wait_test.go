package sqlite_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

func appendOne(t *testing.T, s store.Store, project string) {
	t.Helper()
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: project, Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("append to %s: %v", project, err)
	}
}

// waitFor runs s.Wait(project, after), with during run once the wait started, and
// returns its seq and how long it took.
func waitFor(t *testing.T, s *sqlite.Store, project string, after int64, during func()) (int64, time.Duration) {
	t.Helper()
	type result struct {
		seq int64
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		seq, err := s.Wait(t.Context(), project, after)
		done <- result{seq, err}
	}()
	if during != nil {
		during()
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("Wait(%s, after %d): %v", project, after, r.err)
	}
	return r.seq, time.Since(start)
}

// TestWait_HeadReads checks when Wait reads the head. A Store that is the file's only
// writer reads none for waits past its own commits, which wake them. Another process's
// append is seen within the poll; once a read showed one, each wait reads the head at
// once, so that the next is seen without waiting for the poll.
func TestWait_HeadReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	a, other := openAt(t, path), openAt(t, path)
	appendOne(t, a, "p")
	for after := int64(1); after <= 5; after++ {
		if seq, _ := waitFor(t, a, "p", after, func() {
			time.Sleep(10 * time.Millisecond) // the wait sleeps by now
			appendOne(t, a, "p")
		}); seq != after+1 {
			t.Fatalf("Wait(after %d) = %d; want %d", after, seq, after+1)
		}
	}
	if n := a.WaitReads(); n != 0 {
		t.Fatalf("waits past the only writer's own commits read the head %d times; want none", n)
	}
	appendOne(t, other, "p") // seq 7, before the wait
	if seq, took := waitFor(t, a, "p", 6, nil); seq != 7 || took > 3*sqlite.PollInterval {
		t.Fatalf("Wait(after 6) past another process's append = %d after %v; want 7 within the poll (%v)", seq, took, sqlite.PollInterval)
	}
	appendOne(t, other, "p") // seq 8
	if seq, took := waitFor(t, a, "p", 7, nil); seq != 8 || took > sqlite.PollInterval/2 {
		t.Fatalf("Wait(after 7) once another writer showed = %d after %v; want 8 at once", seq, took)
	}
}
