package tables

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// Reader implements [store.Reader] over a [Conn]. It is as safe for concurrent use as its
// Conn.
type Reader struct {
	C Conn
}

var _ store.Reader = Reader{}

// defaultPage is the page size of Events when the caller gives none.
const defaultPage = 100

const eventColumns = `e.project, e.seq, e.id, e.type, e.at, e.actor, COALESCE(e.data, b.data),
	e.data_hash, e.prev_hash, e.hash
	FROM events e LEFT JOIN blobs b ON e.data IS NULL AND b.hash = e.data_hash`

func scanEvent(r Row) (store.Event, error) {
	var e store.Event
	var at int64
	var data, dataHash, prevHash, hash []byte
	if err := r.Scan(&e.Project, &e.Seq, &e.ID, &e.Type, &at, &e.Actor, &data, &dataHash, &prevHash, &hash); err != nil {
		return store.Event{}, err
	}
	e.At = fromNanos(at)
	e.Data = data
	// A hash of the wrong length is kept as zeros, which Verify then reports.
	copy(e.DataHash[:], dataHash)
	copy(e.PrevHash[:], prevHash)
	copy(e.Hash[:], hash)
	return e, nil
}

// Events implements [store.Reader.Events].
func (r Reader) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	if limit <= 0 {
		limit = defaultPage
	}
	evs, err := list(ctx, r.C, scanEvent, `SELECT `+eventColumns+`
		WHERE e.project = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3`, project, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of %s after %d: %w", project, after, err)
	}
	return evs, nil
}

// headQuery reads the head of a log ($1); no row is the empty log's zero head.
const headQuery = `SELECT seq, hash FROM event_heads WHERE project = $1`

// Head implements [store.Reader.Head].
func (r Reader) Head(ctx context.Context, project string) (store.Head, error) {
	h, err := scanHead(r.C.QueryRow(ctx, headQuery, project))
	if errors.Is(err, store.ErrNotFound) {
		return store.Head{}, nil
	}
	if err != nil {
		return store.Head{}, fmt.Errorf("read head of %s: %w", project, err)
	}
	return h, nil
}

func scanHead(r Row) (store.Head, error) {
	var h store.Head
	var hash []byte
	if err := r.Scan(&h.Seq, &hash); err != nil {
		return store.Head{}, err
	}
	copy(h.Hash[:], hash)
	return h, nil
}

// Blob implements [store.Reader.Blob].
func (r Reader) Blob(ctx context.Context, hash store.Hash) ([]byte, error) {
	var b []byte
	if err := r.C.QueryRow(ctx, `SELECT data FROM blobs WHERE hash = $1`, hash[:]).Scan(&b); err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	return b, nil
}

// InstallationKey implements [store.Reader.InstallationKey].
func (r Reader) InstallationKey(ctx context.Context) ([]byte, error) {
	var k []byte
	if err := r.C.QueryRow(ctx, `SELECT key FROM installation WHERE id = 1`).Scan(&k); err != nil {
		return nil, fmt.Errorf("read installation key: %w", err)
	}
	return k, nil
}

func scanProject(r Row) (store.Project, error) {
	var p store.Project
	var at int64
	err := r.Scan(&p.ID, &p.Name, &at)
	p.CreatedAt = fromNanos(at)
	return p, err
}

// Project implements [store.Reader.Project].
func (r Reader) Project(ctx context.Context, id string) (store.Project, error) {
	p, err := scanProject(r.C.QueryRow(ctx, `SELECT id, name, created_at FROM projects WHERE id = $1`, id))
	if err != nil {
		return store.Project{}, fmt.Errorf("read project %s: %w", id, err)
	}
	return p, nil
}

