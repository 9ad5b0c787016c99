package notice_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/notice"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// Secrets a notice must never carry: a call's argument, a webhook URL's path and query,
// a token.
const (
	argSecret   = "hunter2-argument-secret"
	pathSecret  = "T0B0s3cr3tpath"
	querySecret = "qtok-secret"
	tokenSecret = "dkt_m_tokensecret"
)

var ada = identity.Caller{Kind: contract.PrincipalMember, ID: "m1", Name: "ada", Projects: []contract.ProjectID{"p1"}}

// clock is a test's settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	st    store.Store
	keys  *signing.Keyring
	clock *clock
	logs  *bytes.Buffer
	mail  *mailbox
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	err = st.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateProject(t.Context(), store.Project{ID: "p1", Name: "One", CreatedAt: c.t}); err != nil {
			return err
		}
		if err := tx.CreateMember(t.Context(), store.Member{ID: "m1", Name: "ada", PassphraseHash: []byte("$argon2id$x"), CreatedAt: c.t}); err != nil {
			return err
		}
		return tx.AddMembership(t.Context(), "p1", "m1")
	})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := signing.Generate(rand.Reader, c.t)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, keys: keys, clock: c, logs: &bytes.Buffer{}, mail: startSMTP(t)}
}

func (f *fixture) keeper(t *testing.T, cfg notice.Config) *notice.Keeper {
	t.Helper()
	cfg.Store, cfg.Signer, cfg.Now = f.st, f.keys, f.clock.now
	cfg.PublicURL = "https://docket.example/"
	cfg.SMTP = notice.SMTP{Addr: f.mail.addr, From: "docket@example.com"}
	cfg.Log = slog.New(slog.NewTextHandler(lockedWriter{w: f.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	k, err := notice.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var logMu sync.Mutex

type lockedWriter struct{ w io.Writer }

func (l lockedWriter) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	return l.w.Write(p)
}

// request appends a request.created event whose call carries argSecret.
func (f *fixture) request(t *testing.T, id string) {
	t.Helper()
	r := contract.Request{ID: contract.RequestID(id), Project: "p1", Ordinal: 1, RequestedBy: "agent:agt_calc",
		Vector: contract.RequestVector{Action: "pay", Tool: "payments.send", Args: contract.Args{"password": contract.StringValue(argSecret)}},
		State:  contract.RequestPending, CreatedAt: f.clock.now(), Deadline: f.clock.now().Add(time.Hour)}
	err := f.st.Update(t.Context(), func(tx store.Tx) error {
		return eventlog.Append(t.Context(), tx, "p1", "agent:agt_calc", f.clock.now(), event.RequestCreatedData{Request: r})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// events returns p1's events of type typ.
func (f *fixture) events(t *testing.T, typ string) []event.Notice {
	t.Helper()
	es, err := f.st.Events(t.Context(), "p1", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Notice
	for _, e := range es {
		if e.Type == typ {
			var n event.Notice
			if err := json.Unmarshal(e.Data, &n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
	}
	return out
}

// allText is every event's data and the log, for the secret check.
func (f *fixture) allText(t *testing.T) string {
	t.Helper()
	es, err := f.st.Events(t.Context(), "p1", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		if e.Type == event.RequestCreated {
			continue // the Request's own record holds its call, as it always has
		}
		b.Write(e.Data)
		b.WriteByte('\n')
	}
	logMu.Lock()
	b.WriteString(f.logs.String())
	logMu.Unlock()
	return b.String()
}

// receiver is a webhook on loopback: it answers each post with the next status of its
// script (200 once the script runs out) and keeps every request it got.
type receiver struct {
	mu     sync.Mutex
	script []int
	got    []received
	srv    *httptest.Server
}

type received struct {
	header http.Header
	body   []byte
	target string
	method string
}

func startReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Error(err)
		}
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: body, method: req.Method, target: "http://" + req.Host + req.RequestURI})
		status := http.StatusOK
		if len(r.script) > 0 {
			status, r.script = r.script[0], r.script[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string {
	return r.srv.URL + "/services/" + pathSecret + "?token=" + querySecret
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// mailbox is an SMTP server on loopback (github.com/emersion/go-smtp) that keeps every
// message it accepts.
type mailbox struct {
	addr string
	mu   sync.Mutex
	msgs []mailed
}

type mailed struct {
	from string
	to   []string
	data string
}

func startSMTP(t *testing.T) *mailbox {
	t.Helper()
	m := &mailbox{}
	srv := gosmtp.NewServer(m)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		// Closing the listener too ends a Serve that had not yet begun when Close ran, so
		// the wait below cannot hang; its error then is the closed listener's.
		srv.Close()
		ln.Close()
		if err := <-done; err != nil && !errors.Is(err, gosmtp.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			t.Error(err)
		}
	})
	return m
}

func (m *mailbox) NewSession(*gosmtp.Conn) (gosmtp.Session, error) { return &mailSession{box: m}, nil }

func (m *mailbox) messages() []mailed {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]mailed(nil), m.msgs...)
}

type mailSession struct {
	box *mailbox
	cur mailed
}

func (s *mailSession) Reset()        { s.cur = mailed{} }
func (s *mailSession) Logout() error { return nil }
func (s *mailSession) Mail(from string, _ *gosmtp.MailOptions) error {
	s.cur.from = from
	return nil
}
func (s *mailSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = string(b)
	s.box.mu.Lock()
	s.box.msgs = append(s.box.msgs, s.cur)
	s.box.mu.Unlock()
	return nil
}

// verify checks a webhook's RFC 9421 signature the way a receiver would, with only the
// installation's published JWK set: it rebuilds the signature base from the request it
// got and the Signature-Input it was sent, and checks Content-Digest against the body.
func verify(t *testing.T, r received, published []byte) {
	t.Helper()
	var set signing.JWKSet
	if err := json.Unmarshal(published, &set); err != nil {
		t.Fatal(err)
	}
	keys, err := set.PublicKeys()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(r.body)
	if got, want := r.header.Get("Content-Digest"), "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":"; got != want {
		t.Fatalf("Content-Digest = %q, want %q", got, want)
	}
	input, ok := strings.CutPrefix(r.header.Get("Signature-Input"), notice.SignatureLabel+"=")
	if !ok {
		t.Fatalf("Signature-Input = %q, want label %s", r.header.Get("Signature-Input"), notice.SignatureLabel)
	}
	want := `("@method" "@target-uri" "content-type" "content-digest");created=`
	if !strings.HasPrefix(input, want) || !strings.Contains(input, `;tag="docket-notice"`) {
		t.Fatalf("Signature-Input = %q, want it to cover %s and carry the tag", input, want)
	}
	_, kid, ok := strings.Cut(input, `;keyid="`)
	kid, _, _ = strings.Cut(kid, `"`)
	var pub ed25519.PublicKey
	for _, k := range keys {
		if k.ID == kid {
			pub = k.Key
		}
	}
	if !ok || pub == nil {
		t.Fatalf("keyid %q is not a published key", kid)
	}
	base := strings.Join([]string{
		`"@method": ` + r.method,
		`"@target-uri": ` + r.target,
		`"content-type": ` + r.header.Get("Content-Type"),
		`"content-digest": ` + r.header.Get("Content-Digest"),
		`"@signature-params": ` + input,
	}, "\n")
	sig, ok := strings.CutPrefix(r.header.Get("Signature"), notice.SignatureLabel+"=:")
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(sig, ":"))
	if !ok || err != nil {
		t.Fatalf("Signature = %q: %v", r.header.Get("Signature"), err)
	}
	if !ed25519.Verify(pub, []byte(base), raw) {
		t.Fatalf("the signature does not verify over:\n%s", base)
	}
}

func published(t *testing.T, k *signing.Keyring) []byte {
	b, err := json.Marshal(signing.Set(k.Public()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func step(t *testing.T, k *notice.Keeper) {
	t.Helper()
	if err := k.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestRequestNoticeByWebhookAndEmail: a pending request reaches a signed webhook and an
// e-mail, each naming the request and linking to its page, and neither, nor any event or
// log line, holds the call's argument, the webhook's secret path or query, or a token.
func TestRequestNoticeByWebhookAndEmail(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{})
	rcv := startReceiver(t)
	ctx := t.Context()
	hook, err := k.Subscribe(ctx, ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request", "card"}, Webhook: rcv.url()})
	if err != nil {
		t.Fatal(err)
	}
	if want := rcv.srv.URL + "/…"; hook.Destination != want {
		t.Errorf("Destination = %q, want %q", hook.Destination, want)
	}
	if _, err := k.Subscribe(ctx, ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	f.request(t, "req_0123456789abcdef")
	step(t, k)

	got := rcv.received()
	if len(got) != 1 {
		t.Fatalf("the webhook got %d posts, want 1", len(got))
	}
	verify(t, got[0], published(t, f.keys))
	var body struct {
		Text, Kind, Project, Subject, Link, Notice string
	}
	if err := json.Unmarshal(got[0].body, &body); err != nil {
		t.Fatal(err)
	}
	link := "https://docket.example/projects/p1/needs#req_0123456789abcdef"
	if body.Kind != "request" || body.Subject != "req_0123456789abcdef" || body.Project != "p1" || body.Link != link ||
		!strings.Contains(body.Text, "req_0123456789abcdef") || !strings.Contains(body.Text, link) {
		t.Errorf("webhook body = %s, want the request named and linked", got[0].body)
	}
	if id := got[0].header.Get(notice.HeaderID); id == "" || id != body.Notice {
		t.Errorf("%s = %q, want the body's notice %q", notice.HeaderID, id, body.Notice)
	}
	mails := f.mail.messages()
	if len(mails) != 1 || mails[0].to[0] != "ada@example.com" || mails[0].from != "docket@example.com" {
		t.Fatalf("mail = %+v, want one to ada@example.com from docket@example.com", mails)
	}
	for _, want := range []string{"req_0123456789abcdef", link, notice.HeaderID + ": ntc_", "Subject: Docket: request req_0123456789abcdef"} {
		if !strings.Contains(mails[0].data, want) {
			t.Errorf("the e-mail lacks %q:\n%s", want, mails[0].data)
		}
	}
	if ds := f.events(t, event.NoticeDelivered); len(ds) != 2 {
		t.Errorf("notice.delivered events = %+v, want 2", ds)
	}
	all := f.allText(t) + string(got[0].body) + mails[0].data
	for _, secret := range []string{argSecret, pathSecret, querySecret, tokenSecret} {
		if strings.Contains(all, secret) {
			t.Errorf("a notice, event or log line holds %q", secret)
		}
	}
	// A second look sends nothing again.
	step(t, k)
	if n := len(rcv.received()); n != 1 {
		t.Errorf("after a second look the webhook got %d posts, want 1", n)
	}
}

// TestRetriedThenDelivered: a receiver that answers 500 twice gets the notice again after
// each back-off, under the same notice id, and the third attempt is recorded delivered.
func TestRetriedThenDelivered(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{Backoff: time.Minute})
	rcv := startReceiver(t, 500, 500)
	if _, err := k.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Webhook: rcv.url()}); err != nil {
		t.Fatal(err)
	}
	f.request(t, "req_1")
	step(t, k)
	f.clock.add(59 * time.Second)
	step(t, k) // before the back-off ends: nothing
	if n := len(rcv.received()); n != 1 {
		t.Fatalf("posts before the first back-off ended = %d, want 1", n)
	}
	f.clock.add(time.Second)
	step(t, k)
	f.clock.add(2 * time.Minute) // the back-off doubled
	step(t, k)
	got := rcv.received()
	if len(got) != 3 {
		t.Fatalf("posts = %d, want 3", len(got))
	}
	for _, r := range got[1:] {
		if r.header.Get(notice.HeaderID) != got[0].header.Get(notice.HeaderID) {
			t.Errorf("a retry's notice id %q differs from the first %q", r.header.Get(notice.HeaderID), got[0].header.Get(notice.HeaderID))
		}
	}
	ds := f.events(t, event.NoticeDelivered)
	if len(ds) != 1 || ds[0].Attempts != 3 || len(f.events(t, event.NoticeFailed)) != 0 {
		t.Errorf("delivered = %+v, failed = %+v; want one delivery after 3 attempts", ds, f.events(t, event.NoticeFailed))
	}
	subs, err := k.Subscriptions(t.Context(), ada, "p1")
	if err != nil || len(subs) != 1 || subs[0].LastState != "delivered" {
		t.Errorf("subscriptions = %+v, %v; want last delivered", subs, err)
	}
}

// TestGivenUp: a receiver that always fails is given up after the last attempt, recorded
// notice.failed with the status and the receiver's scheme://host/… only.
func TestGivenUp(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{Backoff: time.Minute, MaxAttempts: 3})
	rcv := startReceiver(t, 500, 503, 500, 500)
	if _, err := k.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Webhook: rcv.url()}); err != nil {
		t.Fatal(err)
	}
	f.request(t, "req_1")
	for range 5 {
		step(t, k)
		f.clock.add(time.Hour)
	}
	if n := len(rcv.received()); n != 3 {
		t.Errorf("posts = %d, want 3", n)
	}
	fs := f.events(t, event.NoticeFailed)
	if want := "POST " + rcv.srv.URL + "/…: status 500"; len(fs) != 1 || fs[0].Error != want || fs[0].Attempts != 3 {
		t.Errorf("failed = %+v, want one with %q after 3 attempts", fs, want)
	}
	subs, err := k.Subscriptions(t.Context(), ada, "p1")
	if err != nil || len(subs) != 1 || subs[0].LastState != "failed" {
		t.Errorf("subscriptions = %+v, %v; want last failed", subs, err)
	}
	if all := f.allText(t); strings.Contains(all, pathSecret) || strings.Contains(all, querySecret) {
		t.Errorf("an event or log line holds the webhook's secret parts:\n%s", all)
	}
}

// TestUnreachableReceiverNamesHostOnly: a transport error (nothing listens) is recorded
// without the URL's path or query.
func TestUnreachableReceiverNamesHostOnly(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{MaxAttempts: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := "http://" + addr + "/services/" + pathSecret + "?token=" + querySecret
	if _, err := k.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Webhook: url}); err != nil {
		t.Fatal(err)
	}
	f.request(t, "req_1")
	step(t, k)
	fs := f.events(t, event.NoticeFailed)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Error, "POST http://"+addr+"/…: ") {
		t.Fatalf("failed = %+v, want one naming http://%s/… only", fs, addr)
	}
	if all := f.allText(t); strings.Contains(all, pathSecret) || strings.Contains(all, querySecret) {
		t.Errorf("an event or log line holds the webhook's secret parts:\n%s", all)
	}
}

