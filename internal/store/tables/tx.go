package tables

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// Tx implements [store.Tx] over a [Conn] that is a transaction. The first Append to a
// project locks that project's head row (an upsert, which PostgreSQL serializes) unless
// the transaction is exclusive; then it reads the row, or takes the head from a
// [HeadCache]. Later Appends in the same Tx advance a cached head, and the [Batch] the Tx
// runs in writes it back once, before its commit. So sequence numbers come from a counter
// row, never from MAX(seq)+1, and a batch of events costs one INSERT each. A Tx is not
// safe for concurrent use.
//
// A Tx run as one call of a [Batch] starts each log from the head that the calls before it
// in the same database transaction left (which event_heads does not show until the batch
// writes the heads, just before its commit).
type Tx struct {
	Reader
	heads map[string]store.Head // heads of the logs appended to; written by the Batch
	// exclusive: the transaction already excludes every other writer of the database
	// (SQLite's BEGIN IMMEDIATE), so a plain read of a head is as good as locking it.
	exclusive bool
	cache     *HeadCache // heads committed by earlier transactions of this writer; may be nil
	// before holds the heads the earlier calls of a Batch appended in this database
	// transaction: exact (and, on PostgreSQL, already locked by it). Nil outside a Batch.
	before map[string]store.Head
}

var _ store.Tx = (*Tx)(nil)

// NewTx returns a Tx over c, which must be a transaction. exclusive says that the
// transaction already excludes every other writer of the database (SQLite's BEGIN
// IMMEDIATE); then heads are read without taking a row lock.
func NewTx(c Conn, exclusive bool) *Tx { return &Tx{Reader: Reader{C: c}, exclusive: exclusive} }

// NewCachedTx returns a Tx over c, a transaction that excludes every other writer of the
// database (SQLite's BEGIN IMMEDIATE), that starts each log from its head in cache when
// it has one (see [HeadCache] for why that is safe). Record the heads in cache with
// [HeadCache.CommitBatch] once the Batch committed.
func NewCachedTx(c Conn, cache *HeadCache) *Tx {
	return &Tx{Reader: Reader{C: c}, exclusive: true, cache: cache}
}

// Statement is one SQL statement and its arguments.
type Statement struct {
	SQL  string
	Args []any
}

// headUpsert writes the head of a log ($1) as seq $2 and hash $3.
const headUpsert = `INSERT INTO event_heads (project, seq, hash) VALUES ($1, $2, $3)
	ON CONFLICT (project) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`

// headStatements returns the statements that write heads to event_heads, in project order.
func headStatements(heads map[string]store.Head) []Statement {
	stmts := make([]Statement, 0, len(heads))
	for _, p := range slices.Sorted(maps.Keys(heads)) {
		h := heads[p]
		stmts = append(stmts, Statement{SQL: headUpsert, Args: []any{p, h.Seq, h.Hash[:]}})
	}
	return stmts
}

// Head implements [store.Reader.Head], including the Tx's own appends.
func (t *Tx) Head(ctx context.Context, project string) (store.Head, error) {
	if h, ok := t.heads[project]; ok {
		return h, nil
	}
	if h, ok := t.before[project]; ok {
		return h, nil
	}
	return t.Reader.Head(ctx, project)
}

// LockHead implements [store.Tx.LockHead]. It never takes the head from the HeadCache,
// which may be behind the database.
func (t *Tx) LockHead(ctx context.Context, project string) (store.Head, error) {
	if h, ok := t.heads[project]; ok {
		return h, nil // the first Append already locked it
	}
	if h, ok := t.before[project]; ok {
		return h, nil // an earlier call of the batch locked it, in this transaction
	}
	return t.lockHead(ctx, project)
}

// Append implements [store.Tx.Append].
func (t *Tx) Append(ctx context.Context, ne store.NewEvent) (store.Event, error) {
	es, err := t.AppendAll(ctx, []store.NewEvent{ne})
	if err != nil {
		return store.Event{}, err
	}
	return es[0], nil
}

