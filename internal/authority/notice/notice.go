// Package notice tells members where they are that something needs them (docs/notices.md):
// a member's subscriptions to kinds of notices in a project, kept in the store; a sweep
// that reads each project's log past a shared cursor and adds a notice per matching
// subscription to an outbox; and a sender that claims due notices (so two instances
// sharing a store never both send one), posts them to a webhook signed per RFC 9421 with
// the installation's key or mails them over SMTP, retries with bounded exponential
// back-off and records each notice as notice.delivered or notice.failed.
package notice

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// Defaults for [Config].
const (
	DefaultPoll        = 2 * time.Second  // the longest the sweep sleeps between looks
	DefaultBackoff     = 30 * time.Second // the wait after a first failed attempt; it doubles after each
	DefaultMaxBackoff  = time.Hour        // the longest wait between attempts
	DefaultMaxAttempts = 8                // attempts before a notice is given up as failed
	DefaultClaim       = 2 * time.Minute  // how long a claim keeps other senders off a notice
	// MaxSubscriptions is how many subscriptions one member keeps in one project.
	MaxSubscriptions = 20
	// MinDigest and MaxDigest bound a digest's window.
	MinDigest = time.Minute
	MaxDigest = 24 * time.Hour
)

// Signer signs an outbound request with the installation's newest key;
// *signing.Keyring is one.
type Signer interface {
	SignRequest(r *http.Request, label string, p signing.SignatureParams) error
}

// SMTP is where e-mail notices go: the server's host:port, the From address, and an
// optional user and password (PLAIN auth, which net/smtp sends only over TLS or to
// localhost).
type SMTP struct {
	Addr     string
	From     string
	User     string
	Password string
}

// Config configures [New]. Store and Signer are required; PublicURL is the console's base
// URL the links start with.
type Config struct {
	Store       store.Store
	Signer      Signer
	PublicURL   string
	SMTP        SMTP
	HTTP        *http.Client     // default: 10s timeout, no redirects followed
	Now         func() time.Time // default time.Now
	Rand        io.Reader        // default crypto/rand.Reader
	Log         *slog.Logger     // default discards
	Instance    string           // this sender's claim name; default random
	Poll        time.Duration
	Backoff     time.Duration
	MaxBackoff  time.Duration
	MaxAttempts int
	Claim       time.Duration
}

// Keeper keeps members' notice subscriptions and sends their notices. It is safe for
// concurrent use.
type Keeper struct {
	cfg    Config
	log    *slog.Logger
	wake   chan struct{}
	public atomic.Pointer[string] // the console's base URL; see SetPublicURL
}

