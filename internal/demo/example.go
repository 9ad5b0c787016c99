package demo

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
)

// What the verified-calculation example needs of a project, besides its capability: the
// Source its Actions read and write, with the predicates it may attest, and the task
// that runs it (docs/quickstart.md).
const (
	ExampleSource  = demoSource
	ExampleTask    = demoTask
	ExampleCase    = "verified_calculation"
	ExampleKeyJSON = `{"job_id": "calc-001"}`
)

// ExampleWords are the predicates the example's Source may attest.
var ExampleWords = []string{"calculation_input", "output_file"}

// Example is the verified-calculation example laid out in one directory.
type Example struct {
	Capability string // the capability's directory, for docket capability install
	Workspace  string // the Source's root: data/input.json is the job's input
	Script     string // the scripted model's script.json
}

// LayOutExample writes the example under dir (created if missing): the capability in
// capability/, with write_result needing a person when approve; the workspace in
// workspace/ with data/input.json; and script.json. Files already there are replaced.
func LayOutExample(dir string, approve bool) (Example, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Example{}, err
	}
	ex := Example{Capability: filepath.Join(abs, "capability"), Workspace: filepath.Join(abs, "workspace"), Script: filepath.Join(abs, "script.json")}
	files := verifiedcalculation.Files
	out := map[string]string{ // embedded name -> where it goes
		"capability/capability.toml": filepath.Join(ex.Capability, "capability.toml"),
		"data/input.json":            filepath.Join(ex.Workspace, "data", "input.json"),
		"script.json":                ex.Script,
	}
	rules, err := fs.Glob(files, "capability/*.dl")
	if err != nil {
		return Example{}, err
	}
	for _, r := range rules {
		out[r] = filepath.Join(ex.Capability, filepath.Base(r))
	}
	for name, to := range out {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return Example{}, fmt.Errorf("read the example's %s: %w", name, err)
		}
		if approve && name == "capability/capability.toml" {
			if b, err = writeNeedsPerson(b); err != nil {
				return Example{}, err
			}
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return Example{}, fmt.Errorf("lay out the example: %w", err)
		}
		if err := datadir.WritePrivate(to, b); err != nil {
			return Example{}, fmt.Errorf("lay out the example: %w", err)
		}
	}
	return ex, nil
}

// ExampleTools returns the Tools the example's Actions run, each with the digest a worker
// reading manifest advertises for it, read through the worker's own code as the demo's
// locks are.
func ExampleTools(manifest []byte) (map[contract.ToolID]string, error) {
	m, err := worker.ParseManifest(manifest, map[string]worker.Adapter{worker.AdapterWorkspace: workspace.Adapter{}})
	if err != nil {
		return nil, fmt.Errorf("read the tool manifest: %w", err)
	}
	out := map[contract.ToolID]string{}
	for _, id := range demoTools {
		_, digest, ok := m.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("the worker has no tool %s", id)
		}
		out[id] = digest
	}
	return out, nil
}