// TestTwoSendersSendOnce: two senders over one store, looking at once, make and send
// each notice once.
func TestTwoSendersSendOnce(t *testing.T) {
	f := newFixture(t)
	a := f.keeper(t, notice.Config{Instance: "serve-a"})
	b := f.keeper(t, notice.Config{Instance: "serve-b"})
	rcv := startReceiver(t)
	if _, err := a.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Webhook: rcv.url()}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"req_1", "req_2", "req_3"} {
		f.request(t, id)
	}
	var wg sync.WaitGroup
	for _, k := range []*notice.Keeper{a, b, a, b} {
		wg.Go(func() {
			if err := k.Step(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	subjects := map[string]int{}
	for _, r := range rcv.received() {
		var body struct{ Subject string }
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		subjects[body.Subject]++
	}
	if len(subjects) != 3 || subjects["req_1"] != 1 || subjects["req_2"] != 1 || subjects["req_3"] != 1 {
		t.Errorf("notices received by subject = %v, want each of 3 once", subjects)
	}
}

// TestDigest: a digest subscription's notices wait for the end of their window and go
// out as one message naming each.
func TestDigest(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{})
	rcv := startReceiver(t)
	if _, err := k.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Webhook: rcv.url(), Digest: "15m"}); err != nil {
		t.Fatal(err)
	}
	f.request(t, "req_1")
	f.clock.add(time.Minute)
	f.request(t, "req_2")
	step(t, k)
	if n := len(rcv.received()); n != 0 {
		t.Fatalf("posts inside the window = %d, want 0", n)
	}
	f.clock.add(15 * time.Minute)
	step(t, k)
	got := rcv.received()
	if len(got) != 1 {
		t.Fatalf("posts after the window = %d, want 1", len(got))
	}
	var body struct {
		Kind    string
		Text    string
		Notices []struct{ Subject, Link string }
	}
	if err := json.Unmarshal(got[0].body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Kind != "digest" || len(body.Notices) != 2 || !strings.Contains(body.Text, "req_1") || !strings.Contains(body.Text, "req_2") {
		t.Errorf("digest = %s, want both requests", got[0].body)
	}
	verify(t, got[0], published(t, f.keys))
}

// TestTestNotice: docket notice test's notice goes out at once, a digest's too.
func TestTestNotice(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{})
	rcv := startReceiver(t)
	s, err := k.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"budget"}, Webhook: rcv.url(), Digest: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	tn, err := k.Test(t.Context(), ada, "p1", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	step(t, k)
	got := rcv.received()
	if len(got) != 1 || got[0].header.Get(notice.HeaderID) != tn.Notice || !strings.Contains(string(got[0].body), "a test notice") {
		t.Fatalf("posts = %+v, want the test notice %s", got, tn.Notice)
	}
	if _, err := k.Test(t.Context(), ada, "p1", "nsub_nope"); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("Test of a missing subscription = %v, want not_found", err)
	}
}