// AppendAll implements [store.Tx.AppendAll]: the events are linked in Go from the log's
// head, as Append links one, and written by one multi-row INSERT (one per
// [appendChunk] events), which writes all its rows or none.
func (t *Tx) AppendAll(ctx context.Context, nes []store.NewEvent) ([]store.Event, error) {
	if len(nes) == 0 {
		return nil, nil
	}
	project := nes[0].Project
	var mint []bool // the events whose ids are minted, at each link from their seq
	for i := range nes {
		if nes[i].Project != project {
			return nil, fmt.Errorf("append events: event %d is of project %q, the first of %q: %w",
				i, nes[i].Project, project, store.ErrInvalid)
		}
		if nes[i].ID == "" {
			if mint == nil {
				mint = make([]bool, len(nes))
			}
			mint[i] = true
		}
	}
	head, ok := t.heads[project]
	if !ok {
		head, ok = t.before[project]
	}
	cached := false
	if !ok && project != "" {
		if head, cached = t.cache.get(project); !cached {
			var err error
			if head, err = t.lockHead(ctx, project); err != nil {
				return nil, err
			}
		}
	}
	es, err := linkAll(nes, mint, head)
	if err != nil {
		return nil, err
	}
	inline := make([][]byte, len(es))
	for i, e := range es {
		inline[i] = e.Data
		if len(e.Data) > store.BlobThreshold {
			if _, err := t.PutBlob(ctx, e.Data); err != nil {
				return nil, fmt.Errorf("append event %s: %w", e.ID, err)
			}
			inline[i] = nil
		}
	}
	err = t.insertAll(ctx, es, inline)
	if cached && errors.Is(err, store.ErrConflict) {
		// Either an id is taken, or another process appended since this writer cached
		// the head and holds its seq+1 (see HeadCache). The failed INSERT left the
		// transaction open (SQLite aborts only the statement, with all its rows); the
		// stored head tells which case this is.
		fresh, herr := t.lockHead(ctx, project)
		if herr != nil {
			return nil, herr
		}
		if fresh != head {
			if es, err = linkAll(nes, mint, fresh); err != nil {
				return nil, err
			}
			err = t.insertAll(ctx, es, inline)
		}
	}
	if err != nil {
		return nil, err
	}
	if t.heads == nil {
		t.heads = make(map[string]store.Head)
	}
	last := es[len(es)-1]
	t.heads[project] = store.Head{Seq: last.Seq, Hash: last.Hash}
	return es, nil
}

// linkAll links nes one after the other from head ([store.Link]), minting the id of
// each event mint marks (mint may be nil) from the seq it links at ([mintID]).
func linkAll(nes []store.NewEvent, mint []bool, head store.Head) ([]store.Event, error) {
	es := make([]store.Event, len(nes))
	for i, ne := range nes {
		if mint != nil && mint[i] {
			ne.ID = mintID(head.Seq + 1)
		}
		e, err := store.Link(ne, head)
		if err != nil {
			return nil, fmt.Errorf("append event: %w", err)
		}
		es[i] = e
		head = store.Head{Seq: e.Seq, Hash: e.Hash}
	}
	return es, nil
}

// idAlphabet is the 32 characters of [rand.Text]'s ids in ASCII order, so that a minted
// id's characters compare as the bits they encode.
const idAlphabet = "234567ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// mintID mints the id of the event at seq: seq in 13 characters of [idAlphabet], then 13
// of 64 random bits, 26 characters as [rand.Text]'s. The ids minted in one log sort as
// its events do, so an event's entry in the (project, id) index lands beside the one
// before it: the events a commit appends change one page of that index, where random ids
// changed one page each, every page one more frame in SQLite's WAL (benchmarks/README.md,
// "The governed action at the fourteenth session's end"). The random half keeps ids
// unique between two instances that link at the same seq, of which only one commits.
func mintID(seq int64) string {
	var b [26]byte
	put := func(at int, v uint64) {
		for i := 12; i >= 0; i-- {
			b[at+i] = idAlphabet[v&31]
			v >>= 5
		}
	}
	put(0, uint64(seq))
	var r [8]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (it crashes the program instead)
	put(13, binary.BigEndian.Uint64(r[:]))
	return string(b[:])
}

// appendChunk is the most events one INSERT writes: 10 parameters each stay far below
// SQLite's and PostgreSQL's limits on a statement's parameters, and the statements a
// writer prepares (one per row count) stay few.
const appendChunk = 64

