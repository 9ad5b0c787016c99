package sqlite_test

import (
	"testing"

	"github.com/docketrun/docket/internal/store/storetest"
)

func TestStore_Decisions(t *testing.T) {
	storetest.RunDecisions(t, harness)
}
