package authority_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestAuthority_ArtifactRetentionPerProject: an artifact is kept for the retention of
// its project's artifact policy in force when it is kept — two projects, two retentions —
// and for the server's where the project published none; a later policy changes the
// expiry of the artifacts kept after it, not of those kept before (docs/mcp.md,
// "Artifacts").
func TestAuthority_ArtifactRetentionPerProject(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := authoritytest.NewClock(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	p := authoritytest.New(t, authoritytest.Options{Store: st, Now: clock.Now})
	ctx := t.Context()
	for _, id := range []contract.ProjectID{"week", "plain"} {
		if _, err := p.A.Directory().CreateProject(ctx, p.Admin, contract.CreateProjectRequest{ID: string(id)}); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := p.A.Directory().Authenticate(ctx, p.Token) // a member of the new projects too
	if err != nil {
		t.Fatal(err)
	}
	const server = 10 * 24 * time.Hour
	ops := authority.NewOperations(p.A, operation.Config{HoldBound: time.Millisecond, ArtifactRetention: server})
	agents := map[contract.ProjectID]identity.Caller{}
	for _, id := range []contract.ProjectID{"default", "week", "plain"} {
		at, err := p.A.Directory().CreateAgent(ctx, admin, id, contract.CreateAgentRequest{Name: "keeper"})
		if err != nil {
			t.Fatal(err)
		}
		if agents[id], err = p.A.Directory().Authenticate(ctx, identity.Token(at.Token)); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(project contract.ProjectID, days int) {
		t.Helper()
		text := fmt.Sprintf("[artifact_policy]\nretention_days = %d\n", days)
		if _, err := p.A.PublishPolicy(ctx, admin, project, contract.PublishPolicyRequest{File: "artifact.toml", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	publish("default", 2)
	publish("week", 7)

	now := clock.Now()
	kept := map[contract.ProjectID]contract.ArtifactRef{}
	tests := []struct {
		project contract.ProjectID
		want    time.Time
	}{
		{"default", now.Add(2 * 24 * time.Hour)},
		{"week", now.Add(7 * 24 * time.Hour)},
		{"plain", now.Add(server)}, // no artifact policy published: the server's retention
	}
	for _, tt := range tests {
		put, err := ops.Operations().PutArtifact(ctx, agents[tt.project], []byte("the same long result"))
		if err != nil {
			t.Fatalf("PutArtifact in %s: %v", tt.project, err)
		}
		if !put.ExpiresAt.Equal(tt.want) {
			t.Errorf("the artifact of %s expires at %s, want %s", tt.project, put.ExpiresAt, tt.want)
		}
		kept[tt.project] = put
	}

	// A shorter retention published later: what was kept keeps its expiry, what is kept
	// now gets the new one.
	clock.Add(time.Hour)
	publish("week", 1)
	again, err := ops.Operations().PutArtifact(ctx, agents["week"], []byte("the same long result"))
	if err != nil || again.Ref != kept["week"].Ref || !again.ExpiresAt.Equal(kept["week"].ExpiresAt) {
		t.Errorf("kept again while readable = %+v, %v; want the same ref expiring at %s", again, err, kept["week"].ExpiresAt)
	}
	fresh, err := ops.Operations().PutArtifact(ctx, agents["week"], []byte("another long result"))
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(24 * time.Hour); !fresh.ExpiresAt.Equal(want) {
		t.Errorf("an artifact kept after the new policy expires at %s, want %s", fresh.ExpiresAt, want)
	}
}

// TestAuthority_ArtifactKeptOnce: content kept by several calls at once is one
// artifact, issued once: the put decides on the ledger caught up in its write's
// transaction, under the head lock, so a put that finds the artifact kept meanwhile
// appends nothing (docs/architecture.md, "The project state and its driver").
func TestAuthority_ArtifactKeptOnce(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	const rounds, puts = 10, 8
	for round := range rounds {
		content := []byte(fmt.Sprintf("long result %d", round))
		refs := make([]contract.ArtifactRef, puts)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range puts {
			wg.Go(func() {
				<-start
				var err error
				if refs[i], err = f.ops.Operations().PutArtifact(t.Context(), f.agent, content); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		for _, r := range refs[1:] {
			if r != refs[0] {
				t.Errorf("PutArtifact gave %+v and %+v for the same content", refs[0], r)
			}
		}
	}
	evs, err := f.st.Events(t.Context(), "default", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	issued := 0
	for _, e := range evs {
		if e.Type == event.ArtifactIssued {
			issued++
		}
	}
	if issued != rounds {
		t.Errorf("%d artifact.issued events for %d contents each kept %d times at once, want %d", issued, rounds, puts, rounds)
	}
}
