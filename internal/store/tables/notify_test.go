package tables

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// fakeLog is a log's head in a database, which the Notifier reads through head.
type fakeLog struct {
	mu    sync.Mutex
	seq   int64
	reads int
}

func (f *fakeLog) head(context.Context, string) (store.Head, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return store.Head{Seq: f.seq}, nil
}

func (f *fakeLog) set(seq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq = seq
}

func (f *fakeLog) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// world is a Notifier over one log, "p", and the steps of a test on it.
type world struct {
	t   *testing.T
	n   *Notifier
	log *fakeLog
}

// commit appends up to seq as this process (NotifyBatch).
func (w *world) commit(seq int64) {
	w.n.BeginCommit()
	w.log.set(seq)
	w.n.NotifyBatch(&Batch{heads: map[string]store.Head{"p": {Seq: seq}}})
	w.n.EndCommit()
}

// wait runs Wait(p, after) and returns its seq and the heads it read.
func (w *world) wait(after int64, poll time.Duration) (int64, int) {
	w.t.Helper()
	before := w.log.readCount()
	ctx, cancel := context.WithTimeout(w.t.Context(), 5*time.Second)
	defer cancel()
	seq, err := w.n.Wait(ctx, w.log.head, "p", after, poll)
	if err != nil {
		w.t.Fatalf("Wait(after %d): %v", after, err)
	}
	return seq, w.log.readCount() - before
}

// waitWoken runs Wait(p, after) while wake runs once the wait has had time to sleep, and
// returns its seq and the heads it read.
func (w *world) waitWoken(after int64, poll time.Duration, wake func()) (int64, int) {
	w.t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-time.After(20 * time.Millisecond):
			wake()
		case <-stop:
		}
	})
	seq, reads := w.wait(after, poll)
	close(stop)
	wg.Wait()
	return seq, reads
}

