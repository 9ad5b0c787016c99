package identity

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// CreateConnection creates a Connection in project and returns its key, shown this once.
// The key is kept encrypted under the installation key, because the authority needs it
// again to sign the grants a worker on the Connection presents.
func (a *Directory) CreateConnection(ctx context.Context, c Caller, project contract.ProjectID, req contract.CreateConnectionRequest) (contract.ConnectionKey, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.ConnectionKey{}, err
	}
	name, err := contract.ParseName(req.Name)
	if err != nil {
		return contract.ConnectionKey{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	id, err := NewID(a.rand, "con_")
	if err != nil {
		return contract.ConnectionKey{}, fmt.Errorf("create connection: %w", err)
	}
	secret, err := newSecret(a.rand)
	if err != nil {
		return contract.ConnectionKey{}, fmt.Errorf("create connection: %w", err)
	}
	key := connectionKeyOf(id, secret)
	sealed, err := a.key.seal(a.rand, []byte(key), []byte(id))
	if err != nil {
		return contract.ConnectionKey{}, fmt.Errorf("create connection: seal key: %w", err)
	}
	now := a.nowUTC()
	cn := contract.Connection{ID: contract.ConnectionID(id), Project: project, Name: name, CreatedAt: now}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if _, err := findConnection(ctx, tx, project, name); err == nil {
			return contract.Errorf(contract.CodeAlreadyExists, "project %q already has a connection named %q; choose another name.", project, name)
		}
		if err := tx.CreateConnection(ctx, store.Connection{ID: id, Project: string(project), Name: name, KeyCiphertext: sealed, CreatedAt: now}); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.ConnectionCreatedData{Connection: cn})
	})
	if err != nil {
		return contract.ConnectionKey{}, fmt.Errorf("create connection %s: %w", name, eventlog.Refuse(err, "connection "+name))
	}
	a.log.InfoContext(ctx, "connection created", logProject, project, logActor, c.Principal(), logToken, key)
	return contract.ConnectionKey{Connection: cn, Key: key.String()}, nil
}

// RevokeConnection revokes a Connection; its key stops working at once.
func (a *Directory) RevokeConnection(ctx context.Context, c Caller, project contract.ProjectID, ref string) (contract.Connection, error) {
	cn, err := revoke(ctx, a, c, project, ref, revocable[store.Connection]{
		noun: "connection", event: func(id string) event.Payload { return event.ConnectionRevokedData{ID: id} }, find: findConnection,
		id: func(cn store.Connection) string { return cn.ID },
		revoke: func(ctx context.Context, tx store.Tx, id string, at time.Time) error {
			return tx.RevokeConnection(ctx, id, at)
		},
		get: func(ctx context.Context, r store.Reader, id string) (store.Connection, error) {
			return r.Connection(ctx, id)
		},
	})
	if err != nil {
		return contract.Connection{}, err
	}
	return connectionWire(cn), nil
}

// Connections lists project's Connections, revoked ones included.
func (a *Directory) Connections(ctx context.Context, c Caller, project contract.ProjectID) ([]contract.Connection, error) {
	return listed(ctx, c, project, "connections", a.store.Connections, connectionWire)
}

// ConnectionKey returns a Connection's key in clear, for signing and verifying its
// grants. Callers must not log or send it. It is the key opened from the sealed bytes
// this Directory last read from the Connection's row — on a hop call, by the
// authentication of that same call ([Directory.AuthenticateConnection]) — and the row is
// read only when none is kept. A Connection's sealed key is written once, when it is
// created, so the key kept is the row's. It says nothing of revocation: the hop reads
// that from the project's log (docs/architecture.md, "The authority").
func (a *Directory) ConnectionKey(ctx context.Context, id contract.ConnectionID) (Token, error) {
	if key, ok := a.opened.last(string(id)); ok {
		return key, nil
	}
	_, key, err := a.connectionKey(ctx, id)
	return key, err
}

// connectionKey reads Connection id and its key in clear. The row is read every time
// (it says whether the Connection was revoked, on this instance or another); the key is
// opened once per sealed key ([openedKeys]).
func (a *Directory) connectionKey(ctx context.Context, id contract.ConnectionID) (store.Connection, Token, error) {
	cn, err := a.store.Connection(ctx, string(id))
	if err != nil {
		return store.Connection{}, "", fmt.Errorf("load connection %s: %w", id, err)
	}
	if plain, ok := a.opened.get(cn.ID, cn.KeyCiphertext); ok {
		return cn, plain, nil
	}
	plain, err := a.key.open(cn.KeyCiphertext, []byte(cn.ID))
	if err != nil {
		return store.Connection{}, "", fmt.Errorf("open key of connection %s: %w", id, err)
	}
	a.opened.put(cn.ID, cn.KeyCiphertext, Token(plain))
	return cn, Token(plain), nil
}

// maxOpenedKeys bounds the Connection keys a Directory keeps opened.
const maxOpenedKeys = 1024

// openedKeys keeps Connection keys opened from their sealed form, so that a hop call
// (each authenticates its Connection, and a Poll or a claim then signs or verifies a
// grant with its key) does not run AES-GCM again on every call. An authentication finds
// an entry only by the Connection's id together with the exact sealed bytes read from
// its row, so a key sealed anew (a new key, or the same under another installation key)
// is opened anew and never served from memory; revocation is not its business, as the
// row it is looked up with is read each time. The hop then takes the key opened from the
// sealed bytes read last ([openedKeys.last]), which its call's authentication just read.
// At most maxOpenedKeys are kept: past that all are dropped and opened again as they
// are used. Keys in it are never logged.
type openedKeys struct {
	mu   sync.Mutex
	keys map[string]openedKey // Connection id → its key; guarded by mu
}

type openedKey struct {
	sealed []byte
	plain  Token
}

func (o *openedKeys) get(id string, sealed []byte) (Token, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k, ok := o.keys[id]
	if !ok || !bytes.Equal(k.sealed, sealed) {
		return "", false
	}
	return k.plain, true
}

// last returns the key opened from the sealed bytes last read from Connection id's row,
// whatever they were.
func (o *openedKeys) last(id string) (Token, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k, ok := o.keys[id]
	return k.plain, ok
}

func (o *openedKeys) put(id string, sealed []byte, plain Token) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys == nil || len(o.keys) >= maxOpenedKeys {
		o.keys = map[string]openedKey{}
	}
	o.keys[id] = openedKey{sealed: bytes.Clone(sealed), plain: plain}
}

// findConnection finds a Connection of project by id or by name.
func findConnection(ctx context.Context, r store.Reader, project contract.ProjectID, ref string) (store.Connection, error) {
	return findByRef(ctx, project, ref, "connection", r.Connections, func(cn store.Connection) (string, string) { return cn.ID, cn.Name })
}

func connectionWire(cn store.Connection) contract.Connection {
	return contract.Connection{ID: contract.ConnectionID(cn.ID), Project: contract.ProjectID(cn.Project), Name: cn.Name,
		CreatedAt: cn.CreatedAt, RevokedAt: cn.RevokedAt}
}
