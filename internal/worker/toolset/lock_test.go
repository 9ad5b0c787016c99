package toolset_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// adderEnv, when set in a re-executed test binary to "DIR PREFIX", makes it add ten mcp
// Sources PREFIX-0 … PREFIX-9 to DIR's vault, one edit each.
const adderEnv = "TOOLSET_TEST_ADD"

func addMany(spec string) {
	dir, prefix, _ := strings.Cut(spec, " ")
	f := toolset.Files{Manifest: filepath.Join(dir, "tools.json"), Vault: filepath.Join(dir, "vault.json")}
	for i := range 10 {
		if _, err := f.AddMCPServer(toolset.MCPServer{Name: fmt.Sprintf("%s-%d", prefix, i), Command: []string{"srv"}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// TestApply_processes: two processes adding to one vault at once lose no edit.
func TestApply_processes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for _, prefix := range []string{"a", "b"} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), adderEnv+"="+dir+" "+prefix)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	v, err := worker.LoadVault(filepath.Join(dir, "vault.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(v.Names()); n != 20 {
		t.Errorf("the vault holds %d Sources after two processes added ten each, want 20: %v", n, v.Names())
	}
}