// insertAll writes es, with inline[i] as the data column of es[i] (nil when the data is a
// blob), appendChunk rows per INSERT. A failed INSERT writes none of its rows.
func (t *Tx) insertAll(ctx context.Context, es []store.Event, inline [][]byte) error {
	for len(es) > 0 {
		n := min(len(es), appendChunk)
		args := make([]any, 0, 10*n)
		for i, e := range es[:n] {
			args = append(args, e.Project, e.Seq, e.ID, e.Type, nanos(e.At), e.Actor, inline[i], e.DataHash[:], e.PrevHash[:], e.Hash[:])
		}
		if _, err := t.C.Exec(ctx, insertEvents()[n], args...); err != nil {
			if n == 1 {
				return fmt.Errorf("append event %s to %s: %w", es[0].ID, es[0].Project, err)
			}
			return fmt.Errorf("append events %s to %s of %s: %w", es[0].ID, es[n-1].ID, es[0].Project, err)
		}
		es, inline = es[n:], inline[n:]
	}
	return nil
}

// insertEvents returns the INSERTs of 1 to appendChunk events' rows ([n] for n rows), their
// placeholders numbered in order; built once, as the statement text is also the key its
// prepared statement is kept by, and at the first append, not when a process starts: every
// docket process links this package, the coding-agent hook's included, and most never
// append (docs/coding-agents.md, "Speed").
var insertEvents = sync.OnceValue(func() *[appendChunk + 1]string {
	var q [appendChunk + 1]string
	for n := 1; n <= appendChunk; n++ {
		var b strings.Builder
		b.WriteString(`INSERT INTO events (project, seq, id, type, at, actor, data, data_hash, prev_hash, hash)
		VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j := range 10 {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(10*i + j + 1))
			}
			b.WriteByte(')')
		}
		q[n] = b.String()
	}
	return &q
})

// lockHead reads the head of project's log so that no other transaction can move it
// before this one ends.
func (t *Tx) lockHead(ctx context.Context, project string) (store.Head, error) {
	if t.exclusive {
		return t.Reader.Head(ctx, project)
	}
	// A no-op update of an existing row still takes its row lock, so concurrent writers
	// of one log queue here until this transaction ends.
	var head store.Head
	var hash []byte
	var zero store.Hash
	err := t.C.QueryRow(ctx, `INSERT INTO event_heads (project, seq, hash) VALUES ($1, 0, $2)
		ON CONFLICT (project) DO UPDATE SET seq = event_heads.seq RETURNING seq, hash`, project, zero[:]).
		Scan(&head.Seq, &hash)
	if err != nil {
		return store.Head{}, fmt.Errorf("lock head of %s: %w", project, err)
	}
	copy(head.Hash[:], hash)
	return head, nil
}

// PutBlob implements [store.Tx.PutBlob].
func (t *Tx) PutBlob(ctx context.Context, b []byte) (store.Hash, error) {
	h := store.DataHash(b)
	if b == nil {
		b = []byte{} // the column is NOT NULL; the empty blob is a blob too
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO blobs (hash, data) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`, h[:], b); err != nil {
		return store.Hash{}, fmt.Errorf("put blob %s: %w", h, err)
	}
	return h, nil
}

// required returns ErrInvalid naming the first empty field; pairs are name, value.
func required(what string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return fmt.Errorf("%s needs %s: %w", what, pairs[i], store.ErrInvalid)
		}
	}
	return nil
}

// SetInstallationKey implements [store.Tx.SetInstallationKey].
func (t *Tx) SetInstallationKey(ctx context.Context, key []byte) error {
	if len(key) == 0 {
		return fmt.Errorf("set installation key: empty key: %w", store.ErrInvalid)
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO installation (id, key) VALUES (1, $1)`, key); err != nil {
		return fmt.Errorf("set installation key: %w", err)
	}
	return nil
}

// CreateProject implements [store.Tx.CreateProject].
func (t *Tx) CreateProject(ctx context.Context, p store.Project) error {
	if err := required("project", "an id", p.ID, "a name", p.Name); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO projects (id, name, created_at) VALUES ($1, $2, $3)`,
		p.ID, p.Name, nanos(p.CreatedAt)); err != nil {
		return fmt.Errorf("create project %s: %w", p.ID, err)
	}
	return nil
}

