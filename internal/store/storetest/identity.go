package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

// seedProject creates project p1 and member ann in it.
func seedProject(t *testing.T, s store.Store) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p1", Name: "One", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.CreateMember(ctx, store.Member{ID: "m1", Name: "ann", PassphraseHash: []byte("$argon2id$x"), CreatedAt: t0}); err != nil {
			return err
		}
		return tx.AddMembership(ctx, "p1", "m1")
	})
}

func testInstallationKey(t *testing.T, h Harness) {
	s := open(t, h)
	_, err := s.InstallationKey(t.Context())
	wantErr(t, "InstallationKey before it is set", err, store.ErrNotFound)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SetInstallationKey(ctx, []byte("k1")) })
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SetInstallationKey(ctx, []byte("k2")) })
	wantErr(t, "SetInstallationKey again", err, store.ErrConflict)
	k, err := s.InstallationKey(t.Context())
	if err != nil || string(k) != "k1" {
		t.Errorf("InstallationKey = %q, %v; want k1", k, err)
	}
}

func testProjectRecords(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.CreateProject(ctx, store.Project{ID: "p0", Name: "Zero", CreatedAt: t0.Add(time.Second)})
	})
	tests := []struct {
		name string
		p    store.Project
		want error
	}{
		{"duplicate id", store.Project{ID: "p1", Name: "Again", CreatedAt: t0}, store.ErrConflict},
		{"no id", store.Project{Name: "Anon", CreatedAt: t0}, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateProject(ctx, tt.p) })
			wantErr(t, "CreateProject", err, tt.want)
		})
	}
	ps, err := s.Projects(t.Context())
	wantErr(t, "Projects", err, nil)
	want := []store.Project{{ID: "p0", Name: "Zero", CreatedAt: t0.Add(time.Second)}, {ID: "p1", Name: "One", CreatedAt: t0}}
	if diff := cmp.Diff(want, ps); diff != "" {
		t.Errorf("Projects (-want +got):\n%s", diff)
	}
}

func testMembers(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.CreateMember(ctx, store.Member{ID: "m2", Name: "ann", PassphraseHash: []byte("h"), CreatedAt: t0})
	})
	wantErr(t, "CreateMember with a name in use", err, store.ErrConflict)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AddMembership(ctx, "nope", "m1") })
	wantErr(t, "AddMembership to a missing project", err, store.ErrNotFound)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AddMembership(ctx, "p1", "m1") }) // again: no-op

	m, err := s.MemberByName(ctx, "ann")
	wantErr(t, "MemberByName", err, nil)
	want := store.Member{ID: "m1", Name: "ann", PassphraseHash: []byte("$argon2id$x"), CreatedAt: t0}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("MemberByName (-want +got):\n%s", diff)
	}
	ps, err := s.MemberProjects(ctx, "m1")
	if err != nil || !cmp.Equal([]string{"p1"}, ps) {
		t.Errorf("MemberProjects = %v, %v; want [p1]", ps, err)
	}
	revoked := t0.Add(time.Hour)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeMember(ctx, "m1", revoked) })
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.RevokeMember(ctx, "m1", revoked.Add(time.Hour))
	})
	m, err = s.Member(ctx, "m1")
	if err != nil || m.RevokedAt == nil || !m.RevokedAt.Equal(revoked) {
		t.Errorf("Member after two revocations = %+v, %v; want RevokedAt %v (the first)", m, err, revoked)
	}
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeMember(ctx, "nope", revoked) })
	wantErr(t, "RevokeMember(missing)", err, store.ErrNotFound)
	_, err = s.Member(ctx, "nope")
	wantErr(t, "Member(missing)", err, store.ErrNotFound)
}

func testSessions(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	expires := t0.Add(time.Hour)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, d := range []string{"d1", "d2"} {
			if err := tx.CreateSession(ctx, store.Session{TokenDigest: []byte(d), MemberID: "m1", CreatedAt: t0, ExpiresAt: expires}); err != nil {
				return err
			}
		}
		return nil
	})
	err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.CreateSession(ctx, store.Session{TokenDigest: []byte("d3"), MemberID: "nobody", CreatedAt: t0, ExpiresAt: expires})
	})
	wantErr(t, "CreateSession for a missing member", err, store.ErrNotFound)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.CreateSession(ctx, store.Session{TokenDigest: []byte("d1"), MemberID: "m1", CreatedAt: t0, ExpiresAt: expires})
	})
	wantErr(t, "CreateSession with a digest in use", err, store.ErrConflict)

	got, err := s.Session(ctx, []byte("d1"), t0.Add(time.Minute))
	wantErr(t, "Session", err, nil)
	if diff := cmp.Diff(store.Session{TokenDigest: []byte("d1"), MemberID: "m1", CreatedAt: t0, ExpiresAt: expires}, got); diff != "" {
		t.Errorf("Session (-want +got):\n%s", diff)
	}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeSession(ctx, []byte("d1"), t0) })
	tests := []struct {
		name   string
		digest string
		now    time.Time
		want   error
	}{
		{"unknown digest", "zz", t0, store.ErrNotFound},
		{"revoked", "d1", t0, store.ErrRevoked},
		{"live", "d2", t0, nil},
		{"at expiry", "d2", expires, store.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Session(t.Context(), []byte(tt.digest), tt.now)
			wantErr(t, "Session("+tt.digest+")", err, tt.want)
		})
	}
	t.Run("member revoked", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeMember(ctx, "m1", t0) })
		_, err := s.Session(t.Context(), []byte("d2"), t0)
		wantErr(t, "Session of a revoked member", err, store.ErrRevoked)
	})
}

