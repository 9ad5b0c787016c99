package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// backupCmd copies the data dir's SQLite store while serve runs (docs/deploy.md,
// "Backups"). A PostgreSQL store is refused with the pg_dump way.
type backupCmd struct {
	Out string `help:"The file to write (mode 0600); it must not exist." required:"" type:"path"`
	DB  string `name:"db" help:"The store: a SQLite path (default $DOCKET_HOME/docket.db); a postgres://… store is backed up with pg_dump."`
}

// pgDumpTeaching is how a PostgreSQL store is backed up and restored.
const pgDumpTeaching = "a PostgreSQL store is backed up by PostgreSQL: pg_dump --format=custom --file docket.dump 'postgres://…/docket', " +
	"and restored into a new, empty database with pg_restore --dbname 'postgres://…/docket_restored' docket.dump; then docket events verify --data-dir DIR --db 'postgres://…/docket_restored' checks it (docs/deploy.md)"

func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

func (c *backupCmd) Run(ctx context.Context, e *env) error {
	if isPostgres(c.DB) {
		return &contract.Error{Code: contract.CodeBackup, Teaching: pgDumpTeaching}
	}
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	src := c.DB
	if src == "" {
		src = filepath.Join(dir, dbFile)
	}
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		return contract.Errorf(contract.CodeBackup, "no SQLite store at %s; name it with --db PATH, or for a PostgreSQL store: %s", src, pgDumpTeaching)
	}
	if err := sqlite.Backup(ctx, src, c.Out); errors.Is(err, sqlite.ErrBackupExists) {
		return contract.Errorf(contract.CodeBackup, "%s already exists and a backup never replaces a file; name a new file with --out", c.Out)
	} else if err != nil {
		return err
	}
	fi, err := os.Stat(c.Out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "backed up %s to %s (%d bytes)\nkeep %s and %s of %s too, apart from it: a restore needs them (docs/deploy.md)\n",
		src, c.Out, fi.Size(), keyFile, signing.FileName, dir)
	return err
}

// restoreCmd makes a data dir's store from a backup, then verifies it as docket events
// verify --data-dir does.
type restoreCmd struct {
	Backup  string `arg:"" help:"A file docket backup wrote." type:"existingfile"`
	DataDir string `name:"data-dir" help:"The data dir to restore into (default $DOCKET_HOME); it holds the old installation's key and signing.key and no store yet." type:"path"`
}

func (c *restoreCmd) Run(ctx context.Context, e *env) error {
	e.Getenv = dataDirEnv(e.Getenv, c.DataDir)
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	for _, f := range []string{keyFile, signing.FileName} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return contract.Errorf(contract.CodeBackup, "%s has no %s; copy %s and %s from the old data dir (or where you keep them) into it first, mode 0600", dir, f, keyFile, signing.FileName)
		}
	}
	dst := filepath.Join(dir, dbFile)
	if err := sqlite.Backup(ctx, c.Backup, dst); errors.Is(err, sqlite.ErrBackupExists) {
		return contract.Errorf(contract.CodeBackup, "%s already holds a store (%s); restore into a data dir without one", dir, dbFile)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "restored %s into %s\n", c.Backup, dst)
	return verifyDataDir(ctx, e, dir, "", "", "")
}