// CreateMember implements [store.Tx.CreateMember].
func (t *Tx) CreateMember(ctx context.Context, m store.Member) error {
	if err := required("member", "an id", m.ID, "a name", m.Name, "a passphrase hash", string(m.PassphraseHash)); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO members (id, name, passphrase_hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5)`,
		m.ID, m.Name, m.PassphraseHash, nanos(m.CreatedAt), nullNanos(m.RevokedAt)); err != nil {
		return fmt.Errorf("create member %s: %w", m.ID, err)
	}
	return nil
}

// AddMembership implements [store.Tx.AddMembership].
func (t *Tx) AddMembership(ctx context.Context, project, member string) error {
	if _, err := t.C.Exec(ctx, `INSERT INTO memberships (project, member) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		project, member); err != nil {
		return fmt.Errorf("add member %s to %s: %w", member, project, err)
	}
	return nil
}

// revoke sets revoked_at on the row of table whose key column equals key, once.
func (t *Tx) revoke(ctx context.Context, table, column string, key any, at time.Time) error {
	n, err := t.C.Exec(ctx, `UPDATE `+table+` SET revoked_at = COALESCE(revoked_at, $2) WHERE `+column+` = $1`, key, nanos(at))
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// RevokeMember implements [store.Tx.RevokeMember].
func (t *Tx) RevokeMember(ctx context.Context, id string, at time.Time) error {
	if err := t.revoke(ctx, "members", "id", id, at); err != nil {
		return fmt.Errorf("revoke member %s: %w", id, err)
	}
	if _, err := t.C.Exec(ctx, `UPDATE sessions SET revoked_at = $2 WHERE member = $1 AND revoked_at IS NULL`, id, nanos(at)); err != nil {
		return fmt.Errorf("revoke sessions of member %s: %w", id, err)
	}
	return nil
}

// CreateSession implements [store.Tx.CreateSession].
func (t *Tx) CreateSession(ctx context.Context, s store.Session) error {
	if err := required("session", "a token digest", string(s.TokenDigest), "a member", s.MemberID); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO sessions (token_digest, member, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5)`,
		s.TokenDigest, s.MemberID, nanos(s.CreatedAt), nanos(s.ExpiresAt), nullNanos(s.RevokedAt)); err != nil {
		return fmt.Errorf("create session of member %s: %w", s.MemberID, err)
	}
	return nil
}

// RevokeSession implements [store.Tx.RevokeSession].
func (t *Tx) RevokeSession(ctx context.Context, digest []byte, at time.Time) error {
	if err := t.revoke(ctx, "sessions", "token_digest", digest, at); err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	return nil
}

// CreateAgent implements [store.Tx.CreateAgent].
func (t *Tx) CreateAgent(ctx context.Context, a store.Agent) error {
	if err := required("agent", "an id", a.ID, "a project", a.Project, "a name", a.Name, "a token digest", string(a.TokenDigest)); err != nil {
		return err
	}
	if a.Kind != store.AgentKindAgent && a.Kind != store.AgentKindOrchestrator {
		return fmt.Errorf("create agent %s: kind %q is neither %q nor %q: %w",
			a.ID, a.Kind, store.AgentKindAgent, store.AgentKindOrchestrator, store.ErrInvalid)
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO agents (id, project, name, kind, token_digest, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.ID, a.Project, a.Name, a.Kind, a.TokenDigest, nanos(a.CreatedAt), nullNanos(a.RevokedAt)); err != nil {
		return fmt.Errorf("create agent %s: %w", a.ID, err)
	}
	return nil
}

// SetAgentToken implements [store.Tx.SetAgentToken].
func (t *Tx) SetAgentToken(ctx context.Context, id string, digest []byte) error {
	if len(digest) == 0 {
		return fmt.Errorf("set token of agent %s: empty digest: %w", id, store.ErrInvalid)
	}
	n, err := t.C.Exec(ctx, `UPDATE agents SET token_digest = $2 WHERE id = $1`, id, digest)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("set token of agent %s: %w", id, err)
	}
	return nil
}

// RevokeAgent implements [store.Tx.RevokeAgent].
func (t *Tx) RevokeAgent(ctx context.Context, id string, at time.Time) error {
	if err := t.revoke(ctx, "agents", "id", id, at); err != nil {
		return fmt.Errorf("revoke agent %s: %w", id, err)
	}
	return nil
}

// CreateConnection implements [store.Tx.CreateConnection].
func (t *Tx) CreateConnection(ctx context.Context, c store.Connection) error {
	if err := required("connection", "an id", c.ID, "a project", c.Project, "a name", c.Name, "a key ciphertext", string(c.KeyCiphertext)); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO connections (id, project, name, key_ciphertext, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, c.Project, c.Name, c.KeyCiphertext, nanos(c.CreatedAt), nullNanos(c.RevokedAt)); err != nil {
		return fmt.Errorf("create connection %s: %w", c.ID, err)
	}
	return nil
}

// RevokeConnection implements [store.Tx.RevokeConnection].
func (t *Tx) RevokeConnection(ctx context.Context, id string, at time.Time) error {
	if err := t.revoke(ctx, "connections", "id", id, at); err != nil {
		return fmt.Errorf("revoke connection %s: %w", id, err)
	}
	return nil
}

// jsonOrNull returns data, or null when it is empty, and ErrInvalid when it is not JSON.
func jsonOrNull(what string, data json.RawMessage) ([]byte, error) {
	if len(data) == 0 {
		return []byte("null"), nil
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s: data is not JSON: %w", what, store.ErrInvalid)
	}
	return data, nil
}

// PutSource implements [store.Tx.PutSource].
func (t *Tx) PutSource(ctx context.Context, s store.Source) error {
	if err := required("source", "a connection", s.Connection, "an id", s.ID, "a digest", string(s.Digest)); err != nil {
		return err
	}
	data, err := jsonOrNull("source "+s.ID, s.Data)
	if err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO sources (connection, id, digest, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (connection, id) DO UPDATE SET digest = excluded.digest, data = excluded.data`,
		s.Connection, s.ID, s.Digest, data); err != nil {
		return fmt.Errorf("put source %s on connection %s: %w", s.ID, s.Connection, err)
	}
	return nil
}