// TestSubscribeRefusals: what a subscription may not be is refused invalid_notice, and a
// refused webhook URL is never repeated in the refusal.
func TestSubscribeRefusals(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{})
	secretURL := "ftp://hooks.example.com/" + pathSecret
	for _, tt := range []struct {
		name string
		req  contract.SubscribeNoticesRequest
	}{
		{"no kinds", contract.SubscribeNoticesRequest{Webhook: "https://x.example/"}},
		{"an unknown kind", contract.SubscribeNoticesRequest{Kinds: []string{"weather"}, Webhook: "https://x.example/"}},
		{"neither", contract.SubscribeNoticesRequest{Kinds: []string{"card"}}},
		{"both", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Webhook: "https://x.example/", Email: "a@example.com"}},
		{"not http", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Webhook: secretURL}},
		{"user info", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Webhook: "https://u:" + pathSecret + "@x.example/"}},
		{"a named address", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Email: "Ann <a@example.com>"}},
		{"a short digest", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Email: "a@example.com", Digest: "5s"}},
		{"a digest that is no duration", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Email: "a@example.com", Digest: "often"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Subscribe(t.Context(), ada, "p1", tt.req)
			if contract.CodeOf(err) != contract.CodeInvalidNotice {
				t.Fatalf("Subscribe = %v, want invalid_notice", err)
			}
			if strings.Contains(err.Error(), pathSecret) {
				t.Errorf("the refusal repeats the URL: %v", err)
			}
		})
	}
	other := identity.Caller{Kind: contract.PrincipalMember, ID: "m2", Name: "bo", Projects: []contract.ProjectID{"p2"}}
	if _, err := k.Subscribe(t.Context(), other, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"card"}, Webhook: "https://x.example/"}); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("a non-member's Subscribe = %v, want forbidden", err)
	}
}