// TestNotifier_Reads checks when Wait reads the head: never for a single writer's
// re-waits, always once another writer showed up or the listener may have missed a
// notification, and at each poll.
func TestNotifier_Reads(t *testing.T) {
	const noPoll = 0
	tests := []struct {
		name string
		run  func(w *world)
	}{
		{"a single writer's re-waits read no head", func(w *world) {
			w.log.set(4) // the log from before this process
			if seq, reads := w.waitWoken(4, noPoll, func() { w.commit(5) }); seq != 5 || reads != 1 {
				w.t.Fatalf("first wait = seq %d with %d reads; want 5 with 1 (nothing known yet)", seq, reads)
			}
			for seq := int64(5); seq < 10; seq++ {
				if got, reads := w.waitWoken(seq, noPoll, func() { w.commit(seq + 1) }); got != seq+1 || reads != 0 {
					w.t.Fatalf("re-wait after %d = seq %d with %d reads; want %d with none", seq, got, reads, seq+1)
				}
			}
		}},
		{"the poll reads, and finds another writer, whose logs are then read at each wait", func(w *world) {
			w.commit(1)
			w.log.set(2) // another process appends
			if seq, reads := w.wait(1, 10*time.Millisecond); seq != 2 || reads != 1 {
				w.t.Fatalf("wait past another writer's append = seq %d with %d reads; want 2 with 1 (the poll's)", seq, reads)
			}
			w.log.set(3)
			if seq, reads := w.wait(2, time.Hour); seq != 3 || reads != 1 {
				w.t.Fatalf("wait once another writer showed = seq %d with %d reads; want 3 at once", seq, reads)
			}
		}},
		{"a head read while this process commits is not taken for another writer", func(w *world) {
			w.commit(1)
			w.n.BeginCommit()
			w.log.set(2) // committed, and not yet given to NotifyBatch
			if seq, reads := w.wait(1, 10*time.Millisecond); seq != 2 || reads != 1 {
				w.t.Fatalf("wait = seq %d with %d reads; want 2 with 1 (the poll's)", seq, reads)
			}
			w.n.NotifyBatch(&Batch{heads: map[string]store.Head{"p": {Seq: 2}}})
			w.n.EndCommit()
			if seq, reads := w.waitWoken(2, noPoll, func() { w.commit(3) }); seq != 3 || reads != 0 {
				w.t.Fatalf("re-wait = seq %d with %d reads; want 3 with none", seq, reads)
			}
		}},
		{"with a listener, a re-wait with no notification reads no head", func(w *world) {
			w.n.SetListening(true)
			if seq, reads := w.waitWoken(0, noPoll, func() { w.commit(1) }); seq != 1 || reads != 1 {
				w.t.Fatalf("first wait = seq %d with %d reads; want 1 with 1", seq, reads)
			}
			if seq, reads := w.waitWoken(1, noPoll, func() { w.commit(2) }); seq != 2 || reads != 0 {
				w.t.Fatalf("re-wait = seq %d with %d reads; want 2 with none", seq, reads)
			}
		}},
		{"with a listener, this process's own notifications make no wait read", func(w *world) {
			w.n.SetListening(true)
			w.waitWoken(0, noPoll, func() { w.commit(1) })
			for seq := int64(1); seq < 5; seq++ {
				own := func() {
					b := &Batch{heads: map[string]store.Head{"p": {Seq: seq + 1}}}
					w.n.Expect(b)
					w.commit(seq + 1)
					w.n.Notify("p") // the listener hears it
				}
				if got, reads := w.waitWoken(seq, noPoll, own); got != seq+1 || reads != 0 {
					w.t.Fatalf("re-wait after %d = seq %d with %d reads; want %d with none", seq, got, reads, seq+1)
				}
			}
		}},
		{"with a listener, a commit that failed after Expect makes waiters read", func(w *world) {
			w.n.SetListening(true)
			w.waitWoken(0, noPoll, func() { w.commit(1) })
			failed := func() {
				b := &Batch{heads: map[string]store.Head{"p": {Seq: 2}}}
				w.n.Expect(b)
				w.log.set(2) // another instance's commit, delivered first and taken for b's
				w.n.Notify("p")
				w.n.Unexpect(b)
			}
			if seq, reads := w.waitWoken(1, noPoll, failed); seq != 2 || reads != 1 {
				w.t.Fatalf("wait past a failed commit = seq %d with %d reads; want 2 with 1", seq, reads)
			}
		}},
		{"with a listener, a notification makes the next wait read", func(w *world) {
			w.n.SetListening(true)
			w.waitWoken(0, noPoll, func() { w.commit(1) })
			w.log.set(2) // another instance appends, and its notification comes
			w.n.Notify("p")
			if seq, reads := w.wait(1, noPoll); seq != 2 || reads != 1 {
				w.t.Fatalf("wait after a notification = seq %d with %d reads; want 2 with 1", seq, reads)
			}
		}},
		{"with a listener, a notification wakes a waiter that read no head", func(w *world) {
			w.n.SetListening(true)
			w.waitWoken(0, noPoll, func() { w.commit(1) })
			if seq, reads := w.waitWoken(1, noPoll, func() { w.log.set(2); w.n.Notify("p") }); seq != 2 || reads != 1 {
				w.t.Fatalf("wait woken by a notification = seq %d with %d reads; want 2 with 1", seq, reads)
			}
		}},
		{"a listener that stopped makes waiters read, at each wait until it listens again", func(w *world) {
			w.n.SetListening(true)
			w.waitWoken(0, noPoll, func() { w.commit(1) })
			// Another instance appends, and the connection drops before its notification.
			if seq, reads := w.waitWoken(1, noPoll, func() { w.log.set(2); w.n.SetListening(false) }); seq != 2 || reads != 1 {
				w.t.Fatalf("wait when the listener stopped = seq %d with %d reads; want 2 with 1", seq, reads)
			}
			if seq, reads := w.waitWoken(2, noPoll, func() { w.commit(3) }); seq != 3 || reads != 1 {
				w.t.Fatalf("wait while not listening = seq %d with %d reads; want 3 with 1", seq, reads)
			}
			// Appended while the listener reconnects: no notification will come.
			if seq, reads := w.waitWoken(3, noPoll, func() { w.log.set(4); w.n.SetListening(true) }); seq != 4 || reads != 2 {
				w.t.Fatalf("wait when the listener listens again = seq %d with %d reads; want 4 with 2", seq, reads)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(&world{t: t, n: &Notifier{}, log: &fakeLog{}})
		})
	}
}
