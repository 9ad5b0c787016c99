package authority

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Defaults for [Config].
const (
	DefaultSessionTTL    = 12 * time.Hour
	DefaultCLISessionTTL = 90 * 24 * time.Hour
)

// Config holds what an [Authority] needs. Store and Key are required.
type Config struct {
	Store  store.Store
	Key    Key
	Logger *slog.Logger     // default: discards
	Now    func() time.Time // default: time.Now
	Rand   io.Reader        // default: crypto/rand.Reader

	// SessionTTL is how long a browser or login session lives; default DefaultSessionTTL.
	SessionTTL time.Duration
}

// Authority is Docket's authority over identities, capabilities and project Boards. It is
// safe for concurrent use.
type Authority struct {
	store      store.Store
	key        Key
	log        *slog.Logger
	now        func() time.Time
	rand       io.Reader
	sessionTTL time.Duration

	boards        *boards
	conversations *conversationIndex
}

// New returns an Authority over cfg.Store. It does not load Boards; [Authority.Restore]
// does.
func New(cfg Config) (*Authority, error) {
	if cfg.Store == nil {
		return nil, errors.New("authority: config needs a store")
	}
	if cfg.Key == (Key{}) {
		return nil, errors.New("authority: config needs the installation key")
	}
	a := &Authority{
		store:      cfg.Store,
		key:        cfg.Key,
		log:        cfg.Logger,
		now:        cfg.Now,
		rand:       cfg.Rand,
		sessionTTL: cfg.SessionTTL,
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = a.log.With(logComponent, "authority")
	if a.now == nil {
		a.now = time.Now
	}
	if a.rand == nil {
		a.rand = rand.Reader
	}
	if a.sessionTTL <= 0 {
		a.sessionTTL = DefaultSessionTTL
	}
	a.boards = newBoards()
	a.conversations = newConversationIndex()
	return a, nil
}

// nowUTC is the authority's clock, in UTC, at the precision the event log keeps.
func (a *Authority) nowUTC() time.Time { return a.now().UTC().Round(0) }

// event is one event to append in a write transaction.
func (a *Authority) appendEvent(ctx context.Context, tx store.Tx, project contract.ProjectID, typ string, actor contract.Principal, at time.Time, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", typ, err)
	}
	_, err = tx.Append(ctx, store.NewEvent{Project: string(project), Type: typ, At: at, Actor: string(actor), Data: b})
	if err != nil {
		return fmt.Errorf("append %s event: %w", typ, err)
	}
	return nil
}

// refuse maps a store sentinel to a coded error for the caller, keeping the cause.
func refuse(err error, what string) error {
	var ce *contract.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, store.ErrNotFound):
		return &contract.Error{Code: contract.CodeNotFound, Teaching: what + " does not exist; list them to see the names in use.", Err: err}
	case errors.Is(err, store.ErrConflict):
		return &contract.Error{Code: contract.CodeAlreadyExists, Teaching: what + " already exists; choose another name.", Err: err}
	case errors.Is(err, store.ErrClosed):
		return &contract.Error{Code: contract.CodeUnavailable, Teaching: "the authority is shutting down; retry against a running docket serve.", Err: err}
	}
	return err
}

// Ping reports whether the store answers.
func (a *Authority) Ping(ctx context.Context) error {
	_, err := a.store.Projects(ctx)
	return err
}
