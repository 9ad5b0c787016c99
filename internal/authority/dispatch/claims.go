package dispatch

import (
	"context"
	"sync"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// pendingClaim is one Claim waiting to be committed with the others of its Connection.
type pendingClaim struct {
	ctx           context.Context
	req           contract.ClaimRequest
	agent         string
	ordinal       int64
	key           identity.Token // the Connection key its grant verifies under; never logged
	adapterDigest string
	err           error         // its refusal in the batch; set by the batch's leader
	done          chan error    // its answer, sent once
	lead          chan struct{} // told to lead the next batch
}

// claimQueue gathers the claims of one Connection: one of them at a time leads, taking
// every claim waiting and committing them as one batch, then hands the lead to the first
// claim that arrived meanwhile. It is a group commit at the hop's level, because a claim
// holds the project's ledgers through its commit and the store's group commit cannot
// batch what that lock keeps apart.
type claimQueue struct {
	mu      sync.Mutex
	waiting []*pendingClaim // guarded by mu
	leading bool            // a batch is being committed; guarded by mu
}

// claims returns conn's claim queue.
func (d *Dispatcher) claims(conn contract.Connection) *claimQueue {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.pending[conn.ID]
	if q == nil {
		q = &claimQueue{}
		d.pending[conn.ID] = q
	}
	return q
}

// await queues c and returns its answer: c leads a batch when no batch is being
// committed or when the one leading hands it over, and else waits for the batch that
// takes it. A claim whose context ends while it waits still waits for its batch's
// answer, since it may be in a transaction already.
func (q *claimQueue) await(c *pendingClaim, commit func([]*pendingClaim)) error {
	q.mu.Lock()
	q.waiting = append(q.waiting, c)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		select {
		case err := <-c.done:
			return err
		case <-c.lead:
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
	return <-c.done
}
