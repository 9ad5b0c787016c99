//go:build linux

package run_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/run"
	"github.com/docketrun/docket/internal/worker/hardening"
	"golang.org/x/sys/unix"
)

// hardenedChild is set in the environment of this test binary when it runs as the
// hardened worker of TestHarden_parentEnvironUnreadable.
const hardenedChild = "DOCKET_TEST_HARDENED_WORKER"

// A program the worker starts cannot read the worker's Connection key from
// /proc/$PPID/environ once the worker is non-dumpable. The worker here
// is this test binary run again as a real process, holding the key in its environment.
func TestHarden_parentEnvironUnreadable(t *testing.T) {
	if root := os.Getenv(hardenedChild); root != "" {
		if os.Getuid() == 0 {
			// Root reads any /proc/<pid>/environ (CAP_SYS_PTRACE): be an ordinary user, as a
			// worker is, and dumpable again, as a worker started by that user is.
			if err := syscall.Setgid(65534); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Setuid(65534); err != nil {
				t.Fatal(err)
			}
			if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := hardening.Process(); err != nil {
			t.Fatal(err)
		}
		def := worker.Tool{Adapter: worker.AdapterRun, Kind: contract.ToolKindRun, Entry: "bin/peek"}
		out, err := (&run.Adapter{Root: root}).Execute(context.Background(), worker.Call{Tool: "acme.peek@1", Def: def, Args: contract.Args{}})
		if err != nil || out.Status != worker.StatusOK || len(out.Rows) != 1 {
			t.Fatalf("Execute = %+v, %v", out, err)
		}
		os.Stdout.WriteString("seen=" + out.Rows[0]["seen"].Str() + "\n")
		return
	}
	root := t.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} {
		if err := os.Chmod(d, 0o755); err != nil { // the worker may run as nobody, below
			t.Fatal(err)
		}
	}
	script(t, root, "peek", `n=$(tr '\0' '\n' < /proc/$PPID/environ 2>/dev/null | grep -c dkt_con_secret); printf '{"seen":"%s"}\n' "$n"`)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHarden_parentEnvironUnreadable$", "-test.v")
	cmd.Env = append(os.Environ(), hardenedChild+"="+root, "DOCKET_CONNECTION_KEY=dkt_con_secret")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hardened worker: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "seen=0\n") {
		t.Errorf("the program read the worker's environment through /proc/$PPID/environ:\n%s", b)
	}
}
