package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// RecheckEvery is how long a held stream or long-poll outlives a credential that another
// serve of the same store revoked, or whose life ended: the holds ask the one check again
// this often while anything is held. A revocation made through this Directory ends its
// holds at once. One check costs a few indexed reads per distinct credential held, so a
// second keeps a serve holding hundreds of streams well under a percent of a core.
const RecheckEvery = time.Second

// recheckLimit bounds one round of checks, so that a store that stopped answering cannot
// keep the round from ever ending; the next round asks again.
const recheckLimit = 10 * time.Second

// holds knows every stream and long-poll held open under a credential, so that when the
// credential stops proving its caller (revoked, rotated, expired, its session signed out,
// its member gone from the project: whatever [Directory.Authenticate] or
// [Directory.AuthenticateConnection] refuses) the stream ends, instead of serving the
// caller it was opened for until the client hangs up (docs/security.md, "Credentials and
// streams"). Credentials are keyed by the digest of their token; the tokens themselves
// stay in memory only, as long as the requests that presented them, and log as a digest.
type holds struct {
	mu      sync.Mutex                  // guards held and running
	held    map[[sha256.Size]byte]*held // by token digest; an entry lives while a hold of it does
	running bool                        // the recheck loop is running; it stops when held is empty

	// wake asks the running loop to check at once: a revocation through this Directory
	// sends on it. Buffered by one and never closed; a send that would block is dropped,
	// since one pending wake checks everything.
	wake chan struct{}
}

// held is one credential's open holds.
type held struct {
	tok   Token
	ends  map[*context.CancelCauseFunc]struct{}
	ended bool // the check refused tok; its holds were ended
}

func newHolds() *holds {
	return &holds{held: map[[sha256.Size]byte]*held{}, wake: make(chan struct{}, 1)}
}

// Hold returns a context for a stream or long-poll that tok was presented for: it ends
// when ctx does, or when tok stops proving its caller, with the refusal the one check
// gave (a [*contract.Error] coded credential_revoked, session_expired or
// unauthenticated) as its cause; see [CredentialEnded]. That is within [RecheckEvery]
// of a revocation by another serve over the same store or of the credential's expiry,
// and at once for a revocation through this Directory. done must be called when the
// stream ends. Every door that holds a response open takes its context from Hold.
func (a *Directory) Hold(ctx context.Context, tok Token) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	key := sha256.Sum256([]byte(tok))
	h := a.holds
	h.mu.Lock()
	e := h.held[key]
	if e == nil {
		e = &held{tok: tok, ends: map[*context.CancelCauseFunc]struct{}{}}
		h.held[key] = e
	}
	e.ends[&cancel] = struct{}{}
	start := !h.running
	h.running = true
	h.mu.Unlock()
	if start {
		go a.recheck()
	}
	return ctx, func() {
		h.mu.Lock()
		delete(e.ends, &cancel)
		if len(e.ends) == 0 && h.held[key] == e {
			delete(h.held, key)
		}
		h.mu.Unlock()
		cancel(nil)
	}
}

// CredentialEnded returns the refusal that ended a context from [Directory.Hold] because
// its credential stopped proving its caller, and nil when ctx is live or ended otherwise:
// a long-poll answers it, so its client learns why instead of seeing a cut connection.
func CredentialEnded(ctx context.Context) error {
	var ce *contract.Error
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &ce) && credentialCode(ce.Code) {
		return ce
	}
	return nil
}

// credentialCode reports whether code says a credential no longer proves its caller, as
// opposed to a failure of the store, which ends no stream.
func credentialCode(code contract.Code) bool {
	switch code {
	case contract.CodeCredentialRevoked, contract.CodeSessionExpired, contract.CodeUnauthenticated:
		return true
	}
	return false
}

// revoked tells the holds that a credential of this Directory was just revoked, so they
// check at once rather than at their next round.
func (a *Directory) revoked() {
	select {
	case a.holds.wake <- struct{}{}:
	default:
	}
}

// recheck asks the one check of every held credential every RecheckEvery, and at once
// when woken, ending the holds of each credential it refuses. It is started by the first
// hold and returns once nothing is held, so it lives exactly as long as some stream does.
func (a *Directory) recheck() {
	t := time.NewTicker(RecheckEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-a.holds.wake:
		}
		toks, ok := a.holds.credentials()
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), recheckLimit)
		for _, tok := range toks {
			if err := a.check(ctx, tok); err != nil {
				if a.holds.end(tok, err) {
					a.log.Info("a credential no longer proves its caller; its streams end", logToken, tok, logErr, err)
				}
			}
		}
		cancel()
	}
}

// check is the one check a door made of tok, asked again: nil while tok still proves its
// caller, the refusal when it no longer does. A failure of the store is not a refusal: it
// says nothing of the credential, and the next round asks again.
func (a *Directory) check(ctx context.Context, tok Token) error {
	var err error
	if _, ok := ParseConnectionKey(tok); ok {
		_, err = a.AuthenticateConnection(ctx, tok)
	} else {
		_, err = a.Authenticate(ctx, tok)
	}
	var ce *contract.Error
	if errors.As(err, &ce) && credentialCode(ce.Code) {
		return ce
	}
	if err != nil {
		a.log.Warn("a held credential could not be checked; its streams stay open until the next check", logToken, tok, logErr, err)
	}
	return nil
}

// credentials returns the tokens held now; ok is false, and the loop marked stopped, when
// none is.
func (h *holds) credentials() (_ []Token, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held) == 0 {
		h.running = false
		return nil, false
	}
	toks := make([]Token, 0, len(h.held))
	for _, e := range h.held {
		toks = append(toks, e.tok)
	}
	return toks, true
}

// end ends every hold of tok with cause why, and reports whether tok was seen ending for
// the first time (so that it is logged once, not at every round until its holds let go).
func (h *holds) end(tok Token, why error) (first bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.held[sha256.Sum256([]byte(tok))]
	if e == nil {
		return false
	}
	first = !e.ended
	e.ended = true
	for cancel := range e.ends {
		(*cancel)(why)
	}
	return first
}
