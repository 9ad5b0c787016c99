// Package storetest is the one conformance suite of store.Store: every implementation runs
// [Run] from its tests, so the SQLite and PostgreSQL stores cannot drift apart.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// Harness is how the suite reaches an implementation.
type Harness struct {
	// NewDB creates a fresh, empty database, removed when t ends, and returns a function
	// that opens a Store on it. Each call of open returns another instance on the same
	// database, closed when its t ends, so the suite can run several instances together
	// (as several `docket serve` processes share one database). Required.
	NewDB func(t *testing.T) (open func(t *testing.T) store.Store)

	// Tamper runs one raw SQL statement ($1… placeholders) on s's database with the
	// immutability guards off, so the suite can forge the tampering that Verify must find.
	// Nil skips the tamper tests.
	Tamper func(t *testing.T, s store.Store, query string, args ...any)

	// Raw runs one raw SQL statement ($1… placeholders) on s's database with every guard
	// on, as anyone holding the database's credentials could, and returns its error as the
	// store maps it to its sentinels. The suite checks with it that a rule is the schema's,
	// not only the code's. Nil skips those tests.
	Raw func(t *testing.T, s store.Store, query string, args ...any) error

	// FailCommit makes every transaction of s's database that appends an event of type
	// typ fail at its COMMIT, after the functions of its Updates returned nil: a deferred
	// constraint, checked only at COMMIT, fails it for real, as a disk that fills or a
	// commit PostgreSQL loses would. Nil skips the test of a failed commit.
	FailCommit func(t *testing.T, s store.Store, typ string)
}

// Run runs the whole suite against h, each test on a fresh database.
func Run(t *testing.T, h Harness) {
	t.Helper()
	tests := []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"Events/AppendRead", testAppendRead},
		{"Events/Page", testPage},
		{"Events/Batch", testBatch},
		{"Events/Projects", testProjects},
		{"Events/Blob", testBlob},
		{"Events/Refused", testRefused},
		{"Events/Rollback", testRollback},
		{"Events/Concurrent", testConcurrent},
		{"Events/LockHead", testLockHead},
		{"Events/AppendAll", testAppendAll},
		{"Events/AppendAllRefused", testAppendAllRefused},
		{"Events/AppendAllConcurrent", testAppendAllConcurrent},
		{"Events/GroupCommit", testGroupCommit},
		{"Events/GroupPanic", testGroupPanic},
		{"Events/Cancelled", testCancelled},
		{"Events/CancelledRunning", testCancelledRunning},
		{"Events/CommitFails", testCommitFails},
		{"Events/Wait", testWait},
		{"Verify/Intact", testVerifyIntact},
		{"Verify/Tamper", testTamper},
		{"Identity/InstallationKey", testInstallationKey},
		{"Identity/Projects", testProjectRecords},
		{"Identity/Members", testMembers},
		{"Identity/Sessions", testSessions},
		{"Identity/Delegates", testDelegates},
		{"Identity/Cards", testCards},
		{"Identity/Agents", testAgents},
		{"Identity/Connections", testConnections},
		{"Capability/Releases", testReleases},
		{"Capability/Installs", testInstalls},
		{"Nodes/RoundTrip", testNodes},
		{"Nodes/PutNodes", testPutNodes},
		{"Leases/RoundTrip", testLeases}, {"Leases/Locked", testLeaseLocked},
		{"Leases/LockedWithHead", testLeasesHead}, {"Leases/HeadAfterLock", testLeasesHeadAfterLock},
		{"Leases/ReadWithHead", testLeasesHeadRead},
		{"Schedules/RoundTrip", testSchedules},
		{"Budgets/RoundTrip", testBudgets},
		{"Notices/Subscriptions", testNoticeSubscriptions}, {"Notices/Claims", testNoticeClaims},
		{"Tx/ReadsOwnWrites", testReadsOwnWrites},
		{"Tx/ReadFirst", testReadFirst},
		{"Store/Closed", testClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, h) })
	}
}

// t0 is the suite's clock: every time it stores is t0 plus an offset, to the nanosecond.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// open returns a Store on a fresh database.
func open(t *testing.T, h Harness) store.Store {
	t.Helper()
	return h.NewDB(t)(t)
}

// update runs fn in one transaction and fails t if it returns an error.
func update(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	ctx := t.Context()
	if err := s.Update(ctx, func(tx store.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// updateErr runs fn in one transaction and returns Update's error.
func updateErr(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) error {
	t.Helper()
	ctx := t.Context()
	return s.Update(ctx, func(tx store.Tx) error { return fn(ctx, tx) })
}

// wantErr fails t unless err matches want (nil wants no error).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("%s: %v, want no error", what, err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// newEvent returns the i-th test event of project.
func newEvent(project string, i int) store.NewEvent {
	return store.NewEvent{
		Project: project,
		ID:      fmt.Sprintf("ev-%d", i),
		Type:    "test.appended",
		At:      t0.Add(time.Duration(i) * time.Millisecond),
		Actor:   "member:ann",
		Data:    json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)),
	}
}

// appendN appends events 1..n of project, one transaction each, and returns them.
func appendN(t *testing.T, s store.Store, project string, n int) []store.Event {
	t.Helper()
	var out []store.Event
	for i := 1; i <= n; i++ {
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			e, err := tx.Append(ctx, newEvent(project, i))
			out = append(out, e)
			return err
		})
	}
	return out
}

// allEvents reads project's whole log, page by page.
func allEvents(t *testing.T, r store.Reader, project string) []store.Event {
	t.Helper()
	var out []store.Event
	after := int64(0)
	for {
		page, err := r.Events(t.Context(), project, after, 50)
		if err != nil {
			t.Fatalf("Events(%s, after %d): %v", project, after, err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Seq
	}
}