// deleted maps "no row deleted" to ErrNotFound.
func deleted(n int64, err error) error {
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return err
}

// DeleteSource implements [store.Tx.DeleteSource].
func (t *Tx) DeleteSource(ctx context.Context, connection, id string) error {
	if err := deleted(t.C.Exec(ctx, `DELETE FROM sources WHERE connection = $1 AND id = $2`, connection, id)); err != nil {
		return fmt.Errorf("delete source %s of connection %s: %w", id, connection, err)
	}
	return nil
}

// LockTool implements [store.Tx.LockTool].
func (t *Tx) LockTool(ctx context.Context, l store.ToolLock) error {
	if err := required("tool lock", "a connection", l.Connection, "a tool", l.Tool, "a digest", string(l.Digest)); err != nil {
		return err
	}
	var data []byte
	if len(l.Data) > 0 {
		data = l.Data
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO tool_locks (connection, tool, digest, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (connection, tool) DO UPDATE SET digest = excluded.digest, data = excluded.data`, l.Connection, l.Tool, l.Digest, data); err != nil {
		return fmt.Errorf("lock tool %s on connection %s: %w", l.Tool, l.Connection, err)
	}
	return nil
}

// UnlockTool implements [store.Tx.UnlockTool].
func (t *Tx) UnlockTool(ctx context.Context, connection, tool string) error {
	if err := deleted(t.C.Exec(ctx, `DELETE FROM tool_locks WHERE connection = $1 AND tool = $2`, connection, tool)); err != nil {
		return fmt.Errorf("unlock tool %s on connection %s: %w", tool, connection, err)
	}
	return nil
}

// PutRelease implements [store.Tx.PutRelease].
func (t *Tx) PutRelease(ctx context.Context, r store.Release) (bool, error) {
	if err := required("release", "an id", r.ID, "a version", r.Version, "a digest", string(r.Digest)); err != nil {
		return false, err
	}
	name := r.ID + "@" + r.Version
	old, err := t.Release(ctx, r.ID, r.Version)
	switch {
	case err == nil:
		// Releases are immutable: the same content again is the same
		// release; anything else under this id and version is refused.
		if !bytes.Equal(old.Digest, r.Digest) || old.ContentHash != store.DataHash(r.Content) {
			return false, fmt.Errorf("put release %s: digest %x is already installed under this version with digest %x: %w",
				name, r.Digest, old.Digest, store.ErrConflict)
		}
		return false, nil
	case !errors.Is(err, store.ErrNotFound):
		return false, fmt.Errorf("put release %s: %w", name, err)
	}
	h, err := t.PutBlob(ctx, r.Content)
	if err != nil {
		return false, fmt.Errorf("put release %s: %w", name, err)
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO releases (id, version, digest, content_hash, created_at) VALUES ($1, $2, $3, $4, $5)`,
		r.ID, r.Version, r.Digest, h[:], nanos(r.CreatedAt)); err != nil {
		return false, fmt.Errorf("put release %s: %w", name, err)
	}
	return true, nil
}

// Install implements [store.Tx.Install].
func (t *Tx) Install(ctx context.Context, in store.Install) error {
	if _, err := t.C.Exec(ctx, `INSERT INTO installs (project, release_id, version, installed_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project, release_id) DO UPDATE SET version = excluded.version, installed_at = excluded.installed_at`,
		in.Project, in.ReleaseID, in.Version, nanos(in.InstalledAt)); err != nil {
		return fmt.Errorf("install %s@%s into %s: %w", in.ReleaseID, in.Version, in.Project, err)
	}
	return nil
}

// PutNode implements [store.Tx.PutNode].
func (t *Tx) PutNode(ctx context.Context, project string, n store.Node) error {
	if err := required("node", "a project", project, "an id", n.ID, "a kind", n.Kind); err != nil {
		return err
	}
	data, err := jsonOrNull("node "+n.ID, n.Data)
	if err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO nodes (project, id, kind, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project, id) DO UPDATE SET kind = excluded.kind, data = excluded.data`,
		project, n.ID, n.Kind, data); err != nil {
		return fmt.Errorf("put node %s of %s: %w", n.ID, project, err)
	}
	return nil
}

// PutNodes implements [store.Tx.PutNodes]: every node is checked first, then, over a
// connection where each statement is a round trip (PostgreSQL's, a [Pipeliner]),
// written by one multi-row upsert per [nodeChunk] nodes, as [Tx.AppendAll] writes events.
// Only the last node of each id is written: one upsert may not change a row twice
// (PostgreSQL refuses it), and the last is the row that many PutNodes leave.
//
// In process (SQLite) each node is its own upsert, the one statement prepared once: a
// statement that changes several rows keeps a journal of every page it changes, to undo
// its own rows alone should one fail, and a batch's nodes, their ids minted from
// digests, each land on a page of the id index of their own. The one statement cost more
// than ten (BenchmarkPutNodes: 102–111% of a PutNode each, on SQLite).
func (t *Tx) PutNodes(ctx context.Context, project string, ns []store.Node) error {
	if len(ns) == 0 {
		return nil
	}
	if err := required("nodes", "a project", project); err != nil {
		return err
	}
	last := make(map[string]int, len(ns)) // the index of each id's last node
	for i, n := range ns {
		if err := required("node", "an id", n.ID, "a kind", n.Kind); err != nil {
			return err
		}
		last[n.ID] = i
	}
	args := make([]any, 0, 4*len(last))
	for i, n := range ns {
		if last[n.ID] != i {
			continue
		}
		data, err := jsonOrNull("node "+n.ID, n.Data)
		if err != nil {
			return err
		}
		args = append(args, project, n.ID, n.Kind, data)
	}
	per := 1
	if _, roundTrips := t.C.(Pipeliner); roundTrips {
		per = nodeChunk
	}
	for len(args) > 0 {
		n := min(len(args)/4, per)
		if err := t.upsertNodes(ctx, project, n, args[:4*n]); err != nil {
			return err
		}
		args = args[4*n:]
	}
	return nil
}

// upsertNodes writes n node rows, args holding four values each; a failed upsert writes
// none of them.
func (t *Tx) upsertNodes(ctx context.Context, project string, n int, args []any) error {
	if _, err := t.C.Exec(ctx, upsertNodesSQL()[n], args...); err != nil {
		if n == 1 {
			return fmt.Errorf("put node %s of %s: %w", args[1], project, err)
		}
		return fmt.Errorf("put nodes %s to %s of %s: %w", args[1], args[len(args)-3], project, err)
	}
	return nil
}

// nodeChunk is the most nodes one upsert writes: 4 parameters each stay far below
// SQLite's and PostgreSQL's limits on a statement's parameters, and the statements a
// writer prepares (one per row count) stay few.
const nodeChunk = 64

// upsertNodesSQL returns the upserts of 1 to nodeChunk nodes' rows ([n] for n rows), built
// once at the first use, as insertEvents is.
var upsertNodesSQL = sync.OnceValue(func() *[nodeChunk + 1]string {
	var q [nodeChunk + 1]string
	for n := 1; n <= nodeChunk; n++ {
		var b strings.Builder
		b.WriteString(`INSERT INTO nodes (project, id, kind, data) VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($%d, $%d, $%d, $%d)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
		}
		b.WriteString(`
		ON CONFLICT (project, id) DO UPDATE SET kind = excluded.kind, data = excluded.data`)
		q[n] = b.String()
	}
	return &q
})

