// Package floor builds and runs the team's floor programs beside benchmarks, so that a
// figure is measured beside its floor in the same run. The floor programs are kept beside the
// checkout, outside this repository; a benchmark that needs one is skipped when it is not there.
package floor

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// Binary builds the named floor (e.g. "datalog-floor") into b's temporary directory and
// returns the path of its executable, or skips b when the floor is not checked out. It keeps
// no cache of its own: the go command's build cache makes a second build of the same floor
// a link step, and a benchmark asks once per run.
func Binary(b testing.TB, name string) string {
	b.Helper()
	root, err := moduleRoot()
	if err != nil {
		b.Skipf("no module root: %v", err)
	}
	src := filepath.Join(root, "..", "shared", "floors", name)
	if _, err := os.Stat(filepath.Join(src, "main.go")); err != nil {
		b.Skipf("the %s is not checked out beside the repository (%s)", name, src)
	}
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return bin
}

// MedianMS runs the floor binary with args and returns the median it reports, in ms.
func MedianMS(b testing.TB, bin string, args ...string) float64 {
	b.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		b.Fatalf("%s %v: %v", bin, args, err)
	}
	var r struct {
		MedianMS float64 `json:"median_ms"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("%s: %v: %s", bin, err, out)
	}
	return r.MedianMS
}

// Median returns the median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