// Projects implements [store.Reader.Projects].
func (r Reader) Projects(ctx context.Context) ([]store.Project, error) {
	ps, err := list(ctx, r.C, scanProject, `SELECT id, name, created_at FROM projects ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return ps, nil
}

const memberColumns = `SELECT id, name, passphrase_hash, created_at, revoked_at FROM members`

func scanMember(r Row) (store.Member, error) {
	var m store.Member
	var at int64
	var revoked *int64
	err := r.Scan(&m.ID, &m.Name, &m.PassphraseHash, &at, &revoked)
	m.CreatedAt, m.RevokedAt = fromNanos(at), fromNullNanos(revoked)
	return m, err
}

// Member implements [store.Reader.Member].
func (r Reader) Member(ctx context.Context, id string) (store.Member, error) {
	m, err := scanMember(r.C.QueryRow(ctx, memberColumns+` WHERE id = $1`, id))
	if err != nil {
		return store.Member{}, fmt.Errorf("read member %s: %w", id, err)
	}
	return m, nil
}

// MemberByName implements [store.Reader.MemberByName].
func (r Reader) MemberByName(ctx context.Context, name string) (store.Member, error) {
	m, err := scanMember(r.C.QueryRow(ctx, memberColumns+` WHERE name = $1`, name))
	if err != nil {
		return store.Member{}, fmt.Errorf("read member named %q: %w", name, err)
	}
	return m, nil
}

// MemberProjects implements [store.Reader.MemberProjects].
func (r Reader) MemberProjects(ctx context.Context, member string) ([]string, error) {
	ids, err := list(ctx, r.C, func(r Row) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT project FROM memberships WHERE member = $1 ORDER BY project`, member)
	if err != nil {
		return nil, fmt.Errorf("list projects of member %s: %w", member, err)
	}
	return ids, nil
}

// Session implements [store.Reader.Session].
func (r Reader) Session(ctx context.Context, digest []byte, now time.Time) (store.Session, error) {
	var s store.Session
	var created, expires int64
	var revoked, memberRevoked *int64
	err := r.C.QueryRow(ctx, `SELECT s.token_digest, s.member, s.created_at, s.expires_at, s.revoked_at, m.revoked_at
		FROM sessions s JOIN members m ON m.id = s.member WHERE s.token_digest = $1`, digest).
		Scan(&s.TokenDigest, &s.MemberID, &created, &expires, &revoked, &memberRevoked)
	if err != nil {
		return store.Session{}, fmt.Errorf("read session: %w", err)
	}
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = fromNanos(created), fromNanos(expires), fromNullNanos(revoked)
	switch {
	case revoked != nil || memberRevoked != nil:
		return store.Session{}, fmt.Errorf("read session of member %s: %w", s.MemberID, store.ErrRevoked)
	case !now.Before(s.ExpiresAt):
		return store.Session{}, fmt.Errorf("read session of member %s: %w", s.MemberID, store.ErrExpired)
	}
	return s, nil
}

const agentColumns = `SELECT id, project, name, kind, token_digest, created_at, revoked_at FROM agents`

func scanAgent(r Row) (store.Agent, error) {
	var a store.Agent
	var at int64
	var revoked *int64
	err := r.Scan(&a.ID, &a.Project, &a.Name, &a.Kind, &a.TokenDigest, &at, &revoked)
	a.CreatedAt, a.RevokedAt = fromNanos(at), fromNullNanos(revoked)
	return a, err
}

// Agent implements [store.Reader.Agent].
func (r Reader) Agent(ctx context.Context, id string) (store.Agent, error) {
	a, err := scanAgent(r.C.QueryRow(ctx, agentColumns+` WHERE id = $1`, id))
	if err != nil {
		return store.Agent{}, fmt.Errorf("read agent %s: %w", id, err)
	}
	return a, nil
}

// AgentByToken implements [store.Reader.AgentByToken].
func (r Reader) AgentByToken(ctx context.Context, digest []byte) (store.Agent, error) {
	a, err := scanAgent(r.C.QueryRow(ctx, agentColumns+` WHERE token_digest = $1`, digest))
	if err != nil {
		return store.Agent{}, fmt.Errorf("read agent by token: %w", err)
	}
	if a.RevokedAt != nil {
		return store.Agent{}, fmt.Errorf("read agent %s by token: %w", a.ID, store.ErrRevoked)
	}
	return a, nil
}

// Agents implements [store.Reader.Agents].
func (r Reader) Agents(ctx context.Context, project string) ([]store.Agent, error) {
	as, err := list(ctx, r.C, scanAgent, agentColumns+` WHERE project = $1 ORDER BY id`, project)
	if err != nil {
		return nil, fmt.Errorf("list agents of %s: %w", project, err)
	}
	return as, nil
}

const connectionColumns = `SELECT id, project, name, key_ciphertext, created_at, revoked_at FROM connections`

