package tables

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// MaxBatch bounds how many Updates one group commit runs in its transaction, so that a
// burst does not keep one transaction open, and its caller waiting, for long.
const MaxBatch = 64

// savepoint names the savepoint each call of a batch of several runs in.
const savepoint = "docket_call"

// Group commits together the Updates that arrive while another commits (group commit):
// the first caller becomes the leader and runs its own function in a transaction; the
// callers that queued meanwhile are run by the next leader, one after the other in one
// transaction, each inside a savepoint, and committed with one COMMIT. Each caller returns
// only after the commit of its function's writes, never before; a function that fails is
// rolled back to its savepoint, leaving the others' writes, and its caller gets its error
// at once. Functions run in the order they arrived, on the leader's goroutine; a panic
// is carried back to the caller whose function panicked. The zero value is ready; a Group
// is safe for concurrent use.
type Group struct {
	mu      sync.Mutex
	queue   []*call // calls not yet taken into a batch, in arrival order; guarded by mu
	leading bool    // a leader is running a batch or about to; guarded by mu
	// expect is how many calls may queue soon: those the last batch settled, whose callers
	// may be about to write again, and those queued when it ended; ended is when that was.
	// Guarded by mu.
	expect int
	ended  time.Time
}

// The states of a call: queued until a leader runs it or its caller gives up; a queued
// call may be promoted to lead the next batch.
const (
	queued int32 = iota
	promoted
	running
	cancelled
)

type call struct {
	ctx   context.Context
	fn    func(store.Tx) error
	state atomic.Int32
	lead  chan struct{} // closed when the call is promoted to leader
	done  chan struct{} // closed when the call is settled
	// Set before done is closed.
	err      error
	panicked bool
	panicVal any
	// Only the leader running the call reads and writes these.
	ran, settled bool
}

func (c *call) settle(err error) {
	if c.settled {
		return
	}
	c.settled = true
	c.err = err
	close(c.done)
}

