package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
)

// ErrBackupExists is returned by [Backup] when dst is already there: a backup never
// replaces a file.
var ErrBackupExists = errors.New("sqlite: the backup's file already exists")

// Backup writes a consistent copy of the SQLite database at src to the new file dst
// (mode 0600) with VACUUM INTO: one read transaction, so a docket serve writing src
// meanwhile goes on and the copy holds every transaction committed before it began,
// WAL included. src is opened read-only and never migrated; a src that is not a SQLite
// database is an error.
func Backup(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("back up %s: %w", src, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("back up %s to %s: %w", src, dst, ErrBackupExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("back up %s to %s: %w", src, dst, err)
	}
	base := (&url.URL{Scheme: "file", Path: src}).String()
	db, err := sql.Open("sqlite", fmt.Sprintf("%s?mode=ro&_pragma=busy_timeout(%d)", base, busyTimeout.Milliseconds()))
	if err != nil {
		return fmt.Errorf("back up %s: %w", src, err)
	}
	defer db.Close()
	// The copy is made private before SQLite writes a byte of it: it holds what the
	// store holds.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("back up %s to %s: %w", src, dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("back up %s to %s: %w", src, dst, err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		if rerr := os.Remove(dst); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("back up %s to %s: %w", src, dst, err)
	}
	return nil
}
