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
}

// wait returns the channel that Notify(project) will close.
func (n *Notifier) wait(project string) <-chan struct{} {
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
	return ch
}

// Notify wakes the waiters of each project.
func (n *Notifier) Notify(projects ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range projects {
		if ch, ok := n.waits[p]; ok {
			close(ch)
			delete(n.waits, p)
		}
	}
}

// Wait implements [store.Store.Wait]: it returns once head(project) is past after. It takes
// the wake-up channel before reading the head, so an event committed between the two is not
// missed. A poll above zero also rereads the head at that interval, for writers that do
// not reach n (other processes).
func (n *Notifier) Wait(ctx context.Context, head func(context.Context, string) (store.Head, error), project string, after int64, poll time.Duration) error {
	for {
		woken := n.wait(project)
		h, err := head(ctx, project)
		if err != nil {
			return err
		}
		if h.Seq > after {
			return nil
		}
		if err := sleep(ctx, woken, poll); err != nil {
			return err
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
