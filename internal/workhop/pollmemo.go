package workhop

import (
	"slices"

	"github.com/docketrun/docket/internal/bytememo"
	"github.com/docketrun/docket/internal/contract"
)

// pollMemo remembers the Poll bodies decoded lately, by their exact bytes. A worker sends
// its whole Tool list (descriptors, params, descriptions: kilobytes) with every Poll, and
// its Polls differ only in the free slots they ask for, so the authority parsed and
// decoded the same text strictly again and again, a Poll being most of what it decoded
// per governed action (benchmarks/README.md, "Where a governed action's time goes").
// Decoding is a function of the bytes alone, so the request remembered is the one a
// decode gives again; a refusal is never remembered, and is decoded, and refused, each
// time. It is safe for concurrent use.
type pollMemo struct {
	decode func(b []byte, v *contract.WorkBody) error // contract.DecodeStrict; a test counts its calls
	byBody *bytememo.Memo[contract.PollRequest]
}

// The memo keeps at most maxMemoPolls bodies of at most maxMemoPollBody bytes each: a
// few workers' Polls at each number of free slots. Past it, it starts again.
const (
	maxMemoPolls    = 64
	maxMemoPollBody = 64 << 10
)

func newPollMemo() *pollMemo {
	return &pollMemo{decode: func(b []byte, v *contract.WorkBody) error { return contract.DecodeStrict(b, v) },
		byBody: bytememo.New[contract.PollRequest](maxMemoPolls)}
}

// decodeBody decodes b, a /work body, strictly into in, taking a Poll decoded before
// from the memo. A request taken from it has slices of its own at the top (its Tools
// and vault Sources, which the Dispatcher keeps); what they hold is shared with the
// memo, as a decoded request's was with what the Dispatcher kept of it: read only.
func (m *pollMemo) decodeBody(b []byte, in *contract.WorkBody) error {
	if len(b) <= maxMemoPollBody {
		if p, ok := m.byBody.Get(b); ok {
			*in = contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkPoll, Poll: ownPoll(p)}}
			return nil
		}
	}
	if err := m.decode(b, in); err != nil {
		return err
	}
	if in.Operation.Kind != contract.WorkPoll || in.Operation.Poll == nil || len(b) > maxMemoPollBody {
		return nil
	}
	m.byBody.Put(b, *ownPoll(*in.Operation.Poll))
	return nil
}

// ownPoll returns a copy of p whose top-level slices and generation are its own.
func ownPoll(p contract.PollRequest) *contract.PollRequest {
	if p.Generation != nil {
		g := *p.Generation
		p.Generation = &g
	}
	if p.Tools != nil {
		p.Tools = slices.Clone(p.Tools)
	}
	if p.VaultSources != nil {
		p.VaultSources = slices.Clone(p.VaultSources)
	}
	return &p
}