// New returns the Keeper of cfg.
func New(cfg Config) (*Keeper, error) {
	if cfg.Store == nil || cfg.Signer == nil {
		return nil, errors.New("notice: config needs a store and a signer")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	// A redirect is not followed: the receiver named is the one that gets the notice.
	client := *cfg.HTTP
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.HTTP = &client
	if cfg.Instance == "" {
		id, err := identity.NewID(cfg.Rand, "sender_")
		if err != nil {
			return nil, err
		}
		cfg.Instance = id
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Claim <= 0 {
		cfg.Claim = DefaultClaim
	}
	k := &Keeper{cfg: cfg, log: cfg.Log.With("component", "notice"), wake: make(chan struct{}, 1)}
	k.SetPublicURL(cfg.PublicURL)
	return k, nil
}

// SetPublicURL sets the console's base URL each notice's link starts with: serve sets it
// once it listens, when no --public-url was given.
func (k *Keeper) SetPublicURL(u string) {
	u = strings.TrimRight(u, "/")
	k.public.Store(&u)
}

func (k *Keeper) publicURL() string { return *k.public.Load() }

func (k *Keeper) now() time.Time { return k.cfg.Now().UTC().Round(0) }

func invalid(format string, args ...any) error {
	return &contract.Error{Code: contract.CodeInvalidNotice, Teaching: fmt.Sprintf(format, args...)}
}

// Subscribe records c's subscription to notices of project. Kinds, the webhook URL or
// e-mail address and the digest are checked; what does not hold is refused
// invalid_notice, naming the field.
func (k *Keeper) Subscribe(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.SubscribeNoticesRequest) (contract.NoticeSubscription, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.NoticeSubscription{}, err
	}
	rec := store.NoticeSubscription{Project: string(project), Member: c.ID, CreatedAt: k.now()}
	if len(req.Kinds) == 0 {
		return contract.NoticeSubscription{}, invalid("kinds: name at least one of %s (--kind request,card).", strings.Join(contract.NoticeKinds, ", "))
	}
	for _, kind := range req.Kinds {
		kind = strings.TrimSpace(kind)
		if !slices.Contains(contract.NoticeKinds, kind) {
			return contract.NoticeSubscription{}, invalid("kinds: %q is not a notice kind; give %s.", kind, strings.Join(contract.NoticeKinds, ", "))
		}
		if !slices.Contains(rec.Kinds, kind) {
			rec.Kinds = append(rec.Kinds, kind)
		}
	}
	switch {
	case (req.Webhook == "") == (req.Email == ""):
		return contract.NoticeSubscription{}, invalid("give a webhook URL (--webhook https://…) or an e-mail address (--email ann@example.com), one of them.")
	case req.Webhook != "":
		if err := checkWebhook(req.Webhook); err != nil {
			return contract.NoticeSubscription{}, err
		}
		rec.Channel, rec.Target = "webhook", req.Webhook
	default:
		a, err := mail.ParseAddress(req.Email)
		if err != nil || a.Name != "" || a.Address != req.Email {
			return contract.NoticeSubscription{}, invalid("email: %q is not a plain address; give one like ann@example.com.", req.Email)
		}
		if k.cfg.SMTP.Addr == "" {
			return contract.NoticeSubscription{}, invalid("email: this serve sends no e-mail; its operator starts it with --smtp HOST:PORT and --smtp-from ADDRESS, or subscribe a webhook.")
		}
		rec.Channel, rec.Target = "email", a.Address
	}
	if req.Digest != "" {
		d, err := time.ParseDuration(req.Digest)
		if err != nil || d < MinDigest || d > MaxDigest {
			return contract.NoticeSubscription{}, invalid("digest: %q is not a window from %s to %s; give a Go duration such as 15m, or none to be told of each at once.", req.Digest, MinDigest, MaxDigest)
		}
		rec.Digest = d
	}
	id, err := identity.NewID(k.cfg.Rand, "nsub_")
	if err != nil {
		return contract.NoticeSubscription{}, err
	}
	rec.ID = id
	err = k.cfg.Store.Update(ctx, func(tx store.Tx) error {
		mine, err := tx.NoticeSubscriptions(ctx, rec.Project, rec.Member)
		if err != nil {
			return err
		}
		if len(mine) >= MaxSubscriptions {
			return invalid("you keep %d subscriptions in this project, the most one member may; docket notice unsubscribe one first.", len(mine))
		}
		return tx.CreateNoticeSubscription(ctx, rec)
	})
	if err != nil {
		return contract.NoticeSubscription{}, fmt.Errorf("subscribe to notices: %w", err)
	}
	k.log.InfoContext(ctx, "notice subscription created", "subscription", rec.ID, "channel", rec.Channel, "destination", Destination(rec))
	return wire(rec), nil
}

// checkWebhook refuses a webhook URL that is not an absolute http or https URL. The URL
// itself never appears in the refusal: it may be a credential.
func checkWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalid("webhook: give an absolute http or https URL without user info or fragment (--webhook https://hooks.example.com/…).")
	}
	return nil
}

// Subscriptions returns c's subscriptions in project.
func (k *Keeper) Subscriptions(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.NoticeSubscription, error) {
	if err := c.RequireInPerson(project); err != nil {
		return nil, err
	}
	ss, err := k.cfg.Store.NoticeSubscriptions(ctx, string(project), c.ID)
	if err != nil {
		return nil, err
	}
	out := make([]contract.NoticeSubscription, len(ss))
	for i, s := range ss {
		out[i] = wire(s)
	}
	return out, nil
}

