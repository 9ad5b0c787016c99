package tables

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Migrate applies the migrations in fsys that c's database has not applied yet, in order.
// Files are named NNNN_what.sql; NNNN is the version recorded in schema_migrations. c must
// be one transaction that the caller holds exclusively (SQLite: BEGIN IMMEDIATE;
// PostgreSQL: under an advisory lock), so that instances starting together apply each
// migration once. A file is run as one Exec, so it may hold several statements.
func Migrate(ctx context.Context, c Conn, fsys fs.FS) error {
	if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY,
		name    TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied, err := list(ctx, c, func(r Row) (int64, error) {
		var v int64
		return v, r.Scan(&v)
	}, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("migrate: read applied versions: %w", err)
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return fmt.Errorf("migrate: list migrations: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		prefix, _, ok := strings.Cut(name, "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if !ok || err != nil {
			return fmt.Errorf("migrate: %s is not named NNNN_what.sql", name)
		}
		if slices.Contains(applied, v) {
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := c.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", name, err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, v, name); err != nil {
			return fmt.Errorf("migrate: record %s: %w", name, err)
		}
	}
	return nil
}
