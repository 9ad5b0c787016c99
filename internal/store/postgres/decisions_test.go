package postgres_test

import (
	"os"
	"testing"

	"github.com/docketrun/docket/internal/store/storetest"
)

func TestStore_Decisions(t *testing.T) {
	storetest.RunDecisions(t, harness)
}

// TestStore_RequestsMigration checks migration 0004 on a database taken back before it.
func TestStore_RequestsMigration(t *testing.T) {
	storetest.RunRequestsMigration(t, harness, os.DirFS("migrations"), "DROP TRIGGER agents_decider_kind ON agents", "DROP FUNCTION docket_decider_stays", "DROP FUNCTION docket_decider_kind CASCADE")
}
