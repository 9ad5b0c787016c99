// Package floorbench runs the datalog floor from benchmarks, so that the rule engine's
// figures are measured beside it in the same run. The floor programs are kept beside the
// checkout, outside this repository; a benchmark that needs one is skipped when it is not there.
package floorbench

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{} // floor name -> binary
)

// Binary builds the named floor (e.g. "datalog-floor") once per test binary and returns
// the path of its executable, or skips b when the floor is not checked out.
func Binary(b testing.TB, name string) string {
	b.Helper()
	mu.Lock()
	defer mu.Unlock()
	if bin, ok := built[name]; ok {
		return bin
	}
	root, err := moduleRoot()
	if err != nil {
		b.Skipf("no module root: %v", err)
	}
	src := filepath.Join(root, "..", "shared", "floors", name)
	if _, err := os.Stat(filepath.Join(src, "main.go")); err != nil {
		b.Skipf("the %s is not checked out beside the repository (%s)", name, src)
	}
	dir, err := os.MkdirTemp("", "floorbench")
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", name, err, out)
	}
	built[name] = bin
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
