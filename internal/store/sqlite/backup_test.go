package sqlite_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestBackup: a backup of an open store that keeps writing holds every event committed
// before it (the write-ahead log included) and none after, verifies as the store does,
// is 0600, and never replaces a file; a file that is not a database leaves no backup.
func TestBackup(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "docket.db"))
	appendEvent := func() {
		t.Helper()
		if err := s.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", Type: "t", At: t0, Data: json.RawMessage(`{}`)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	appendEvent()
	appendEvent()
	out := filepath.Join(dir, "backup.db")
	if err := sqlite.Backup(t.Context(), s.Path(), out); err != nil {
		t.Fatal(err)
	}
	appendEvent() // the store goes on after the backup

	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	b := openAt(t, out)
	head, err := b.Verify(t.Context(), "p1")
	if err != nil || head.Seq != 2 {
		t.Errorf("the backup's head = %+v, %v; want seq 2, verified", head, err)
	}

	if err := sqlite.Backup(t.Context(), s.Path(), out); !errors.Is(err, sqlite.ErrBackupExists) {
		t.Errorf("a backup over an existing file = %v, want ErrBackupExists", err)
	}
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database, but long enough to be read as one"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.db")
	if err := sqlite.Backup(t.Context(), notDB, bad); err == nil {
		t.Error("a backup of a file that is not a database succeeded")
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed backup left %s: %v", bad, err)
	}
}
