package postgres_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/store/storetest"
)

func TestStore_Decisions(t *testing.T) {
	storetest.RunDecisions(t, harness)
}

// TestStore_RequestsMigration takes a database back to before migration 0004 — the
// decisions table as 0002 made it, no requests table — and opens it again.
func TestStore_RequestsMigration(t *testing.T) {
	decisions, err := os.ReadFile(filepath.Join("migrations", "0002_decisions.sql"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunRequestsMigration(t, harness, []string{"DROP TABLE decisions", "DROP TABLE requests", string(decisions),
		"DELETE FROM schema_migrations WHERE version = 4"})
}
