// Package slowtest marks the tests that start servers, processes, browsers or databases,
// so that go test -short runs only the pure packages and the SQLite conformance suite
// (CONTRIBUTING.md, Running things).
package slowtest

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// Main is the TestMain of a package whose tests are slow: it runs them, or under -short
// skips every one of them, and exits with the tests' code.
func Main(m *testing.M) { os.Exit(Wrap(m).Run()) }

// Wrap returns m with a Run that skips every test of the package under -short, for a
// TestMain that hands m to another runner (testscript.Main) or does more before Run.
func Wrap(m *testing.M) M { return M{m: m} }

// M is a package's tests, run unless the tests run with -short.
type M struct{ m *testing.M }

// Run runs the tests and returns their exit code. Under -short it sets -test.skip to
// every name, so the package reports that it had no tests to run rather than passing
// tests it never ran; -run cannot bring one back (run such a test without -short).
func (s M) Run() int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		if err := flag.Set("test.skip", "."); err != nil {
			fmt.Fprintf(os.Stderr, "slowtest: cannot skip the tests under -short: %v\n", err)
			return 2
		}
	}
	return s.m.Run()
}

// RunAfter is Run for a package whose tests need something made first, such as the
// docket binary they run: setup runs only when the tests will, never under -short, and
// the cleanup it returns runs after them. A setup that fails is reported and fails the
// package without running its tests.
func (s M) RunAfter(setup func() (cleanup func(), err error)) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		return s.Run()
	}
	cleanup, err := setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "slowtest: the tests' setup failed: %v\n", err)
		return 1
	}
	defer cleanup()
	return s.Run()
}

// Skip skips t under -short: for a slow test in a package whose other tests are quick,
// such as the crash test of a store's conformance suite.
func Skip(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow (it starts a process, a server, a browser or a database); runs without -short")
	}
}
