package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// RecheckEvery is how long a held stream or long-poll outlives a credential that another
// serve of the same store revoked, or whose life ended: the holds look again this often
// while anything is held. A revocation made through this Directory ends its holds at once.
const RecheckEvery = time.Second

// recheckLimit bounds one round of checks, so that a store that stopped answering cannot
// keep the round from ever ending; the next round asks again.
const recheckLimit = 10 * time.Second

// holds knows every stream and long-poll held open under a credential, so that when the
// credential stops proving its caller (revoked, replaced, expired, its session signed out,
// its member gone from the project: whatever [Directory.Authenticate] or
// [Directory.AuthenticateConnection] refuses) the stream ends, instead of serving the
// caller it was opened for until the client hangs up (docs/security.md, "Credentials and
// streams").
//
// Each round asks the one check again of the credentials that may have ended:
//   - a person's (a member's session, a delegate), every round: a session's sign-out is
//     written to no log, and both end at a time no event marks;
//   - a machine's (an Agent's token, a Connection's key), at its first round, which also
//     learns its project, and then only when its project's log shows a credential event
//     (an Agent revoked or its token replaced, a Connection revoked) since the last round.
//     A serve holds thousands of these (one held call per Agent), and the log, read from
//     memory for this serve's own commits, is what tells which to ask about.
//
// Credentials are keyed by the digest of their token; the tokens themselves stay in
// memory only, as long as the requests that presented them, and log as a digest.
type holds struct {
	mu      sync.Mutex                  // guards held and running; never held during a check
	held    map[[sha256.Size]byte]*held // by token digest; an entry lives while a hold of it does
	running bool                        // the recheck loop is running; it stops when held is empty

	// wake asks the running loop to check at once: a revocation through this Directory
	// sends on it. Buffered by one and never closed; a send that would block is dropped,
	// since one pending wake checks everything.
	wake chan struct{}

	// logs follows the log of each project a machine's credential was held in, for its
	// credential events. It outlives the recheck loops, so that a project's log is read
	// from its start once per process. It is a part of a project [eventlog.Log] that
	// other parts may join (the authority's, with the operation ledger, whose claims and
	// admissions hold its one lock across their store transactions), so a read of it
	// holding nothing answers from its published state when that covers the head the read
	// made, and locks only otherwise ([holds.lastAt]).
	logs *eventlog.Driver[*credentialLog]
	// roundMu is held through a round, so rounds run one at a time; it guards seen.
	roundMu sync.Mutex
	// seen is, per project, the last credential event a round acted on.
	seen map[contract.ProjectID]int64

	// The recheck loop is the Directory's goroutine: it runs under life, and Close ends
	// life (stop) and waits for it (loops counts it; mu guards closed and its Add).
	life   context.Context
	stop   context.CancelFunc
	closed bool
	loops  sync.WaitGroup
}

// held is one credential's open holds.
type held struct {
	tok   Token
	ends  map[*context.CancelCauseFunc]struct{}
	ended bool // the check refused tok; its holds were ended
	// machine: tok is an Agent's token or a Connection's key, asked again only when its
	// project's log says a credential changed. project is learned at its first check;
	// "" until then.
	machine bool
	project contract.ProjectID
}

// newHolds returns the holds of a Directory whose log of credential events joins l.
func newHolds(l *eventlog.Log) *holds {
	h := &holds{held: map[[sha256.Size]byte]*held{}, wake: make(chan struct{}, 1),
		logs: eventlog.Join(l, func() *credentialLog { return &credentialLog{} }), seen: map[contract.ProjectID]int64{}}
	h.logs.Publish(func(c *credentialLog) any { return c.publish() })
	h.life, h.stop = context.WithCancel(context.Background())
	return h
}

// Close stops the loop that rechecks held credentials and waits for it; a hold taken
// afterwards ends only with its own context. It is safe to call more than once.
func (a *Directory) Close() {
	h := a.holds
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.stop()
	h.loops.Wait()
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
		prefix, _ := tokenPrefix(string(tok))
		e = &held{tok: tok, ends: map[*context.CancelCauseFunc]struct{}{},
			machine: prefix == contract.PrefixAgent || prefix == contract.PrefixConnection}
		h.held[key] = e
	}
	e.ends[&cancel] = struct{}{}
	if !h.running && !h.closed {
		h.running = true
		h.loops.Go(a.recheck)
	}
	h.mu.Unlock()
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

// recheck runs a round of checks every RecheckEvery, and at once when woken, ending the
// holds of each credential the one check refuses. It is started by the first hold and
// returns once nothing is held, so it lives exactly as long as some stream does.
func (a *Directory) recheck() {
	t := time.NewTicker(RecheckEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-a.holds.wake:
		case <-a.holds.life.Done():
			a.holds.mu.Lock()
			a.holds.running = false
			a.holds.mu.Unlock()
			return
		}
		hs, ok := a.holds.snapshot()
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(a.holds.life, recheckLimit)
		a.round(ctx, hs)
		cancel()
	}
}

// heldNow is what a round knows of one held credential.
type heldNow struct {
	tok     Token
	machine bool
	project contract.ProjectID
}