// DeleteNode implements [store.Tx.DeleteNode].
func (t *Tx) DeleteNode(ctx context.Context, project, id string) error {
	if err := deleted(t.C.Exec(ctx, `DELETE FROM nodes WHERE project = $1 AND id = $2`, project, id)); err != nil {
		return fmt.Errorf("delete node %s of %s: %w", id, project, err)
	}
	return nil
}

// CreateDelegate implements [store.Tx.CreateDelegate].
func (t *Tx) CreateDelegate(ctx context.Context, d store.Delegate) error {
	if err := required("delegate", "an id", d.ID, "a member", d.Member, "a project", d.Project, "a name", d.Name, "a token digest", string(d.TokenDigest)); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO delegates (id, member, project, name, token_digest, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		d.ID, d.Member, d.Project, d.Name, d.TokenDigest, nanos(d.CreatedAt), nanos(d.ExpiresAt), nullNanos(d.RevokedAt)); err != nil {
		return fmt.Errorf("create delegate %s of member %s: %w", d.ID, d.Member, err)
	}
	return nil
}

// RevokeDelegate implements [store.Tx.RevokeDelegate].
func (t *Tx) RevokeDelegate(ctx context.Context, member, id string, at time.Time) error {
	n, err := t.C.Exec(ctx, `UPDATE delegates SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND member = $2`, id, member, nanos(at))
	if err != nil {
		return fmt.Errorf("revoke delegate %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("revoke delegate %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// RevokeDelegates implements [store.Tx.RevokeDelegates].
func (t *Tx) RevokeDelegates(ctx context.Context, member string, at time.Time) error {
	if _, err := t.C.Exec(ctx, `UPDATE delegates SET revoked_at = $2 WHERE member = $1 AND revoked_at IS NULL`, member, nanos(at)); err != nil {
		return fmt.Errorf("revoke delegates of member %s: %w", member, err)
	}
	return nil
}

// CreateCard implements [store.Tx.CreateCard].
func (t *Tx) CreateCard(ctx context.Context, c store.Card) error {
	if err := required("card", "an id", c.ID, "a project", c.Project, "a delegate", c.Delegate, "a record", string(c.Record)); err != nil {
		return err
	}
	if c.State != "open" {
		return fmt.Errorf("card %s is recorded open, not %q: %w", c.ID, c.State, store.ErrInvalid)
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO cards (id, project, delegate, state, created_at, data) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, c.Project, c.Delegate, c.State, nanos(c.CreatedAt), c.Record); err != nil {
		return fmt.Errorf("create card %s: %w", c.ID, err)
	}
	return nil
}

// UpdateCard implements [store.Tx.UpdateCard].
func (t *Tx) UpdateCard(ctx context.Context, c store.Card, from string) error {
	if c.State == "" || c.State == "open" || len(c.Record) == 0 {
		return fmt.Errorf("update card %s: a closed state and its record are needed: %w", c.ID, store.ErrInvalid)
	}
	n, err := t.C.Exec(ctx, `UPDATE cards SET state = $2, data = $3 WHERE id = $1 AND state = $4`, c.ID, c.State, c.Record, from)
	if err != nil {
		return fmt.Errorf("update card %s: %w", c.ID, err)
	}
	if n == 0 {
		if _, err := t.Card(ctx, c.ID); err != nil {
			return fmt.Errorf("update card: %w", err)
		}
		return fmt.Errorf("update card %s: it is no longer %s: %w", c.ID, from, store.ErrConflict)
	}
	return nil
}
