package authority_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// tamperBackend is a store and a way to change its tables behind its back, with the
// triggers that keep events immutable out of the way.
type tamperBackend struct {
	name string
	open func(t *testing.T) (store.Store, func(t *testing.T, query string, args ...any))
}

var tamperBackends = []tamperBackend{
	{"sqlite", func(t *testing.T) (store.Store, func(*testing.T, string, ...any)) {
		path := filepath.Join(t.TempDir(), "docket.db")
		return openSQLite(t, path), func(t *testing.T, query string, args ...any) {
			t.Helper()
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{"DROP TRIGGER IF EXISTS events_no_update", "DROP TRIGGER IF EXISTS events_no_delete", query} {
				a := args
				if q != query {
					a = nil
				}
				if _, err := db.ExecContext(t.Context(), q, a...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
	}},
	{"postgres", func(t *testing.T) (store.Store, func(*testing.T, string, ...any)) {
		dsn := authoritytest.PostgresDSN(t)
		return openPostgres(t, dsn), func(t *testing.T, query string, args ...any) {
			t.Helper()
			c, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(t.Context(), "ALTER TABLE events DISABLE TRIGGER events_immutable"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(t.Context(), query, args...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
	}},
}

// seedProject installs the grant capability into a's project default and asserts
// input(j1) there at the asserted tier.
func seedProject(t *testing.T, a *authority.Authority, admin identity.Caller) {
	t.Helper()
	if _, err := a.InstallCapability(t.Context(), admin, "default", authoritytest.ReadPackage(t, "testdata/grant")); err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	if err := a.Commit(t.Context(), "default", admin.Principal(), assertedFact("j1")); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// assertedFact asserts input(job, 1) at the asserted tier.
func assertedFact(job string) func(b *board.Board) (boards.Change, error) {
	return func(b *board.Board) (boards.Change, error) {
		res, err := b.ApplyBatch(board.Author{Principal: "member:test", Tier: contract.TierAsserted},
			contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "input", Args: contract.Args{"job": contract.StringValue(job)}}}}})
		if err != nil {
			return boards.Change{}, err
		}
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, nil
	}
}

// TestAuthority_TamperedProjection changes a store behind the log's back and checks that
// a restart refuses naming the row, and that verify names it too.
func TestAuthority_TamperedProjection(t *testing.T) {
	type tampering struct {
		name    string
		tamper  func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) string // returns the node named
		restore boards.ProjectionError                                                           // Field compared; "" wants a broken chain
		verify  contract.BrokenLink                                                              // Node, Field compared; Seq when not 0
	}
	tamperings := []tampering{
		{name: "node forged asserted to attested", tamper: func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) string {
			id, data := inputRow(t, st)
			forged := bytes.Replace(data, []byte(`"tier":"asserted"`), []byte(`"tier":"attested"`), 1)
			if bytes.Equal(forged, data) {
				t.Fatalf("node %s holds no asserted tier: %s", id, data)
			}
			exec(t, `UPDATE nodes SET data = $1 WHERE project = 'default' AND id = $2`, forged, id)
			return id
		}, restore: boards.ProjectionError{Field: "tier"}, verify: contract.BrokenLink{Field: "tier"}},
		{name: "node removed", tamper: func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) string {
			id, _ := inputRow(t, st)
			exec(t, `DELETE FROM nodes WHERE project = 'default' AND id = $1`, id)
			return id
		}, restore: boards.ProjectionError{Field: "missing"}, verify: contract.BrokenLink{Field: "missing"}},
		{name: "last event deleted", tamper: func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) string {
			id, _ := inputRow(t, st)
			exec(t, `DELETE FROM events WHERE project = 'default' AND seq = (SELECT max(seq) FROM events WHERE project = 'default')`)
			return id
		}, verify: contract.BrokenLink{Field: "head"}},
		{name: "capability blob swapped", tamper: func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) string {
			rel, err := st.Release(t.Context(), "test.grant", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			var files map[string][]byte
			if err := json.Unmarshal(rel.Content, &files); err != nil {
				t.Fatal(err)
			}
			files["capability.toml"] = append(files["capability.toml"], "\n# forged\n"...)
			swapped, err := json.Marshal(files)
			if err != nil {
				t.Fatal(err)
			}
			exec(t, `UPDATE blobs SET data = $1 WHERE hash = $2`, swapped, rel.ContentHash[:])
			return "release:test.grant@1.0.0"
		}, restore: boards.ProjectionError{Field: "content"}, verify: contract.BrokenLink{Field: "content"}},
	}
	for _, be := range tamperBackends {
		for _, tt := range tamperings {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				st, exec := be.open(t)
				f := newFixtureOn(t, st)
				ctx := t.Context()
				seedProject(t, f.a, f.admin)
				if rep, err := f.a.VerifyEvents(ctx, f.admin, "default"); err != nil || !rep.OK {
					t.Fatalf("VerifyEvents before tampering = %+v, %v", rep, err)
				}
				if err := newAuthorityOn(t, st, f.key).Restore(ctx); err != nil {
					t.Fatalf("Restore before tampering: %v", err)
				}

				node := tt.tamper(t, st, exec)

				err := newAuthorityOn(t, st, f.key).Restore(ctx)
				if tt.restore.Field == "" {
					if !errors.Is(err, store.ErrChainBroken) {
						t.Fatalf("Restore after tampering = %v, want %v", err, store.ErrChainBroken)
					}
				} else {
					checkProjectionError(t, err, "default", node, tt.restore.Field)
				}

				rep, err := f.a.VerifyEvents(ctx, f.admin, "default")
				if err != nil {
					t.Fatal(err)
				}
				if rep.OK || rep.Broken == nil {
					t.Fatalf("VerifyEvents after tampering = %+v, want a broken link", rep)
				}
				wantLink := tt.verify
				if wantLink.Field != "head" {
					wantLink.Node = node
				}
				if diff := cmp.Diff(wantLink, *rep.Broken, cmpopts.IgnoreFields(contract.BrokenLink{}, "Seq", "Want", "Got")); diff != "" {
					t.Errorf("VerifyEvents' broken link (-want +got):\n%s", diff)
				}
				// Offline, as docket events verify --data-dir checks it with no serve.
				off, err := boards.VerifyLog(ctx, st, "default", nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(rep.Broken, off.Broken); diff != "" {
					t.Errorf("offline verify differs from serve's (-serve +offline):\n%s", diff)
				}
			})
		}
	}
}

