package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/docketrun/docket/internal/slowtest"
)

// TestMain registers the docket binary for testscript, so that scripts run the real
// command the way people do.
func TestMain(m *testing.M) {
	// Under -short the end-to-end tests are skipped (CONTRIBUTING.md, Running things).
	testscript.Main(slowtest.Wrap(m), map[string]func(){
		"docket":                 main,
		"docket-test-mcp-server": testMCPServer, // the MCP server of worker_tools.txtar
	})
}

// TestScripts runs the command-line end-to-end tests in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("DOCKET_HOME", e.WorkDir+"/.docket")
			return nil
		},
	})
}
