package operation

import (
	"encoding/json"
	"sync"

	"github.com/docketrun/docket/internal/grant"
)

// digestMemo remembers the request digests ([grant.RequestDigest]) of the rows this
// instance shaped lately, by the exact bytes they were computed over. A row is shaped
// twice on its way to the worker, for the Poll that serves it and for the Claim that
// checks its grant against a fresh shape (docs/architecture.md, "One governed call
// through the authority"), from the same args, target and tool spec: the second shape
// takes the digest, a canonical (JCS) transform and a hash, from here. The digest is a
// function of those bytes alone, so a digest remembered is the one computed again. It
// is safe for concurrent use.
type digestMemo struct {
	compute func(args, target, toolSpec json.RawMessage) (string, error) // grant.RequestDigest; a test counts its calls

	mu   sync.Mutex
	byIn map[string]string // args NUL target NUL toolSpec → digest; NUL never occurs in JSON text
}

// maxMemoDigests bounds the digests kept: about as many rows as a Connection's workers
// hold served and not yet claimed, with room to spare; past it the memo starts again.
const maxMemoDigests = 1024

func newDigestMemo() *digestMemo {
	return &digestMemo{compute: grant.RequestDigest, byIn: map[string]string{}}
}

// digest returns the request digest of args, target and toolSpec, computed once while
// it is remembered. An error is never remembered.
func (m *digestMemo) digest(args, target, toolSpec json.RawMessage) (string, error) {
	key := string(args) + "\x00" + string(target) + "\x00" + string(toolSpec)
	m.mu.Lock()
	d, ok := m.byIn[key]
	m.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := m.compute(args, target, toolSpec)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	if len(m.byIn) >= maxMemoDigests {
		clear(m.byIn)
	}
	m.byIn[key] = d
	m.mu.Unlock()
	return d, nil
}
