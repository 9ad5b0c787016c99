package console

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/docketrun/docket/internal/authority"
)

// errSignedOut ends the event streams of a session that signed out.
var errSignedOut = errors.New("console: the session signed out")

// streamSet knows the open event streams of each session, so that signing out ends them
// at once instead of at their next read of the log. Sessions are keyed by a digest of
// their token, so the set holds no secret. It is safe for concurrent use.
type streamSet struct {
	mu   sync.Mutex
	open map[[sha256.Size]byte]map[*context.CancelCauseFunc]struct{}
}

func newStreamSet() *streamSet {
	return &streamSet{open: map[[sha256.Size]byte]map[*context.CancelCauseFunc]struct{}{}}
}

// add returns a context for a stream of session tok that ends when ctx does or the
// session signs out; done must be called when the stream ends.
func (ss *streamSet) add(ctx context.Context, tok authority.Token) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	key := sha256.Sum256([]byte(tok.String()))
	ss.mu.Lock()
	if ss.open[key] == nil {
		ss.open[key] = map[*context.CancelCauseFunc]struct{}{}
	}
	ss.open[key][&cancel] = struct{}{}
	ss.mu.Unlock()
	return ctx, func() {
		ss.mu.Lock()
		delete(ss.open[key], &cancel)
		if len(ss.open[key]) == 0 {
			delete(ss.open, key)
		}
		ss.mu.Unlock()
		cancel(nil)
	}
}

// end ends every open stream of session tok.
func (ss *streamSet) end(tok authority.Token) {
	key := sha256.Sum256([]byte(tok.String()))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for cancel := range ss.open[key] {
		(*cancel)(errSignedOut)
	}
}
