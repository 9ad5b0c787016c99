package authority_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

func TestAuthority_VerifyEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, st)
	ctx := t.Context()
	if _, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	rep, err := f.a.VerifyEvents(ctx, f.admin, "default")
	if err != nil || !rep.OK || rep.Seq != 3 {
		t.Fatalf("VerifyEvents = %+v, %v; want ok at seq 3", rep, err)
	}
	st.Close()

	// Tamper with the second event behind the store's back.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"DROP TRIGGER events_no_update",
		"UPDATE events SET type = 'member.deleted' WHERE project = 'default' AND seq = 2",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := newAuthorityOn(t, st, f.key)
	rep, err = g.VerifyEvents(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	want := contract.ChainReport{Project: "default", Seq: 1, Broken: &contract.BrokenLink{Seq: 2, Field: "hash"}}
	if diff := cmp.Diff(want, rep, cmp.FilterPath(func(p cmp.Path) bool {
		s := p.String()
		return s == "Broken.Want" || s == "Broken.Got"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("VerifyEvents after tampering (-want +got):\n%s", diff)
	}
}
