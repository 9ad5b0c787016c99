package identity

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestHolds_Round steps the holds' rounds by hand over two Directories on one SQLite file,
// as two serves: a machine's credential, once its first round learned its project, is
// asked about again only when its project's log shows a credential event, and so a
// revocation through the other serve ends its holds at the next round; a person's
// credential is asked about every round, so a sign-out (on no log) or an expiry ends its
// holds too. A credential that still proves its caller keeps its holds.
func TestHolds_Round(t *testing.T) {
	cases := []struct {
		name string
		// make returns a credential of ada, set up through first; end ends it through
		// second (or the clock).
		make func(t *testing.T, f *holdsFixture) (tok Token, end func())
		want contract.Code
	}{
		{"an Agent revoked", func(t *testing.T, f *holdsFixture) (Token, func()) {
			at := f.agent(t)
			return Token(at.Token), func() {
				if _, err := f.second.RevokeAgent(t.Context(), f.admin, "default", "calc"); err != nil {
					t.Fatal(err)
				}
			}
		}, contract.CodeCredentialRevoked},
		{"an Agent's token replaced", func(t *testing.T, f *holdsFixture) (Token, func()) {
			at := f.agent(t)
			return Token(at.Token), func() {
				if _, err := f.second.RotateAgentToken(t.Context(), f.admin, "default", "calc"); err != nil {
					t.Fatal(err)
				}
			}
		}, contract.CodeUnauthenticated},
		{"a Connection revoked", func(t *testing.T, f *holdsFixture) (Token, func()) {
			ck, err := f.first.CreateConnection(t.Context(), f.admin, "default", contract.CreateConnectionRequest{Name: "repo"})
			if err != nil {
				t.Fatal(err)
			}
			return Token(ck.Key), func() {
				if _, err := f.second.RevokeConnection(t.Context(), f.admin, "default", "repo"); err != nil {
					t.Fatal(err)
				}
			}
		}, contract.CodeCredentialRevoked},
		{"a session signed out", func(t *testing.T, f *holdsFixture) (Token, func()) {
			s, err := f.first.Login(t.Context(), "ada", "correct horse battery", 0)
			if err != nil {
				t.Fatal(err)
			}
			return s.Token, func() {
				if err := f.second.Logout(t.Context(), s.Token); err != nil {
					t.Fatal(err)
				}
			}
		}, contract.CodeCredentialRevoked},
		{"a session expired", func(t *testing.T, f *holdsFixture) (Token, func()) {
			s, err := f.first.Login(t.Context(), "ada", "correct horse battery", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return s.Token, func() { f.clock.add(2 * time.Hour) }
		}, contract.CodeSessionExpired},
		{"a delegate's life ended", func(t *testing.T, f *holdsFixture) (Token, func()) {
			dt, err := f.first.CreateDelegate(t.Context(), f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "1m"})
			if err != nil {
				t.Fatal(err)
			}
			return Token(dt.Token), func() { f.clock.add(2 * time.Minute) }
		}, contract.CodeSessionExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newHoldsFixture(t)
			tok, end := tc.make(t, f)
			ctx, done := f.first.Hold(t.Context(), tok)
			defer done()
			other, otherDone := f.first.Hold(t.Context(), f.member)
			defer otherDone()
			f.round(t) // the first: learns a machine's project
			f.round(t) // the log read from its start: nothing ended
			if err := context.Cause(ctx); err != nil {
				t.Fatalf("the hold ended while its credential proved its caller: %v", err)
			}
			end()
			f.round(t)
			var ce *contract.Error
			if !errors.As(CredentialEnded(ctx), &ce) || ce.Code != tc.want {
				t.Fatalf("after the credential ended, the hold's cause = %v, want %s", context.Cause(ctx), tc.want)
			}
			if err := context.Cause(other); err != nil {
				t.Errorf("another credential's hold ended: %v", err)
			}
		})
	}
}