// Do runs fn in a transaction together with the calls queued beside it and returns once
// that transaction committed (nil) or fn failed (its error, unchanged). commit runs one
// [Batch]: it begins the transaction, calls [Batch.Run], writes the heads and commits, and
// settles the batch with [Batch.Settle]. While fn waits its turn, ctx ending makes Do give
// up; once fn runs, Do returns what became of it.
func (g *Group) Do(ctx context.Context, fn func(store.Tx) error, commit func(*Batch)) error {
	c := &call{ctx: ctx, fn: fn, lead: make(chan struct{}), done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := !g.leading
	if lead {
		g.leading = true
		c.state.Store(promoted)
	}
	g.mu.Unlock()
	if !lead {
		select {
		case <-c.done:
		case <-c.lead:
			lead = true
		case <-ctx.Done():
			if c.state.CompareAndSwap(queued, cancelled) {
				return fmt.Errorf("wait for the writer: %w", context.Cause(ctx))
			}
			// Promoted or already running: see it through.
			select {
			case <-c.done:
			case <-c.lead:
				lead = true
			}
		}
	}
	if lead {
		g.runBatch(commit)
		<-c.done // a leader's own call is the first of its batch
	}
	if c.panicked {
		panic(c.panicVal)
	}
	return c.err
}

// errAbandoned settles the calls of a batch whose leader's goroutine exited while it ran
// them (runtime.Goexit in a function, as a failing test's t.Fatal does).
var errAbandoned = errors.New("the write was abandoned: the goroutine running it exited; nothing was committed")

// runBatch takes up to MaxBatch queued calls, has commit run them, and then promotes the
// next queued call, if any, to lead the next batch. It first gathers (see gather), so
// that the callers the last batch released are able to queue their next writes, which
// then join this batch instead of waiting for the next commit.
func (g *Group) runBatch(commit func(*Batch)) {
	g.gather()
	g.mu.Lock()
	n := min(len(g.queue), MaxBatch)
	b := &Batch{calls: make([]*call, n)}
	copy(b.calls, g.queue)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	g.mu.Unlock()
	defer func() {
		b.Settle(errAbandoned) // a no-op unless commit did not settle every call
		g.mu.Lock()
		defer g.mu.Unlock()
		g.expect, g.ended = min(len(b.calls)+len(g.queue), MaxBatch), time.Now()
		for len(g.queue) > 0 {
			next := g.queue[0]
			if next.state.CompareAndSwap(queued, promoted) {
				close(next.lead)
				return
			}
			g.queue = append(g.queue[:0], g.queue[1:]...) // its caller gave up
		}
		g.leading = false
	}()
	commit(b)
}

// How long a leader gathers (see [Group.gather]).
const (
	gatherIdle = 20 * time.Microsecond  // at most this long after the last call queued
	gatherMax  = 200 * time.Microsecond // at most this long in all
)

// gather holds a leader back while the calls that may queue soon do: until the queue
// holds as many calls as the last batch ran plus those queued when it ended, or none
// queued for gatherIdle, or gatherMax passed. It yields the processor meanwhile, so the
// callers that batch released run on it. A leader arriving more than gatherIdle after the
// last batch ended does not wait: the callers it released had their time to come back.
//
// Why wait on the queue itself: a leader that only yielded once, measured on 2 busy cores
// with 8 writers each waiting for its own commit, found 2.4 calls a commit, because the
// other processor took it up again before the released callers ran, and because a batch
// that took every queued call left the Group idle, so the first caller back led a batch
// of one. Gathering, 72% of the batches held all 8 calls (6.6 on average: where a round of
// the benchmark starts and ends, its writers come one by one).
func (g *Group) gather() {
	g.mu.Lock()
	n, want, ended := len(g.queue), g.expect, g.ended
	g.mu.Unlock()
	if n >= want || time.Since(ended) > gatherIdle {
		return
	}
	last := time.Now()
	start := last
	for n < want {
		runtime.Gosched()
		g.mu.Lock()
		m := len(g.queue)
		g.mu.Unlock()
		now := time.Now()
		if m > n {
			n, last = m, now
			continue
		}
		if now.Sub(last) >= gatherIdle || now.Sub(start) >= gatherMax {
			return
		}
	}
}

// Batch is the calls of a [Group] that one transaction runs. Its methods are called by
// the leader alone.
type Batch struct {
	calls []*call
	heads map[string]store.Head // heads appended by the calls that succeeded so far
	ok    int                   // how many calls' functions succeeded
}

// Run runs each call's function in arrival order on the Tx newTx returns over c, an
// open transaction, and reports whether any succeeded (so there is something to commit).
// A call whose caller gave up, or whose context ended before its turn, is settled with
// that error unrun. With more than one call, each runs inside a savepoint: a function
// that fails or panics is rolled back to it and settled at once, and the next call starts
// from the heads the successful ones left. An error of the savepoint statements
// themselves is returned; the transaction must then be rolled back and the batch settled
// with the error.
func (b *Batch) Run(ctx context.Context, c Conn, newTx func() *Tx) (bool, error) {
	nested := len(b.calls) > 1
	for _, cl := range b.calls {
		if !cl.state.CompareAndSwap(queued, running) && !cl.state.CompareAndSwap(promoted, running) {
			continue // cancelled: its caller already returned
		}
		if err := cl.ctx.Err(); err != nil {
			cl.settle(fmt.Errorf("wait for the writer: %w", context.Cause(cl.ctx)))
			continue
		}
		if nested {
			if _, err := c.Exec(ctx, "SAVEPOINT "+savepoint); err != nil {
				return false, fmt.Errorf("savepoint: %w", err) // Settle settles cl
			}
		}
		cl.ran = true
		tx := newTx()
		tx.before = b.heads
		err, failed := cl.run(tx)
		if failed {
			if nested {
				if _, rerr := c.Exec(ctx, "ROLLBACK TO SAVEPOINT "+savepoint); rerr != nil {
					cl.settle(err)
					return false, fmt.Errorf("roll back to savepoint: %w", rerr)
				}
				if _, rerr := c.Exec(ctx, "RELEASE SAVEPOINT "+savepoint); rerr != nil {
					cl.settle(err)
					return false, fmt.Errorf("release savepoint: %w", rerr)
				}
			}
			cl.settle(err)
			if !nested {
				return false, nil
			}
			continue
		}
		if nested {
			if _, err := c.Exec(ctx, "RELEASE SAVEPOINT "+savepoint); err != nil {
				return false, fmt.Errorf("release savepoint: %w", err) // Settle settles cl
			}
		}
		if len(tx.heads) > 0 {
			if b.heads == nil {
				b.heads = make(map[string]store.Head, len(tx.heads))
			}
			for p, h := range tx.heads {
				b.heads[p] = h
			}
		}
		b.ok++
	}
	return b.ok > 0, nil
}

// run calls the function on tx; failed is true when it returned an error or panicked
// (then the panic is kept in the call, to be raised again by its caller).
func (cl *call) run(tx *Tx) (err error, failed bool) {
	completed := false
	defer func() {
		if completed {
			return
		}
		if r := recover(); r != nil {
			cl.panicked, cl.panicVal = true, r
			failed = true
		}
	}()
	err = cl.fn(tx)
	completed = true
	return err, err != nil
}

// Heads returns the statements that write the heads of the logs the batch appended to, in
// project order; an implementation may send them with its COMMIT.
func (b *Batch) Heads() []Statement {
	return headStatements(b.heads)
}

// Finish writes the heads of the logs the batch appended to on c. Call it after Run and
// before commit.
//
// A log's head row exists from its first commit on (rows of event_heads are never
// deleted), so Finish updates it in place by its key, and upserts only when the update
// found no row: the upsert first tries an INSERT, which fails on the key, on every commit
// but a log's first.
func (b *Batch) Finish(ctx context.Context, c Conn) error {
	projects := slices.Sorted(maps.Keys(b.heads))
	for _, p := range projects {
		h := b.heads[p]
		n, err := c.Exec(ctx, `UPDATE event_heads SET seq = $1, hash = $2 WHERE project = $3`, h.Seq, h.Hash[:], p)
		if err == nil && n == 0 {
			_, err = c.Exec(ctx, headUpsert, p, h.Seq, h.Hash[:])
		}
		if err != nil {
			return fmt.Errorf("write head of %s: %w", p, err)
		}
	}
	return nil
}

// Settle settles every call of the batch not settled yet: with nil after the transaction
// committed, or with the error that ended it. A call the batch never ran (Run stopped
// before its turn) gets that error, or errAbandoned when there is none. Only the first
// Settle of a call counts.
func (b *Batch) Settle(err error) {
	for _, cl := range b.calls {
		if !cl.state.CompareAndSwap(queued, running) && !cl.state.CompareAndSwap(promoted, running) &&
			cl.state.Load() != running {
			continue // cancelled: its caller already returned
		}
		if !cl.ran && err == nil {
			cl.settle(errAbandoned)
			continue
		}
		cl.settle(err)
	}
}