// round asks the one check of each credential in hs that may have ended (see [holds]).
func (a *Directory) round(ctx context.Context, hs []heldNow) {
	a.holds.roundMu.Lock()
	defer a.holds.roundMu.Unlock()
	changed := map[contract.ProjectID]bool{}
	for _, h := range hs {
		if !h.machine || h.project == "" {
			continue
		}
		if _, seen := changed[h.project]; seen {
			continue
		}
		changed[h.project] = a.credentialEvents(ctx, h.project)
	}
	for _, h := range hs {
		if h.machine && h.project != "" && !changed[h.project] {
			continue
		}
		project, err := a.check(ctx, h.tok)
		if err != nil {
			if a.holds.end(h.tok, err) {
				a.log.Info("a credential no longer proves its caller; its streams end", logToken, h.tok, logErr, err)
			}
			continue
		}
		if h.machine && project != "" {
			a.holds.learn(h.tok, project)
		}
	}
}

// credentialLog is what a round needs of a project's log (an [eventlog.State]): the last
// event that revoked or replaced a machine's credential.
type credentialLog struct {
	last int64
	// published is last as the state last published it ([credentialLog.publish]), nil
	// once Apply moved last since: every event of the project's log moves the cursor and
	// so publishes, and only the rare credential events change last.
	published *int64
}

// Apply notes e when it revokes or replaces a machine's credential.
func (c *credentialLog) Apply(e store.Event) error {
	switch e.Type {
	case event.AgentRevoked, event.AgentTokenReplaced, event.ConnectionRevoked:
		c.last, c.published = e.Seq, nil
	}
	return nil
}

// publish returns last as a value nothing changes, for reads made without the lock
// ([eventlog.Driver.Publish]): made again only when last moved since the last one.
func (c *credentialLog) publish() *int64 {
	if c.published == nil {
		last := c.last
		c.published = &last
	}
	return c.published
}

// lastAt returns the last event of project's log up to head (a head the caller read)
// that revoked or replaced a machine's credential. It answers from the state published
// when that covers head, so that a token's proof, which every MCP request makes, never
// waits for the project's lock that a claim batch or an admission of the operation
// ledger holds across its store transaction (docs/architecture.md, "The project state
// and its driver"); a snapshot behind head is not used: the state is then locked and
// caught up to head, as fresh as a read of it. The caller holds no lock of the project's
// log.
func (h *holds) lastAt(ctx context.Context, project contract.ProjectID, head int64) (int64, error) {
	if snap, ok := h.logs.Snapshot(project); ok && snap.Seq >= head {
		return *snap.Value.(*int64), nil
	}
	held := h.logs.Lock(project)
	defer held.Unlock()
	c, err := held.CatchUpTo(ctx, h.logs.Log().Store(), head)
	if err != nil {
		return 0, err
	}
	return c.last, nil
}

// credentialEvents reports whether project's log holds an event that revokes or replaces
// a machine's credential since the last round read it: the last such event is another
// than the one the last round saw (after a rebuild of the log's State too, which may
// find it moved back). A log that cannot be read reports true: its credentials are asked
// about rather than trusted, and the State keeps what it read, so a long log is read
// across rounds rather than from its start each time. holds.roundMu must be held.
func (a *Directory) credentialEvents(ctx context.Context, project contract.ProjectID) bool {
	last, err := a.credentialEventAt(ctx, project, 0)
	if err != nil {
		a.log.Warn("the log of a project with held credentials could not be read; they are checked again", logProject, project, logErr, err)
		return true
	}
	seen := a.holds.seen[project]
	a.holds.seen[project] = last
	return last != seen
}

// check is the one check a door made of tok, asked again: nil while tok still proves its
// caller, with the project of an Agent's token or a Connection's key; the refusal when it
// no longer does. A failure of the store is not a refusal: it says nothing of the
// credential, and a later round asks again.
func (a *Directory) check(ctx context.Context, tok Token) (contract.ProjectID, error) {
	var project contract.ProjectID
	var err error
	if _, ok := ParseConnectionKey(tok); ok {
		var cn contract.Connection
		cn, err = a.AuthenticateConnection(ctx, tok)
		project = cn.Project
	} else {
		var c Caller
		c, err = a.Authenticate(ctx, tok)
		if c.Kind == contract.PrincipalAgent && len(c.Projects) == 1 {
			project = c.Projects[0]
		}
	}
	var ce *contract.Error
	if errors.As(err, &ce) && credentialCode(ce.Code) {
		return "", ce
	}
	if err != nil {
		a.log.Warn("a held credential could not be checked; its streams stay open until it is", logToken, tok, logErr, err)
		return "", nil
	}
	return project, nil
}

// snapshot returns the credentials held now; ok is false, and the loop marked stopped,
// when none is.
func (h *holds) snapshot() (_ []heldNow, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held) == 0 {
		h.running = false
		return nil, false
	}
	hs := make([]heldNow, 0, len(h.held))
	for _, e := range h.held {
		hs = append(hs, heldNow{tok: e.tok, machine: e.machine, project: e.project})
	}
	return hs, true
}

// learn records the project of a machine's credential tok, once its first check passed:
// from then on it is asked about only when that project's log says a credential changed.
func (h *holds) learn(tok Token, project contract.ProjectID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.held[sha256.Sum256([]byte(tok))]; e != nil {
		e.project = project
	}
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
