package main

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/supervisor"
	"github.com/docketrun/docket/internal/workbench"
)

// TestReadme_PostgreSQL runs the README's "Run on PostgreSQL" commands against a fresh
// database on the server DOCKET_TEST_POSTGRES names: docket init --db, docket serve --db
// (a child process), and a clean event chain through it.
func TestReadme_PostgreSQL(t *testing.T) {
	server := os.Getenv("DOCKET_TEST_POSTGRES")
	if server == "" {
		t.Skip("DOCKET_TEST_POSTGRES is not set: set it to a postgres:// URL whose user may create databases")
	}
	dsn := freshDatabase(t, server)
	home := filepath.Join(t.TempDir(), "home")
	e, out := testEnv(map[string]string{"DOCKET_HOME": home, "DOCKET_PASSPHRASE": "correct horse battery"})
	if err := run(t.Context(), []string{"init", "--db", dsn}, e); err != nil {
		t.Fatalf("docket init --db: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, dbFile)); err == nil {
		t.Errorf("docket init --db postgres://… created a SQLite store too")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sup := supervisor.New(supervisor.Config{LogDir: filepath.Join(home, datadir.LogsDir)})
	t.Cleanup(func() {
		if err := sup.Close(context.Background()); err != nil {
			t.Errorf("stop serve: %v", err)
		}
	})
	c := workbench.ServeChild(exe, workbench.ChildEnviron(nil, "DOCKET_HOME="+home), false, "127.0.0.1:0")
	c.Args = append(c.Args, "--db", dsn)
	if err := sup.Start(c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := waitHealthy(t.Context(), e, home, 30*time.Second); err != nil {
		log, _ := os.ReadFile(sup.LogPath("serve"))
		t.Fatalf("docket serve --db: %v\n%s", err, log)
	}
	out.Reset()
	if err := run(t.Context(), []string{"events", "verify"}, e); err != nil || !strings.Contains(out.String(), "chain ok") {
		t.Errorf("docket events verify = %v\n%s", err, out)
	}
}

// freshDatabase creates a database on server, dropped when t ends, and returns its DSN.
func freshDatabase(t *testing.T, server string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("DOCKET_TEST_POSTGRES: %v", err)
	}
	name := "docket_readme_" + strings.ToLower(rand.Text())
	admin, err := pgx.Connect(t.Context(), server)
	if err != nil {
		t.Fatalf("connect to DOCKET_TEST_POSTGRES: %v", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx := context.Background() // the test's context has ended by now
		admin, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("connect to drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
