// Package e2e holds cmd/docket's longest end-to-end tests: real docket serve, docket
// start and docket worker processes, with a browser, PostgreSQL and model servers, set up
// and driven the way a person does. They are a package of their own, apart from the tests
// that call package main, so that each package holds about half of their time and
// stays further inside go test's per-package timeout (CONTRIBUTING.md, Running things).
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/slowtest"
)

// TestMain builds the docket binary once and puts its directory first on PATH, so that
// every test runs the real command (exec.Command("docket", …)). Under -short the tests
// are skipped and nothing is built (CONTRIBUTING.md, Running things).
func TestMain(m *testing.M) {
	os.Exit(slowtest.Wrap(m).RunAfter(buildDocket))
}

// buildDocket builds github.com/docketrun/docket/cmd/docket into a temporary directory
// and puts that directory first on PATH; the cleanup removes it. It is built without VCS
// stamping, like a test binary, so that a checkout git cannot read still builds.
func buildDocket() (func(), error) {
	dir, err := os.MkdirTemp("", "docket-e2e-")
	if err != nil {
		return nil, fmt.Errorf("make the directory of the docket binary: %w", err)
	}
	cleanup := func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: remove the docket binary's directory: %v\n", err)
		}
	}
	build := exec.Command("go", "build", "-buildvcs=false", "-o", filepath.Join(dir, "docket"), "github.com/docketrun/docket/cmd/docket")
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return nil, fmt.Errorf("go build the docket binary: %w\n%s", err, out)
	}
	if err := os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		cleanup()
		return nil, fmt.Errorf("put the docket binary on PATH: %w", err)
	}
	return cleanup, nil
}
