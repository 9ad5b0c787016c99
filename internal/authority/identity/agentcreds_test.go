package identity

import (
	"testing"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// TestAgentAt_ProvedAgainFromTheLog: an Agent's token proved once is proved again at a
// fresh head read, without its row, while its project's log shows no credential event
// since; an Agent revoked or its token replaced through another serve of the same store,
// or through this one, is refused at the next request, as a read of the row would
// refuse it; an event of another kind does not make the row be read again.
func TestAgentAt_ProvedAgainFromTheLog(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, f *holdsFixture) // nil: the token still proves its Agent
		want contract.Code
	}{
		{"nothing happened", nil, ""},
		{"a Connection created, another kind of event", func(t *testing.T, f *holdsFixture) {
			if _, err := f.second.CreateConnection(t.Context(), f.admin, "default", contract.CreateConnectionRequest{Name: "repo"}); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"the Agent revoked through the other serve", func(t *testing.T, f *holdsFixture) {
			if _, err := f.second.RevokeAgent(t.Context(), f.admin, "default", "calc"); err != nil {
				t.Fatal(err)
			}
		}, contract.CodeCredentialRevoked},
		{"the Agent's token replaced through the other serve", func(t *testing.T, f *holdsFixture) {
			if _, err := f.second.RotateAgentToken(t.Context(), f.admin, "default", "calc"); err != nil {
				t.Fatal(err)
			}
		}, contract.CodeUnauthenticated},
		{"the Agent revoked through this serve", func(t *testing.T, f *holdsFixture) {
			if _, err := f.first.RevokeAgent(t.Context(), f.admin, "default", "calc"); err != nil {
				t.Fatal(err)
			}
		}, contract.CodeCredentialRevoked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, counted := newCountedFixture(t)
			at := f.agent(t)
			tok := Token(at.Token)
			// The first request reads the row; the later ones read the head alone while
			// the log shows no credential event.
			for range 2 {
				if _, _, err := f.first.AgentAt(t.Context(), tok); err != nil {
					t.Fatal(err)
				}
			}
			counted.Reset()
			c, head, err := f.first.AgentAt(t.Context(), tok)
			if err != nil || contract.AgentID(c.ID) != at.Agent.ID || head == 0 {
				t.Fatalf("AgentAt of a proved token = %+v at %d, %v; want Agent %s at a head", c, head, err, at.Agent.ID)
			}
			if n := counted.Counts(); n.Calls != 1 || n.HeadReads != 1 {
				t.Fatalf("AgentAt of a proved token made %d store calls (%d head reads, %v); want the head read alone", n.Calls, n.HeadReads, n.ByMethod)
			}
			if tc.end == nil {
				return
			}
			tc.end(t, f)
			_, _, err = f.first.AgentAt(t.Context(), tok)
			if contract.CodeOf(err) != tc.want {
				t.Fatalf("AgentAt after %s = %v, want %s", tc.name, err, tc.want)
			}
		})
	}
}

// newCountedFixture is newHoldsFixture with first's store counted.
func newCountedFixture(t *testing.T) (*holdsFixture, *storecount.Store) {
	t.Helper()
	f := newHoldsFixture(t)
	st, err := sqlite.Open(t.Context(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	counted := storecount.Wrap(st)
	if f.first, err = New(Config{Store: eventlog.Remember(counted, nil), Key: Key{1}, Now: f.clock.Now}); err != nil {
		t.Fatal(err)
	}
	return f, counted
}
