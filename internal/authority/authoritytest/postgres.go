package authoritytest

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// PostgresDSN creates a fresh database on the DOCKET_TEST_POSTGRES server, dropped when
// t ends, and returns its DSN; without the variable it skips t.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("DOCKET_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("DOCKET_TEST_POSTGRES is not set: set it to a postgres:// URL to run this test on PostgreSQL")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("DOCKET_TEST_POSTGRES: %v", err)
	}
	name := "docket_test_" + strings.ToLower(rand.Text())
	exec := func(ctx context.Context, sql string) error {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql)
		return err
	}
	if err := exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
