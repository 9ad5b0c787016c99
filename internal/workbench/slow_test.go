package workbench

import (
	"testing"

	"github.com/docketrun/docket/internal/slowtest"
)

// TestMain skips this package's tests under -short: they start servers, processes or
// databases (CONTRIBUTING.md, Running things).
func TestMain(m *testing.M) { slowtest.Main(m) }