func scanConnection(r Row) (store.Connection, error) {
	var c store.Connection
	var at int64
	var revoked *int64
	err := r.Scan(&c.ID, &c.Project, &c.Name, &c.KeyCiphertext, &at, &revoked)
	c.CreatedAt, c.RevokedAt = fromNanos(at), fromNullNanos(revoked)
	return c, err
}

// Connection implements [store.Reader.Connection].
func (r Reader) Connection(ctx context.Context, id string) (store.Connection, error) {
	c, err := scanConnection(r.C.QueryRow(ctx, connectionColumns+` WHERE id = $1`, id))
	if err != nil {
		return store.Connection{}, fmt.Errorf("read connection %s: %w", id, err)
	}
	return c, nil
}

// Connections implements [store.Reader.Connections].
func (r Reader) Connections(ctx context.Context, project string) ([]store.Connection, error) {
	cs, err := list(ctx, r.C, scanConnection, connectionColumns+` WHERE project = $1 ORDER BY id`, project)
	if err != nil {
		return nil, fmt.Errorf("list connections of %s: %w", project, err)
	}
	return cs, nil
}

// Sources implements [store.Reader.Sources].
func (r Reader) Sources(ctx context.Context, connection string) ([]store.Source, error) {
	ss, err := list(ctx, r.C, func(r Row) (store.Source, error) {
		var s store.Source
		var data []byte
		err := r.Scan(&s.Connection, &s.ID, &s.Digest, &data)
		s.Data = data
		return s, err
	}, `SELECT connection, id, digest, data FROM sources WHERE connection = $1 ORDER BY id`, connection)
	if err != nil {
		return nil, fmt.Errorf("list sources of connection %s: %w", connection, err)
	}
	return ss, nil
}

// ToolLocks implements [store.Reader.ToolLocks].
func (r Reader) ToolLocks(ctx context.Context, connection string) ([]store.ToolLock, error) {
	ls, err := list(ctx, r.C, func(r Row) (store.ToolLock, error) {
		var l store.ToolLock
		var data []byte
		err := r.Scan(&l.Connection, &l.Tool, &l.Digest, &data)
		if len(data) > 0 {
			l.Data = data
		}
		return l, err
	}, `SELECT connection, tool, digest, data FROM tool_locks WHERE connection = $1 ORDER BY tool`, connection)
	if err != nil {
		return nil, fmt.Errorf("list tool locks of connection %s: %w", connection, err)
	}
	return ls, nil
}

// Release implements [store.Reader.Release].
func (r Reader) Release(ctx context.Context, id, version string) (store.Release, error) {
	var rel store.Release
	var contentHash []byte
	var at int64
	err := r.C.QueryRow(ctx, `SELECT r.id, r.version, r.digest, r.content_hash, b.data, r.created_at
		FROM releases r JOIN blobs b ON b.hash = r.content_hash WHERE r.id = $1 AND r.version = $2`, id, version).
		Scan(&rel.ID, &rel.Version, &rel.Digest, &contentHash, &rel.Content, &at)
	if err != nil {
		return store.Release{}, fmt.Errorf("read release %s@%s: %w", id, version, err)
	}
	copy(rel.ContentHash[:], contentHash)
	rel.CreatedAt = fromNanos(at)
	return rel, nil
}

// Installs implements [store.Reader.Installs].
func (r Reader) Installs(ctx context.Context, project string) ([]store.Install, error) {
	ins, err := list(ctx, r.C, func(r Row) (store.Install, error) {
		var in store.Install
		var at int64
		err := r.Scan(&in.Project, &in.ReleaseID, &in.Version, &at)
		in.InstalledAt = fromNanos(at)
		return in, err
	}, `SELECT project, release_id, version, installed_at FROM installs WHERE project = $1 ORDER BY release_id`, project)
	if err != nil {
		return nil, fmt.Errorf("list installs of %s: %w", project, err)
	}
	return ins, nil
}

// Nodes implements [store.Reader.Nodes].
func (r Reader) Nodes(ctx context.Context, project string) ([]store.Node, error) {
	ns, err := list(ctx, r.C, func(r Row) (store.Node, error) {
		var n store.Node
		var data []byte
		err := r.Scan(&n.ID, &n.Kind, &data)
		n.Data = data
		return n, err
	}, `SELECT id, kind, data FROM nodes WHERE project = $1 ORDER BY id`, project)
	if err != nil {
		return nil, fmt.Errorf("list nodes of %s: %w", project, err)
	}
	return ns, nil
}

