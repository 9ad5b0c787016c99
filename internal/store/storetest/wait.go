package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// AppendOne appends one event to project's log on s, for a backend's own tests of when
// a wait wakes.
func AppendOne(t *testing.T, s store.Store, project string) {
	t.Helper()
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: project, Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("append to %s: %v", project, err)
	}
}

// WaitFor runs s.Wait(project, after), with during run once the wait started, and
// returns its seq and how long it took.
func WaitFor(t *testing.T, s store.Store, project string, after int64, during func()) (int64, time.Duration) {
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
