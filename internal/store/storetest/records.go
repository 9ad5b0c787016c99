package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

func testReleases(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := t.Context()
	rel := store.Release{ID: "demo.calc", Version: "1.0.0", Digest: []byte("dig1"), Content: []byte("package bytes"), CreatedAt: t0}
	put := func(r store.Release) (bool, error) {
		var created bool
		err := updateErr(t, s, func(ctx context.Context, tx store.Tx) (err error) {
			created, err = tx.PutRelease(ctx, r)
			return err
		})
		return created, err
	}
	tests := []struct {
		name        string
		edit        func(*store.Release)
		wantCreated bool
		wantErr     error
	}{
		{"first install", func(*store.Release) {}, true, nil},
		{"same digest again", func(*store.Release) {}, false, nil},
		{"same digest, later time", func(r *store.Release) { r.CreatedAt = t0.Add(time.Hour) }, false, nil},
		{"other digest, same version", func(r *store.Release) { r.Digest = []byte("dig2") }, false, store.ErrConflict},
		{"other content, same digest", func(r *store.Release) { r.Content = []byte("forged") }, false, store.ErrConflict},
		{"next version", func(r *store.Release) { r.Version, r.Digest = "1.1.0", []byte("dig2") }, true, nil},
		{"no digest", func(r *store.Release) { r.Version, r.Digest = "2.0.0", nil }, false, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rel
			tt.edit(&r)
			created, err := put(r)
			wantErr(t, "PutRelease", err, tt.wantErr)
			if created != tt.wantCreated {
				t.Errorf("PutRelease created = %v, want %v", created, tt.wantCreated)
			}
		})
	}
	got, err := s.Release(ctx, "demo.calc", "1.0.0")
	wantErr(t, "Release", err, nil)
	want := rel
	want.ContentHash = store.DataHash(rel.Content)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Release (-want +got):\n%s", diff)
	}
	_, err = s.Release(ctx, "demo.calc", "9")
	wantErr(t, "Release(missing)", err, store.ErrNotFound)
}

func testInstalls(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, v := range []string{"1", "2"} {
			r := store.Release{ID: "demo.calc", Version: v, Digest: []byte("d" + v), Content: []byte("c" + v), CreatedAt: t0}
			if _, err := tx.PutRelease(ctx, r); err != nil {
				return err
			}
		}
		return tx.Install(ctx, store.Install{Project: "p1", ReleaseID: "demo.calc", Version: "1", InstalledAt: t0})
	})
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.Install(ctx, store.Install{Project: "p1", ReleaseID: "demo.calc", Version: "2", InstalledAt: t0.Add(time.Hour)})
	})
	ins, err := s.Installs(ctx, "p1")
	wantErr(t, "Installs", err, nil)
	want := []store.Install{{Project: "p1", ReleaseID: "demo.calc", Version: "2", InstalledAt: t0.Add(time.Hour)}}
	if diff := cmp.Diff(want, ins); diff != "" {
		t.Errorf("Installs after upgrade (-want +got):\n%s", diff)
	}
	tests := []struct {
		name string
		in   store.Install
	}{
		{"missing release", store.Install{Project: "p1", ReleaseID: "demo.calc", Version: "3", InstalledAt: t0}},
		{"missing project", store.Install{Project: "nope", ReleaseID: "demo.calc", Version: "1", InstalledAt: t0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.Install(ctx, tt.in) })
			wantErr(t, "Install", err, store.ErrNotFound)
		})
	}
}

func testNodes(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	node := func(id, kind, data string) store.Node {
		return store.Node{ID: id, Kind: kind, Data: json.RawMessage(data)}
	}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, n := range []store.Node{
			node("n1", "fact", `{"predicate":"edge","args":{"from":1,"to":2}}`),
			node("n2", "rule", `{"text":"path(X) :- edge(X)."}`),
			node("n3", "goal", `{}`),
		} {
			if err := tx.PutNode(ctx, "p1", n); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutNode(ctx, "p1", node("n1", "fact", `{"predicate":"edge","args":{"from":1,"to":3}}`)); err != nil {
			return err
		}
		return tx.DeleteNode(ctx, "p1", "n3")
	})
	got, err := s.Nodes(ctx, "p1")
	wantErr(t, "Nodes", err, nil)
	want := []store.Node{
		node("n1", "fact", `{"predicate":"edge","args":{"from":1,"to":3}}`),
		node("n2", "rule", `{"text":"path(X) :- edge(X)."}`),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}
	for project, want := range map[string]int{"p1": len(want), "no-such-project": 0} {
		if n, err := s.NodeCount(ctx, project); err != nil || n != want {
			t.Errorf("NodeCount(%s) = %d, %v; want %d", project, n, err, want)
		}
	}
	tests := []struct {
		name string
		fn   func(context.Context, store.Tx) error
		want error
	}{
		{"delete missing", func(ctx context.Context, tx store.Tx) error { return tx.DeleteNode(ctx, "p1", "n3") }, store.ErrNotFound},
		{"missing project", func(ctx context.Context, tx store.Tx) error {
			return tx.PutNode(ctx, "nope", node("n1", "fact", `{}`))
		}, store.ErrNotFound},
		{"data not JSON", func(ctx context.Context, tx store.Tx) error {
			return tx.PutNode(ctx, "p1", node("n4", "fact", `{`))
		}, store.ErrInvalid},
		{"no kind", func(ctx context.Context, tx store.Tx) error {
			return tx.PutNode(ctx, "p1", node("n4", "", `{}`))
		}, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, tt.name, updateErr(t, s, tt.fn), tt.want)
		})
	}
}

func testReadsOwnWrites(t *testing.T, h Harness) {
	s := open(t, h)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p1", Name: "One", CreatedAt: t0}); err != nil {
			return err
		}
		if _, err := tx.Project(ctx, "p1"); err != nil {
			t.Errorf("Tx.Project after CreateProject: %v", err)
		}
		for i := 1; i <= 2; i++ {
			if _, err := tx.Append(ctx, newEvent("p1", i)); err != nil {
				return err
			}
		}
		if head, err := tx.Head(ctx, "p1"); err != nil || head.Seq != 2 {
			t.Errorf("Tx.Head after two appends = %v, %v; want seq 2", head, err)
		}
		if evs, err := tx.Events(ctx, "p1", 0, 10); err != nil || len(evs) != 2 {
			t.Errorf("Tx.Events after two appends = %d events, %v; want 2", len(evs), err)
		}
		return nil
	})
}

// testReadFirst opens transactions with reads, which implementations may send together
// with BEGIN, and with nothing at all.
func testReadFirst(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	update(t, s, func(context.Context, store.Tx) error { return nil })
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		ps, err := tx.Projects(ctx)
		if err != nil || len(ps) != 1 {
			t.Errorf("Tx.Projects as the first statement = %v, %v; want p1", ps, err)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.Project(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Tx.Project(missing) as the first statement = %v, want %v", err, store.ErrNotFound)
		}
		_, err := tx.Append(ctx, newEvent("p1", 1))
		return err
	})
	if head, err := s.Verify(t.Context(), "p1"); err != nil || head.Seq != 1 {
		t.Errorf("Verify = %v, %v; want seq 1", head, err)
	}
}

func testClosed(t *testing.T, h Harness) {
	s := open(t, h)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := s.Update(t.Context(), func(store.Tx) error { return nil })
	wantErr(t, "Update after Close", err, store.ErrClosed)
	_, err = s.Projects(t.Context())
	wantErr(t, "Projects after Close", err, store.ErrClosed)
}