// TestHolds_CredentialEvents: what makes the holds ask about machines' credentials again
// is an event of their project's log that revokes or replaces one, read by either serve;
// another event is not (a busy log of calls asks about no credential), which is what keeps
// thousands of held calls cheap.
func TestHolds_CredentialEvents(t *testing.T) {
	f := newHoldsFixture(t)
	f.agent(t)
	steps := []struct {
		name string
		act  func() error
		want bool
	}{
		{"the log from its start: a project, a member, an Agent", func() error { return nil }, false},
		{"a Connection created", func() error {
			_, err := f.first.CreateConnection(t.Context(), f.admin, "default", contract.CreateConnectionRequest{Name: "other"})
			return err
		}, false},
		{"nothing new", func() error { return nil }, false},
		{"a Connection revoked through the other serve", func() error {
			_, err := f.second.RevokeConnection(t.Context(), f.admin, "default", "other")
			return err
		}, true},
		{"an Agent's token replaced", func() error {
			_, err := f.first.RotateAgentToken(t.Context(), f.admin, "default", "calc")
			return err
		}, true},
		{"an Agent revoked through the other serve", func() error {
			_, err := f.second.RevokeAgent(t.Context(), f.admin, "default", "calc")
			return err
		}, true},
	}
	for _, st := range steps {
		if err := st.act(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := f.first.credentialEventsLocked(t, "default"); got != st.want {
			t.Errorf("after %s, credential events = %t, want %t", st.name, got, st.want)
		}
	}
}

// credentialEventsLocked is credentialEvents under the round's lock, for a test.
func (a *Directory) credentialEventsLocked(t *testing.T, project contract.ProjectID) bool {
	t.Helper()
	a.holds.roundMu.Lock()
	defer a.holds.roundMu.Unlock()
	return a.credentialEvents(t.Context(), project)
}

// holdsFixture is two Directories over one SQLite file, member ada's token and Caller in
// project default, and the clock both read.
type holdsFixture struct {
	first, second *Directory
	path          string // the SQLite file both open
	member        Token
	admin         Caller
	clock         *fixedClock
}

type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newHoldsFixture(t *testing.T) *holdsFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docket.db")
	f := &holdsFixture{path: path, clock: &fixedClock{now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}}
	for _, d := range []**Directory{&f.first, &f.second} {
		st, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if *d, err = New(Config{Store: eventlog.Remember(st, nil), Key: Key{1}, Now: f.clock.Now}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.first.Init(t.Context(), "ada", "correct horse battery", "default")
	if err != nil {
		t.Fatal(err)
	}
	f.member = b.Token
	if f.admin, err = f.first.Authenticate(t.Context(), b.Token); err != nil {
		t.Fatal(err)
	}
	return f
}

// agent creates Agent calc through first.
func (f *holdsFixture) agent(t *testing.T) contract.AgentToken {
	t.Helper()
	at, err := f.first.CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// round runs one round of first's holds over what is held now.
func (f *holdsFixture) round(t *testing.T) {
	t.Helper()
	hs, ok := f.first.holds.snapshot()
	if !ok {
		t.Fatal("nothing is held")
	}
	f.first.round(t.Context(), hs)
}

// TestHolds_Close: the recheck loop is the Directory's own goroutine. Close ends the loop
// a hold started and waits for it; a hold taken after Close starts none, and ends only
// with its own context.
func TestHolds_Close(t *testing.T) {
	f := newHoldsFixture(t)
	_, done := f.first.Hold(t.Context(), f.member)
	defer done()
	f.first.holds.mu.Lock()
	running := f.first.holds.running
	f.first.holds.mu.Unlock()
	if !running {
		t.Fatal("a hold started no recheck loop")
	}
	f.first.Close() // the test's deadline fails it if the loop is not waited for
	f.first.holds.mu.Lock()
	running = f.first.holds.running
	f.first.holds.mu.Unlock()
	if running {
		t.Error("the recheck loop still runs after Close")
	}
	ctx, cancel := context.WithCancel(t.Context())
	held, done2 := f.first.Hold(ctx, f.member)
	defer done2()
	f.first.holds.mu.Lock()
	running = f.first.holds.running
	f.first.holds.mu.Unlock()
	if running {
		t.Error("a hold after Close started a recheck loop")
	}
	cancel()
	<-held.Done()
	f.first.Close() // twice is harmless
}
