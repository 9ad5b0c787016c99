package operation

import (
	"context"
	"sync"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
)

// pending is one hop call waiting to be committed with the others of its Connection.
type pending[T any] struct {
	ctx  context.Context
	call T
	done chan error    // its answer, sent once
	lead chan struct{} // told to lead the next batch
}

func newPending[T any](ctx context.Context, call T) *pending[T] {
	return &pending[T]{ctx: ctx, call: call, done: make(chan error, 1), lead: make(chan struct{}, 1)}
}

// batchQueue gathers the hop calls of one Connection that write (its claims and its
// reports): one of them at a time leads, taking every call waiting and committing them
// as one batch, then hands the lead to the first call that arrived meanwhile. It is a
// group commit at the hop's level: a claim or a report holds the project's lock through
// its commit, so the store's group commit could not batch what that lock kept apart.
type batchQueue[T any] struct {
	mu      sync.Mutex
	waiting []*pending[T] // guarded by mu
	leading bool          // a batch is being committed; guarded by mu
}

// await queues p and returns its answer: p leads a batch when no batch is being
// committed or when the one leading hands it over, and else waits for the batch that
// takes it. commit must send every call of the batch its answer. A call whose context
// ends while it waits still waits for its batch's answer, since it may be in a
// transaction already.
func (q *batchQueue[T]) await(p *pending[T], commit func([]*pending[T])) error {
	q.mu.Lock()
	q.waiting = append(q.waiting, p)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		select {
		case err := <-p.done:
			return err
		case <-p.lead:
		}
	}
	q.mu.Lock()
	batch := q.waiting
	q.waiting = nil
	q.mu.Unlock()
	commit(batch)
	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].lead <- struct{}{} // the first to arrive leads the next batch
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	return <-p.done
}

// hopCall is a claim or a report waiting for its batch: exactly one of the two is set. A
// Connection's claims and reports wait in one queue, so that the claims of a Poll's rows
// and the reports of rows run meanwhile commit in one transaction
// ([Dispatcher.hopBatch]), where a queue of each kind committed each apart, one
// transaction after the other under the project's one lock.
type hopCall struct {
	claim  *claimCall
	report *reportCall
}

// queue returns conn's batch queue of claims and reports.
func (d *Dispatcher) queue(conn contract.Connection) *batchQueue[*hopCall] {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.pending[conn.ID]
	if q == nil {
		q = &batchQueue[*hopCall]{}
		d.pending[conn.ID] = q
	}
	return q
}

// claimCall is a Claim, decoded, waiting for its batch.
type claimCall struct {
	req     contract.ClaimRequest
	agent   string
	ordinal int64
	key     identity.Token // the Connection key its grant verifies under; never logged
	grant   grant.Parsed   // its grant, parsed once when the claim arrived, verified in the batch
	err     error          // its own refusal in the batch
}

// reportCall is a Report waiting for its batch.
type reportCall struct {
	req     contract.ReportRequest
	agent   string
	ordinal int64
	digest  string
	first   *reportCall // the same work's report earlier in the batch, if any
	answer  error       // its own answer in the batch: a refusal, or a judged report's
}