// TestBudgetAndTaskNotices: a budget.warned event (matched by its type) and a failed task
// each make a notice of their kind naming the budget or task, and an event of another
// kind makes none for a subscription that did not ask for it.
func TestBudgetAndTaskNotices(t *testing.T) {
	f := newFixture(t)
	k := f.keeper(t, notice.Config{})
	rcv := startReceiver(t)
	if _, err := k.Subscribe(t.Context(), ada, "p1", contract.SubscribeNoticesRequest{Kinds: []string{"budget", "task_failed"}, Webhook: rcv.url()}); err != nil {
		t.Fatal(err)
	}
	f.request(t, "req_1") // not asked for
	err := f.st.Update(t.Context(), func(tx store.Tx) error {
		ne := store.NewEvent{Project: "p1", Type: event.BudgetWarned, At: f.clock.now(), Actor: "system",
			Data: json.RawMessage(`{"budget":"monthly","kind":"usd","used":81,"limit":100,"agent":"agt_calc"}`)}
		if _, err := tx.Append(t.Context(), ne); err != nil {
			return err
		}
		return eventlog.Append(t.Context(), tx, "p1", "agent:agt_calc", f.clock.now(), event.TaskReportedData{Task: "tsk_1",
			TaskReport: contract.TaskReport{Attempt: 1, State: contract.TaskFailed, TaskResult: contract.TaskResult{ErrorCode: "model_failed"}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	step(t, k)
	got := rcv.received()
	if len(got) != 2 {
		t.Fatalf("posts = %d, want 2", len(got))
	}
	all := string(got[0].body) + string(got[1].body)
	for _, want := range []string{"budget monthly in project p1 reached its warning share: 81 of 100 usd", "task tsk_1 in project p1 failed (model_failed)",
		"/projects/p1/events?type=task.reported"} {
		if !strings.Contains(all, want) {
			t.Errorf("the notices lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "req_1") {
		t.Errorf("a request notice went to a subscription that did not ask for it:\n%s", all)
	}
}
