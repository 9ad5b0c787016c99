package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storetest"
)

// TestWait_HeadReads checks when Wait reads the head. A Store that is the file's only
// writer reads none for waits past its own commits, which wake them. Another process's
// append is seen within the poll; once a read showed one, each wait reads the head at
// once, so that the next is seen without waiting for the poll.
func TestWait_HeadReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	a, other := openAt(t, path), openAt(t, path)
	storetest.AppendOne(t, a, "p")
	for after := int64(1); after <= 5; after++ {
		if seq, _ := storetest.WaitFor(t, a, "p", after, func() {
			time.Sleep(10 * time.Millisecond) // the wait sleeps by now
			storetest.AppendOne(t, a, "p")
		}); seq != after+1 {
			t.Fatalf("Wait(after %d) = %d; want %d", after, seq, after+1)
		}
	}
	if n := a.WaitReads(); n != 0 {
		t.Fatalf("waits past the only writer's own commits read the head %d times; want none", n)
	}
	storetest.AppendOne(t, other, "p") // seq 7, before the wait
	if seq, took := storetest.WaitFor(t, a, "p", 6, nil); seq != 7 || took > 3*sqlite.PollInterval {
		t.Fatalf("Wait(after 6) past another process's append = %d after %v; want 7 within the poll (%v)", seq, took, sqlite.PollInterval)
	}
	storetest.AppendOne(t, other, "p") // seq 8
	if seq, took := storetest.WaitFor(t, a, "p", 7, nil); seq != 8 || took > sqlite.PollInterval/2 {
		t.Fatalf("Wait(after 7) once another writer showed = %d after %v; want 8 at once", seq, took)
	}
}