// checkProjectionError checks that err is a *boards.ProjectionError naming node of
// project and what differs.
func checkProjectionError(t *testing.T, err error, project contract.ProjectID, node, field string) {
	t.Helper()
	pe, ok := errors.AsType[*boards.ProjectionError](err)
	if !ok {
		t.Fatalf("Restore after tampering = %v, want a *boards.ProjectionError", err)
	}
	want := boards.ProjectionError{Project: project, Node: node, Field: field}
	if diff := cmp.Diff(want, *pe, cmpopts.IgnoreFields(boards.ProjectionError{}, "Seq", "Want", "Got")); diff != "" {
		t.Errorf("Restore's refusal (-want +got):\n%s", diff)
	}
}

// inputRow returns the id and stored data of the input fact's node.
func inputRow(t *testing.T, st store.Store) (string, []byte) {
	t.Helper()
	rows, err := st.Nodes(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if bytes.Contains(r.Data, []byte(`"predicate":"input"`)) {
			return r.ID, r.Data
		}
	}
	t.Fatalf("no input node among %d rows", len(rows))
	return "", nil
}

// TestAuthority_RestoreAdoptsNodeTable: a log written before board.recorded events
// existed holds nodes but no record; the first Restore adopts the node table as found,
// and from then on a forged row is named.
func TestAuthority_RestoreAdoptsNodeTable(t *testing.T) {
	for _, be := range tamperBackends {
		t.Run(be.name, func(t *testing.T) {
			st, exec := be.open(t)
			f := newFixtureOn(t, st)
			ctx := t.Context()
			// What an older version left: a node row and only the event of its change.
			legacy := []byte(`{"nodeId":"n-legacy","kind":"fact","createdBy":"member:test","tier":"asserted","atom":{"predicate":"input","args":{"job":"old"}},"seq":1}`)
			err := st.Update(ctx, func(tx store.Tx) error {
				if _, err := tx.LockHead(ctx, "default"); err != nil {
					return err
				}
				if err := tx.PutNode(ctx, "default", store.Node{ID: "n-legacy", Kind: "fact", Data: legacy}); err != nil {
					return err
				}
				_, err := tx.Append(ctx, store.NewEvent{Project: "default", Type: event.BatchApplied, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Actor: "member:test", Data: []byte(`{}`)})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := newAuthorityOn(t, st, f.key).Restore(ctx); err != nil {
				t.Fatalf("Restore of a log without records: %v", err)
			}
			evs, err := st.Events(ctx, "default", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if last := evs[len(evs)-1]; last.Type != event.BoardRecorded || !bytes.Contains(last.Data, []byte(`"snapshot":true`)) {
				t.Fatalf("last event after Restore = %s %s, want the adopted snapshot", last.Type, last.Data)
			}
			exec(t, `UPDATE nodes SET data = $1 WHERE project = 'default' AND id = 'n-legacy'`,
				bytes.Replace(legacy, []byte(`"asserted"`), []byte(`"attested"`), 1))
			checkProjectionError(t, newAuthorityOn(t, st, f.key).Restore(ctx), "default", "n-legacy", "tier")
		})
	}
}
