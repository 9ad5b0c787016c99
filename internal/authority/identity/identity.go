// Package identity provides the authority's principals and the credentials that prove
// them: members with their passphrases and sessions, projects, Agents with their tokens,
// Connections with their keys, sealed under the installation key, and the Sources and
// tool locks set up on a Connection. A [Caller] is what a credential proves; every other
// part of the authority takes one.
package identity

import (
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Defaults for [Config].
const (
	DefaultSessionTTL    = 12 * time.Hour
	DefaultCLISessionTTL = 90 * 24 * time.Hour
)

// Config holds what a [Directory] needs. Store and Key are required.
type Config struct {
	Store  store.Store
	Key    Key
	Logger *slog.Logger     // default: discards
	Now    func() time.Time // default: time.Now
	Rand   io.Reader        // default: crypto/rand.Reader

	// SessionTTL is how long a browser or login session lives; default DefaultSessionTTL.
	SessionTTL time.Duration

	// ProjectLog, when set, is the project log the log of credential events joins
	// ([eventlog.Join]): the authority's, whose lock the operation ledger holds across
	// its claims and admissions. nil: a log of the Directory's own. Its store must be
	// Store.
	ProjectLog *eventlog.Log
}

// Directory keeps the principals of one store and authenticates their credentials. It is
// safe for concurrent use: its state is the store's.
type Directory struct {
	store      store.Store
	key        Key
	log        *slog.Logger
	now        func() time.Time
	rand       io.Reader
	sessionTTL time.Duration
	opened     openedKeys
	holds      *holds                      // the streams and long-polls held under each credential
	creds      proved[agentCred]           // the Agent tokens proved, and at which head (agentcreds.go)
	conns      proved[contract.Connection] // the Connection keys proved (agentcreds.go)
}

// New returns the Directory over cfg.Store.
func New(cfg Config) (*Directory, error) {
	if cfg.Store == nil {
		return nil, errors.New("identity: config needs a store")
	}
	if cfg.Key == (Key{}) {
		return nil, errors.New("identity: config needs the installation key")
	}
	pl := cfg.ProjectLog
	switch {
	case pl == nil:
		pl = eventlog.NewLog(cfg.Store)
	case pl.Store() != cfg.Store:
		return nil, errors.New("identity: the project log is over another store than the Directory's")
	}
	a := &Directory{store: cfg.Store, key: cfg.Key, log: cfg.Logger, now: cfg.Now, rand: cfg.Rand, sessionTTL: cfg.SessionTTL, holds: newHolds(pl),
		creds: proved[agentCred]{max: maxAgentCreds}, conns: proved[contract.Connection]{max: maxConnCreds}}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.rand == nil {
		a.rand = rand.Reader
	}
	if a.sessionTTL <= 0 {
		a.sessionTTL = DefaultSessionTTL
	}
	return a, nil
}

// nowUTC is the directory's clock, in UTC, at the precision the event log keeps.
func (a *Directory) nowUTC() time.Time { return a.now().UTC().Round(0) }
