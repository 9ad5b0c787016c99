package identity

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
)

// An Agent's token is presented on every MCP request, and most requests are polls
// (QueryBoard) that read the Agent's project log's head anyway. An Agent's token stops
// proving its Agent only by an event of that log — agent.revoked, agent.token_replaced —
// written in the transaction that changes the row (agents.go), so the row read at one
// head stays what a read of it would return until the log shows such an event. The
// Directory therefore keeps the Caller each Agent token proved and the head it was
// proved at, and on the next request reads the head (which the request hands on, so its
// call reads no head of its own) and asks the log's credential events (credentialLog,
// the State the held credentials' rounds follow, holds.go) instead of the row: a
// revocation on any serve of the store is refused as soon as a read of the row would
// refuse it (docs/security.md, "Credentials and streams").

// maxAgentCreds bounds the Agent tokens remembered. Only tokens that proved an Agent are
// kept, so a serve holds about one per Agent; past the bound the memory is dropped and
// the next requests read their rows again.
const maxAgentCreds = 1 << 14

// agentCred is what an Agent token proved, and the head of its project's log at which
// it did: the row was read after that head was (0: at a head not known, so any credential
// event in the log makes the next request read the row again).
type agentCred struct {
	caller Caller
	at     int64
}

// proved remembers, by the digest of a credential, what it proved, at most max of them:
// past the bound the memory is dropped, and the next requests check their rows again.
type proved[V any] struct {
	max int
	mu  sync.Mutex
	m   map[[sha256.Size]byte]V
}

func (p *proved[V]) get(key [sha256.Size]byte) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[key]
	return v, ok
}

func (p *proved[V]) put(key [sha256.Size]byte, v V) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= p.max {
		p.m = map[[sha256.Size]byte]V{}
	}
	p.m[key] = v
}

// AgentAt is [Directory.Authenticate] of an Agent's (or a coding agent's hook) token,
// which also returns the head of the Agent's project log at which the token was found
// to prove it, for the request to read its project at (see [eventlog.WithHead]); head
// is 0 when the check read no head. A token it proved before is proved again at a
// fresh head read without its row, unless the log shows an Agent's token replaced or an
// Agent revoked since; any other token is checked as Authenticate checks it.
func (a *Directory) AgentAt(ctx context.Context, tok Token) (c Caller, head int64, err error) {
	prefix, ok := tokenPrefix(string(tok))
	if !ok || (prefix != contract.PrefixAgent && prefix != contract.PrefixHook) {
		c, err = a.Authenticate(ctx, tok)
		return c, 0, err
	}
	key := sha256.Sum256([]byte(tok))
	e, known := a.creds.get(key)
	if known {
		project := e.caller.Projects[0]
		h, err := a.store.Head(ctx, string(project))
		if err != nil {
			return Caller{}, 0, fmt.Errorf("authenticate agent: read the head of %s: %w", project, eventlog.Refuse(err, "agent"))
		}
		last, err := a.credentialEventAt(ctx, project, h.Seq)
		if err != nil {
			return Caller{}, 0, fmt.Errorf("authenticate agent: %w", err)
		}
		if last <= e.at {
			return e.caller, h.Seq, nil
		}
		head = h.Seq
	}
	// The row is read after the head (when one was read), so it reflects every event up
	// to that head: a revocation committed after it is a credential event past at.
	if c, err = a.Authenticate(ctx, tok); err != nil {
		return Caller{}, 0, err
	}
	a.creds.put(key, agentCred{caller: c, at: head})
	return c, head, nil
}

// AtCheckedHead returns ctx carrying head, the head of c's project log at which
// [Directory.AgentAt] proved c's token (0: none, and ctx is returned as it is), so that
// the request's reads are made at that head without reading it again
// ([eventlog.WithHead]): reads made during the request, as fresh as a read of the head
// then. A door hands it only to a request's first reads: a call held past them reads
// later state at the heads its waits find.
func AtCheckedHead(ctx context.Context, c Caller, head int64) context.Context {
	if head <= 0 || len(c.Projects) != 1 {
		return ctx
	}
	return eventlog.WithHead(ctx, c.Projects[0], head)
}

// credentialEventAt returns the last event of project's log up to head that revoked or
// replaced a machine's credential; head 0 reads the log's head first.
func (a *Directory) credentialEventAt(ctx context.Context, project contract.ProjectID, head int64) (int64, error) {
	if head == 0 {
		h, err := a.store.Head(ctx, string(project))
		if err != nil {
			return 0, fmt.Errorf("read the head of %s: %w", project, eventlog.Refuse(err, "project "+string(project)))
		}
		head = h.Seq
	}
	last, err := a.holds.lastAt(ctx, project, head)
	if err != nil {
		return 0, fmt.Errorf("read the credential events of %s: %w", project, eventlog.Refuse(err, "project "+string(project)))
	}
	return last, nil
}

// maxConnCreds bounds the Connection keys remembered.
const maxConnCreds = 1 << 12

// ConnectionOf is [Directory.AuthenticateConnection] for the worker hop's door: a key it
// proved before is proved again from memory, without the Connection's row. A
// Connection's key is sealed once, when the Connection is created, so a key that matched
// its row once matches it for good; what may change is whether the Connection lives,
// and every hop call checks that itself in its project's log, at the head it reads
// (operation's connLocked: a Poll, a claim, a report, a renewal, a release), so a
// revocation through any serve is refused at the next hop call as before. Only a door
// whose every call makes that check may prove keys this way; a key whose Connection was
// revoked before it was first proved is refused here, by its row.
func (a *Directory) ConnectionOf(ctx context.Context, key Token) (contract.Connection, error) {
	d := sha256.Sum256([]byte(key))
	if c, ok := a.conns.get(d); ok {
		return c, nil
	}
	c, err := a.AuthenticateConnection(ctx, key)
	if err != nil {
		return contract.Connection{}, err
	}
	a.conns.put(d, c)
	return c, nil
}
