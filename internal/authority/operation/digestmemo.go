package operation

import (
	"encoding/json"

	"github.com/docketrun/docket/internal/bytememo"
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
	byIn    *bytememo.Memo[string]                                       // args NUL target NUL toolSpec → digest; NUL never occurs in JSON text
}

// maxMemoDigests bounds the digests kept: about as many rows as a Connection's workers
// hold served and not yet claimed, with room to spare; past it the memo starts again.
const maxMemoDigests = 1024

func newDigestMemo() *digestMemo {
	return &digestMemo{compute: grant.RequestDigest, byIn: bytememo.New[string](maxMemoDigests)}
}

// digest returns the request digest of args, target and toolSpec, computed once while
// it is remembered. An error is never remembered.
func (m *digestMemo) digest(args, target, toolSpec json.RawMessage) (string, error) {
	key := make([]byte, 0, len(args)+len(target)+len(toolSpec)+2)
	key = append(append(append(append(append(key, args...), 0), target...), 0), toolSpec...)
	if d, ok := m.byIn.Get(key); ok {
		return d, nil
	}
	d, err := m.compute(args, target, toolSpec)
	if err != nil {
		return "", err
	}
	m.byIn.Put(key, d)
	return d, nil
}
