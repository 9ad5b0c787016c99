package tables

import (
	"context"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// Notifier wakes the waiters of a project's log when events are committed. The zero value
// is ready to use; a Notifier is safe for concurrent use.
type Notifier struct {
	mu sync.Mutex
	// waits holds one channel per project with waiters. Notify closes it and removes it,
	// which wakes every waiter at once; the next waiter makes a new one.
	waits map[string]chan struct{}
	// seen holds, per project, the highest seq this process knows committed (from
	// NotifyHeads). It never runs ahead of the database; another process's appends may
	// put the database ahead of it, which Wait's read of the head covers.
	seen map[string]int64
}

// Notify wakes the waiters of each project.
func (n *Notifier) Notify(projects ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range projects {
		n.wakeLocked(p)
	}
}

// NotifyBatch wakes the waiters of each log that b, which committed, appended to, and
// remembers each head, so that a waiter woken by them returns without reading the head
// from the database (with many calls held on one log, those reads were a read per waiter
// per commit).
func (n *Notifier) NotifyBatch(b *Batch) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p, h := range b.heads {
		if n.seen == nil {
			n.seen = make(map[string]int64)
		}
		if h.Seq > n.seen[p] {
			n.seen[p] = h.Seq
		}
		n.wakeLocked(p)
	}
}

func (n *Notifier) wakeLocked(project string) {
	if ch, ok := n.waits[project]; ok {
		close(ch)
		delete(n.waits, project)
	}
}

// wait returns the channel that Notify(project) will close, and the highest seq of the
// log known committed by this process.
func (n *Notifier) wait(project string) (<-chan struct{}, int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ch, ok := n.waits[project]
	if !ok {
		if n.waits == nil {
			n.waits = make(map[string]chan struct{})
		}
		ch = make(chan struct{})
		n.waits[project] = ch
	}
	return ch, n.seen[project]
}

// Wait implements [store.Store.Wait]: it returns once head(project) is past after, or a
// head given to NotifyBatch is, with that head's seq. It takes the wake-up channel before
// reading the head, so an event committed between the two is not missed. A poll above
// zero also rereads the head at that interval, for writers that do not reach n (other
// processes).
func (n *Notifier) Wait(ctx context.Context, head func(context.Context, string) (store.Head, error), project string, after int64, poll time.Duration) (int64, error) {
	for {
		woken, seen := n.wait(project)
		if seen > after {
			return seen, nil
		}
		h, err := head(ctx, project)
		if err != nil {
			return 0, err
		}
		if h.Seq > after {
			return h.Seq, nil
		}
		if err := sleep(ctx, woken, poll); err != nil {
			return 0, err
		}
	}
}

// sleep returns when woken is closed, poll has passed (if above zero) or ctx ends.
func sleep(ctx context.Context, woken <-chan struct{}, poll time.Duration) error {
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTimer(poll)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-woken:
	case <-tick:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}