// own returns c's live subscription id of project, or not_found.
func (k *Keeper) own(ctx context.Context, c identity.Caller, project contract.ProjectID, id string) (store.NoticeSubscription, error) {
	if err := c.RequireInPerson(project); err != nil {
		return store.NoticeSubscription{}, err
	}
	s, err := k.cfg.Store.NoticeSubscription(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (s.Project != string(project) || s.Member != c.ID || s.DeletedAt != nil) {
		return store.NoticeSubscription{}, contract.Errorf(contract.CodeNotFound, "you have no notice subscription %s in project %s; docket notice list shows yours.", id, project)
	}
	return s, err
}

// Unsubscribe deletes c's subscription id; its pending notices are not sent.
func (k *Keeper) Unsubscribe(ctx context.Context, c identity.Caller, project contract.ProjectID, id string) (contract.NoticeSubscription, error) {
	s, err := k.own(ctx, c, project, id)
	if err != nil {
		return contract.NoticeSubscription{}, err
	}
	at := k.now()
	if err := k.cfg.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteNoticeSubscription(ctx, id, at) }); err != nil {
		return contract.NoticeSubscription{}, fmt.Errorf("unsubscribe: %w", err)
	}
	s.DeletedAt = &at
	return wire(s), nil
}

// Test queues one test notice on c's subscription id, due now (a digest's too).
func (k *Keeper) Test(ctx context.Context, c identity.Caller, project contract.ProjectID, id string) (contract.NoticeTest, error) {
	s, err := k.own(ctx, c, project, id)
	if err != nil {
		return contract.NoticeTest{}, err
	}
	now := k.now()
	it := item{Kind: "test", Project: s.Project, Subject: s.ID, Link: k.link(s.Project, "test", s.ID),
		Text: fmt.Sprintf("Docket: a test notice of subscription %s in project %s; notices like it will come here.", s.ID, s.Project)}
	n, err := k.notice(s, it, now, now)
	if err != nil {
		return contract.NoticeTest{}, err
	}
	if err := k.cfg.Store.Update(ctx, func(tx store.Tx) error { return tx.AddNotice(ctx, n) }); err != nil {
		return contract.NoticeTest{}, fmt.Errorf("queue a test notice: %w", err)
	}
	k.poke()
	return contract.NoticeTest{Notice: n.ID, Subscription: s.ID}, nil
}

func (k *Keeper) poke() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// wire is a subscription as members see it, its webhook URL cut to scheme://host/….
func wire(s store.NoticeSubscription) contract.NoticeSubscription {
	out := contract.NoticeSubscription{ID: s.ID, Project: contract.ProjectID(s.Project), Member: contract.MemberID(s.Member), Kinds: s.Kinds,
		Channel: s.Channel, Destination: Destination(s), CreatedAt: s.CreatedAt, LastState: s.LastState, LastAt: s.LastAt, LastError: s.LastError}
	if s.Digest > 0 {
		out.Digest = s.Digest.String()
	}
	return out
}

// Destination is where s sends, safe to show and record: a webhook's scheme://host/…
// (never its path, query or user info, which may be a credential) or the e-mail address.
func Destination(s store.NoticeSubscription) string {
	if s.Channel == "email" {
		return s.Target
	}
	return Redact(s.Target)
}

// Redact is raw's scheme://host/…, without its path, query, fragment or user info.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(a webhook URL)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// Run makes and sends notices until ctx ends: it looks again every Poll, and at once when
// a test notice is queued.
func (k *Keeper) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-k.wake:
		}
		if err := k.Step(ctx); err != nil && ctx.Err() == nil {
			k.log.ErrorContext(ctx, "notice sweep", "err", err)
		}
		t.Reset(k.cfg.Poll)
	}
}

// Step makes the notices of every project's new events and sends the due ones, once.
func (k *Keeper) Step(ctx context.Context) error {
	projects, err := k.cfg.Store.Projects(ctx)
	if err != nil {
		return fmt.Errorf("notices: %w", err)
	}
	var errs []error
	for _, p := range projects {
		if err := k.scan(ctx, p.ID); err != nil {
			errs = append(errs, err)
		}
	}
	if err := k.send(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// system is the actor of the sender's events.
const system = contract.Principal("system")
