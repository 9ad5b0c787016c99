package authority_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// TestAuthority_FollowEvents: the event stream's reads take what this process committed
// from memory, reading the store for none of it, and still read another instance's
// events from the store; what they answer in all is the log Events pages.
func TestAuthority_FollowEvents(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	count := storecount.Wrap(st)
	f := newFixtureOn(t, count)
	other := newAuthorityOn(t, st, f.key) // a second instance on the same store

	follow := func(after int64) []contract.Event {
		t.Helper()
		var out []contract.Event
		for {
			es, err := f.a.FollowEvents(ctx, f.admin, "default", after, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 0 {
				return out
			}
			out = append(out, es...)
			after = es[len(es)-1].Seq
		}
	}
	start, err := f.a.Events(ctx, f.admin, "default", 0, 100)
	if err != nil || len(start) == 0 {
		t.Fatalf("Events = %d, %v", len(start), err)
	}
	from := start[len(start)-1].Seq

	tok, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := f.a.Directory().Authenticate(ctx, identity.Token(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	count.Reset()
	es, err := f.a.FollowEvents(ctx, f.admin, "default", from, 100)
	if err != nil || len(es) == 0 {
		t.Fatalf("FollowEvents after this instance's write = %d events, %v; want them", len(es), err)
	}
	if n := count.Counts().ByMethod["Events"]; n != 0 {
		t.Errorf("FollowEvents of this instance's own events read the store's events %d times, want 0", n)
	}

	if _, err := other.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "theirs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "mine-again"}); err != nil {
		t.Fatal(err)
	}
	want, err := f.a.Events(ctx, f.admin, "default", from, 100)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, follow(from)); diff != "" {
		t.Errorf("FollowEvents read in turn differs from Events (-want +got):\n%s", diff)
	}
	if _, err := f.a.FollowEvents(ctx, agent, "default", from, 100); err == nil {
		t.Error("FollowEvents by an Agent = nil error, want it refused as Events refuses it")
	}
}
