package store

import "fmt"

// ChainError names the first event where a log stops matching its hash chain.
type ChainError struct {
	Project string
	Seq     int64  // the event's sequence number (or, for Field "head", the head's)
	Field   string // what differs: "project", "seq", "prev_hash", "data", "hash" or "head"
	Want    string // what the chain requires
	Got     string // what the log holds
}

// Error names the project, the sequence number and what differs.
func (e *ChainError) Error() string {
	return fmt.Sprintf("store: event chain broken: project %s seq %d: %s is %s, want %s",
		e.Project, e.Seq, e.Field, e.Got, e.Want)
}

// Unwrap makes a *ChainError match [ErrChainBroken].
func (e *ChainError) Unwrap() error { return ErrChainBroken }

// Chain checks a project's events one by one, from Seq 1, against the hash chain. The zero
// value is not usable; use [NewChain]. A Chain is not safe for concurrent use.
type Chain struct {
	project string
	head    Head
}

// NewChain returns a Chain at the start of project's log.
func NewChain(project string) *Chain { return &Chain{project: project} }

// Head returns the last event checked (the zero Head before the first).
func (c *Chain) Head() Head { return c.head }

// Next checks e as the event after the last one checked and returns a *[ChainError] for
// the first field that differs: the sequence must be the next one, PrevHash the previous
// event's hash, DataHash the sha256 of Data, and Hash [EventHash] of the event.
func (c *Chain) Next(e Event) error {
	broken := func(field, want, got string) error {
		return &ChainError{Project: c.project, Seq: e.Seq, Field: field, Want: want, Got: got}
	}
	switch {
	case e.Project != c.project:
		return broken("project", c.project, e.Project)
	case e.Seq != c.head.Seq+1:
		return broken("seq", fmt.Sprint(c.head.Seq+1), fmt.Sprint(e.Seq))
	case e.PrevHash != c.head.Hash:
		return broken("prev_hash", c.head.Hash.String(), e.PrevHash.String())
	}
	if d := DataHash(e.Data); d != e.DataHash {
		return broken("data", e.DataHash.String(), "data hashing to "+d.String())
	}
	if h := EventHash(e); h != e.Hash {
		return broken("hash", h.String(), e.Hash.String())
	}
	c.head = Head{Seq: e.Seq, Hash: e.Hash}
	return nil
}

// End checks that the stored head of the log is the last event checked, so that events
// removed from the end of a log are found too.
func (c *Chain) End(stored Head) error {
	if stored != c.head {
		return &ChainError{Project: c.project, Seq: stored.Seq, Field: "head",
			Want: fmt.Sprintf("seq %d hash %s", c.head.Seq, c.head.Hash),
			Got:  fmt.Sprintf("seq %d hash %s", stored.Seq, stored.Hash)}
	}
	return nil
}
