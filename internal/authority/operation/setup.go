package operation

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// A project's Connections as its log states them. Every write to a Connection, its tool
// locks and its Sources appends an event in the Connection's project in the same
// transaction (connection.created, connection.revoked, tool.locked, tool.unlocked,
// tool.approval_set, source.bound: [event.ChangesSetup]), so the operation ledger keeps
// that state as it applies the log, and the hop, the explanations, the queue depths and
// the request vectors read it there instead of reading the rows on every call. The
// ledger is caught up inside the transaction a hop call writes in (commitLocked), so a
// revocation, a lock or a binding any instance committed before that transaction read
// its head is seen there, exactly as a read of the rows in that transaction would see
// it; a call without a transaction (a Poll serving work) reads it at the head it caught
// the ledger up to. The Connection's sealed key is not in the log and stays with
// identity (docs/architecture.md, "The authority").

// connRecord is one Connection's setup at one point of its log. A record is never
// changed once a ledger holds it: an event replaces it, so a record handed out stays
// what the log said at the head it was read at, and is read without the ledger's lock.
type connRecord struct {
	id      contract.ConnectionID
	name    string
	revoked bool
	locks   []contract.ToolLock // by Tool; each digest in canonical form
	sources []contract.Source   // by name; each digest in canonical form
}

// lock returns the lock of tool on c, or false.
func (c *connRecord) lock(tool string) (contract.ToolLock, bool) {
	i := slices.IndexFunc(c.locks, func(l contract.ToolLock) bool { return l.Tool == tool })
	if i < 0 {
		return contract.ToolLock{}, false
	}
	return c.locks[i], true
}

// wire is c as the hop names it.
func (c *connRecord) wire(project contract.ProjectID) contract.Connection {
	return contract.Connection{ID: c.id, Project: project, Name: c.name}
}

// errConnRevoked refuses a hop call of a Connection the log shows revoked: the door
// authenticated it, and a revocation committed since (on any instance) is seen here.
func errConnRevoked(conn contract.Connection) error {
	return &contract.Error{Code: contract.CodeCredentialRevoked,
		Teaching: fmt.Sprintf("connection %s was revoked; create a new one (docket connection create).", conn.Name), Err: store.ErrRevoked}
}

// connLocked returns conn's record as the ledger holds it, or the hop's refusal: revoked,
// or not in the project's log (a Connection of another project, or a row the log never
// recorded, which serves nothing). The project's ledger must be locked.
func (l *ledgerState) connLocked(conn contract.Connection) (*connRecord, error) {
	c := l.conns[conn.ID]
	switch {
	case c == nil:
		return nil, fmt.Errorf("connection %s is not in the log of project %s", conn.ID, conn.Project)
	case c.revoked:
		return nil, errConnRevoked(conn)
	}
	return c, nil
}

// liveConnsLocked returns the project's live Connections, by id (the order the store
// lists them in). The project's ledger must be locked.
func (l *ledgerState) liveConnsLocked() []*connRecord {
	out := make([]*connRecord, 0, len(l.conns))
	for _, id := range slices.Sorted(maps.Keys(l.conns)) {
		if c := l.conns[id]; !c.revoked {
			out = append(out, c)
		}
	}
	return out
}

// setupLocked returns which Tools of the project are locked on a live Connection: an
// executed Action whose Tool is not is blocked with needs_setup. It is made from the
// Connections the ledger holds and kept until an event may change it: a cache of what
// the State applied, not an event's effect. The project's ledger must be locked.
func (l *ledgerState) setupLocked() board.Setup {
	if l.setup != nil {
		return *l.setup
	}
	s := board.Setup{Tools: map[string]bool{}}
	for _, c := range l.liveConnsLocked() {
		for _, lk := range c.locks {
			s.Tools[lk.Tool] = true
		}
	}
	l.setup = &s // shared by every caller from now on: nothing writes a Setup's map
	return s
}

// applySetupLocked applies an event that may change a Connection's setup
// ([event.ChangesSetup]). The project's ledger must be locked.
func (l *ledgerState) applySetupLocked(e store.Event) error {
	l.setup = nil
	switch e.Type {
	case event.ConnectionCreated:
		var d event.ConnectionCreatedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if _, ok := l.conns[d.ID]; !ok {
			l.conns[d.ID] = &connRecord{id: d.ID, name: d.Name}
		}
	case event.ConnectionRevoked:
		var d event.ConnectionRevokedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		id := contract.ConnectionID(d.ID)
		c := l.changeConn(id)
		c.revoked = true
		l.conns[id] = c
	case event.SourceBound:
		var d event.SourceBoundData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		src := d.Source
		dg, err := contract.ParseDigest(src.Digest)
		if err != nil {
			return fmt.Errorf("source %s of %s: %w", src.Name, src.Connection, err)
		}
		src.Digest = dg.String()
		c := l.changeConn(src.Connection)
		c.sources = slices.DeleteFunc(slices.Clone(c.sources), func(s contract.Source) bool { return s.Name == src.Name })
		c.sources = append(c.sources, src)
		slices.SortFunc(c.sources, func(a, b contract.Source) int { return cmp.Compare(a.Name, b.Name) })
		l.conns[src.Connection] = c
	case event.ToolLocked, event.ToolApprovalSet, event.ToolUnlocked:
		var d event.ToolLockedData // the shape of all three events
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		lk := d.ToolLock
		dg, err := contract.ParseDigest(lk.Digest)
		if err != nil {
			return fmt.Errorf("tool lock %s of %s: %w", lk.Tool, lk.Connection, err)
		}
		lk.Digest = dg.String()
		c := l.changeConn(lk.Connection)
		c.locks = slices.DeleteFunc(slices.Clone(c.locks), func(o contract.ToolLock) bool { return o.Tool == lk.Tool })
		if e.Type != event.ToolUnlocked {
			c.locks = append(c.locks, lk)
			slices.SortFunc(c.locks, func(a, b contract.ToolLock) int { return cmp.Compare(a.Tool, b.Tool) })
		}
		l.conns[lk.Connection] = c
	}
	return nil
}

// changeConn returns a copy of the record of id to change and put back: records are
// never changed in place. A Connection the log never created gets a record of its own,
// marked revoked, so that whatever the log says of it serves nothing.
func (l *ledgerState) changeConn(id contract.ConnectionID) *connRecord {
	c, ok := l.conns[id]
	if !ok {
		return &connRecord{id: id, revoked: true}
	}
	cp := *c
	return &cp
}