// NodeCount implements [store.Reader.NodeCount].
func (r Reader) NodeCount(ctx context.Context, project string) (int, error) {
	var n int
	if err := r.C.QueryRow(ctx, `SELECT COUNT(*) FROM nodes WHERE project = $1`, project).Scan(&n); err != nil {
		return 0, fmt.Errorf("count nodes of %s: %w", project, err)
	}
	return n, nil
}

// LiveSessions implements [store.Reader.LiveSessions].
func (r Reader) LiveSessions(ctx context.Context, member string, now time.Time) (int, error) {
	var n int
	if err := r.C.QueryRow(ctx, `SELECT COUNT(*) FROM sessions WHERE member = $1 AND revoked_at IS NULL AND expires_at > $2`,
		member, nanos(now)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sessions of member %s: %w", member, err)
	}
	return n, nil
}

const delegateColumns = `SELECT d.id, d.member, d.project, d.name, d.token_digest, d.created_at, d.expires_at, d.revoked_at FROM delegates d`

func scanDelegate(r Row) (store.Delegate, error) {
	var d store.Delegate
	var created, expires int64
	var revoked *int64
	if err := r.Scan(&d.ID, &d.Member, &d.Project, &d.Name, &d.TokenDigest, &created, &expires, &revoked); err != nil {
		return store.Delegate{}, err
	}
	d.CreatedAt, d.ExpiresAt, d.RevokedAt = fromNanos(created), fromNanos(expires), fromNullNanos(revoked)
	return d, nil
}

// DelegateByToken implements [store.Reader.DelegateByToken].
func (r Reader) DelegateByToken(ctx context.Context, digest []byte, now time.Time) (store.Delegate, error) {
	d, err := scanDelegate(r.C.QueryRow(ctx, delegateColumns+` WHERE d.token_digest = $1`, digest))
	if err != nil {
		return store.Delegate{}, fmt.Errorf("read delegate: %w", err)
	}
	m, err := r.Member(ctx, d.Member)
	if err != nil {
		return store.Delegate{}, fmt.Errorf("read member of delegate %s: %w", d.ID, err)
	}
	switch {
	case d.RevokedAt != nil || m.RevokedAt != nil:
		return store.Delegate{}, fmt.Errorf("read delegate %s: %w", d.ID, store.ErrRevoked)
	case !now.Before(d.ExpiresAt):
		return store.Delegate{}, fmt.Errorf("read delegate %s: %w", d.ID, store.ErrExpired)
	}
	return d, nil
}

// Delegates implements [store.Reader.Delegates].
func (r Reader) Delegates(ctx context.Context, member string) ([]store.Delegate, error) {
	ds, err := list(ctx, r.C, scanDelegate, delegateColumns+` WHERE d.member = $1 ORDER BY d.id`, member)
	if err != nil {
		return nil, fmt.Errorf("list delegates of member %s: %w", member, err)
	}
	return ds, nil
}

const cardColumns = `SELECT id, project, delegate, state, created_at, data FROM cards`

func scanCard(r Row) (store.Card, error) {
	var c store.Card
	var created int64
	if err := r.Scan(&c.ID, &c.Project, &c.Delegate, &c.State, &created, &c.Record); err != nil {
		return store.Card{}, err
	}
	c.CreatedAt = fromNanos(created)
	return c, nil
}

// Card implements [store.Reader.Card].
func (r Reader) Card(ctx context.Context, id string) (store.Card, error) {
	c, err := scanCard(r.C.QueryRow(ctx, cardColumns+` WHERE id = $1`, id))
	if err != nil {
		return store.Card{}, fmt.Errorf("read card %s: %w", id, err)
	}
	return c, nil
}

// Cards implements [store.Reader.Cards].
func (r Reader) Cards(ctx context.Context, f store.CardFilter) ([]store.Card, error) {
	cs, err := list(ctx, r.C, scanCard, cardColumns+` WHERE ($1 = '' OR project = $1) AND ($2 = '' OR delegate = $2) AND ($3 = '' OR state = $3) ORDER BY created_at, id`,
		f.Project, f.Delegate, f.State)
	if err != nil {
		return nil, fmt.Errorf("list cards: %w", err)
	}
	return cs, nil
}