func testAgents(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	a := store.Agent{ID: "a1", Project: "p1", Name: "calc", Kind: store.AgentKindAgent, TokenDigest: []byte("t1"), CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateAgent(ctx, a) })
	tests := []struct {
		name string
		edit func(*store.Agent)
		want error
	}{
		{"id in use", func(a *store.Agent) { a.Name, a.TokenDigest = "other", []byte("t9") }, store.ErrConflict},
		{"name in use in project", func(a *store.Agent) { a.ID, a.TokenDigest = "a9", []byte("t9") }, store.ErrConflict},
		{"token digest in use", func(a *store.Agent) { a.ID, a.Name = "a9", "other" }, store.ErrConflict},
		{"unknown kind", func(a *store.Agent) { a.ID, a.Name, a.TokenDigest, a.Kind = "a9", "other", []byte("t9"), "boss" }, store.ErrInvalid},
		{"missing project", func(a *store.Agent) { a.ID, a.Name, a.TokenDigest, a.Project = "a9", "other", []byte("t9"), "nope" }, store.ErrNotFound},
		{"no token digest", func(a *store.Agent) { a.ID, a.Name, a.TokenDigest = "a9", "other", nil }, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := a
			tt.edit(&b)
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateAgent(ctx, b) })
			wantErr(t, "CreateAgent", err, tt.want)
		})
	}
	got, err := s.AgentByToken(ctx, []byte("t1"))
	wantErr(t, "AgentByToken", err, nil)
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("AgentByToken (-want +got):\n%s", diff)
	}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SetAgentToken(ctx, "a1", []byte("t2")) })
	_, err = s.AgentByToken(ctx, []byte("t1"))
	wantErr(t, "AgentByToken(old token)", err, store.ErrNotFound)
	_, err = s.AgentByToken(ctx, []byte("t2"))
	wantErr(t, "AgentByToken(new token)", err, nil)

	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeAgent(ctx, "a1", t0.Add(time.Hour)) })
	_, err = s.AgentByToken(ctx, []byte("t2"))
	wantErr(t, "AgentByToken(revoked)", err, store.ErrRevoked)
	got, err = s.Agent(ctx, "a1")
	if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("Agent(revoked) = %+v, %v; want RevokedAt set", got, err)
	}
	as, err := s.Agents(ctx, "p1")
	if err != nil || len(as) != 1 || as[0].ID != "a1" {
		t.Errorf("Agents = %+v, %v; want a1 only", as, err)
	}
}

func testConnections(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	c := store.Connection{ID: "c1", Project: "p1", Name: "laptop", KeyCiphertext: []byte("sealed"), CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateConnection(ctx, c) })
	err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		d := c
		d.ID = "c2"
		return tx.CreateConnection(ctx, d)
	})
	wantErr(t, "CreateConnection with a name in use", err, store.ErrConflict)
	got, err := s.Connection(ctx, "c1")
	wantErr(t, "Connection", err, nil)
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("Connection (-want +got):\n%s", diff)
	}

	src := store.Source{Connection: "c1", ID: "files", Digest: []byte("s1"), Data: []byte(`{"type":"file"}`)}
	lock := store.ToolLock{Connection: "c1", Tool: "docket.workspace.read_text@1", Digest: []byte("d1")}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutSource(ctx, src); err != nil {
			return err
		}
		src.Digest = []byte("s2") // rebinding replaces
		if err := tx.PutSource(ctx, src); err != nil {
			return err
		}
		if err := tx.LockTool(ctx, lock); err != nil {
			return err
		}
		lock.Digest = []byte("d2")
		return tx.LockTool(ctx, lock)
	})
	// A lock with its record keeps the record.
	withData := store.ToolLock{Connection: "c1", Tool: "acme.notes.list@1", Digest: []byte("d3"), Data: []byte(`{"approval":"none"}`)}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.LockTool(ctx, withData) })
	srcs, err := s.Sources(ctx, "c1")
	wantErr(t, "Sources", err, nil)
	if diff := cmp.Diff([]store.Source{src}, srcs); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	locks, err := s.ToolLocks(ctx, "c1")
	wantErr(t, "ToolLocks", err, nil)
	if diff := cmp.Diff([]store.ToolLock{withData, lock}, locks); diff != "" {
		t.Errorf("ToolLocks (-want +got):\n%s", diff)
	}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UnlockTool(ctx, "c1", withData.Tool) })
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.LockTool(ctx, store.ToolLock{Connection: "nope", Tool: "x@1", Digest: []byte("d")})
	})
	wantErr(t, "LockTool on a missing connection", err, store.ErrNotFound)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.DeleteSource(ctx, "c1", "files"); err != nil {
			return err
		}
		return tx.UnlockTool(ctx, "c1", lock.Tool)
	})
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UnlockTool(ctx, "c1", lock.Tool) })
	wantErr(t, "UnlockTool twice", err, store.ErrNotFound)
	if srcs, err := s.Sources(ctx, "c1"); err != nil || len(srcs) != 0 {
		t.Errorf("Sources after delete = %v, %v; want none", srcs, err)
	}

	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeConnection(ctx, "c1", t0) })
	got, err = s.Connection(ctx, "c1")
	if err != nil || got.RevokedAt == nil {
		t.Errorf("Connection after revoke = %+v, %v; want RevokedAt set", got, err)
	}
	cs, err := s.Connections(ctx, "p1")
	if err != nil || len(cs) != 1 {
		t.Errorf("Connections = %+v, %v; want c1", cs, err)
	}
}
