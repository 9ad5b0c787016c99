package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/datadir"
)

// TestStart_ChildEnvironment: serve, the worker and every runtime docket start runs get
// the allow-list of started programs, not the shell's environment. Secret-looking
// variables set in the shell that ran docket start are in none of the children's
// environments as the kernel keeps them (/proc/PID/environ), while the basics and what
// --pass-env names are; docs/workbench.md.
func TestStart_ChildEnvironment(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skipf("no /proc to read a child's environment from: %v", err)
	}
	secrets := []string{"AWS_SECRET_ACCESS_KEY=aws-SECRET-9a8b7c", "OPENAI_API_KEY=sk-SECRET-1f2e3d", "anthropic_api_key=sk-ant-SECRET-4c5d",
		"GITHUB_TOKEN=ghp_SECRET-77", "DB_PASS=SECRET-pass", "HTTPS_PROXY=http://u:SECRET@proxy.invalid:3128"}
	s := newStartEnv(t)
	s.env = append(s.env, secrets...)
	s.env = append(s.env, "REPORT_MONTH=2026-11")
	start, _, _ := s.run(t, "--listen", "127.0.0.1:0", "--pass-env", "REPORT_MONTH")
	oa := providertest.NewOpenAI(t, calcScript(t, "calc-001"), "")
	s.docket(t, nil, "agent", "create", "calc-env")
	s.docket(t, nil, "agent", "profile", "set", "calc-env", "--provider", "openai", "--model-url", oa.URL+"/v1", "--model", "local-model")
	rt := s.profiles(t, "the runtime running", running("calc-env"))["calc-env"].Runtime

	pids := map[string]int{"runtime": rt.Pid}
	for _, child := range []string{"serve", "worker"} {
		m := regexp.MustCompile(`  ` + child + ` +pid (\d+)`).FindStringSubmatch(start.log())
		if m == nil {
			t.Fatalf("docket start printed no pid of %s:\n%s", child, start.log())
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		pids[child] = pid
	}
	for child, pid := range pids {
		t.Run(child, func(t *testing.T) {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if child == "worker" && errors.Is(err, fs.ErrPermission) {
				// The worker marks itself non-dumpable (docs/security.md): only a process
				// with CAP_SYS_PTRACE, such as root's, may read its environment.
				t.Skipf("the non-dumpable worker's environment is readable only with CAP_SYS_PTRACE: %v", err)
			}
			if err != nil {
				t.Fatalf("read the environment of %s (pid %d): %v", child, pid, err)
			}
			env := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
			for _, kv := range secrets {
				name, value, _ := strings.Cut(kv, "=")
				for _, got := range env {
					if n, _, _ := strings.Cut(got, "="); strings.EqualFold(n, name) || strings.Contains(got, value) {
						t.Errorf("%s's environment holds %s from docket start's shell", child, n)
					}
				}
			}
			for _, want := range []string{"REPORT_MONTH=2026-11", "PATH=" + os.Getenv("PATH")} {
				if !slices.Contains(env, want) {
					t.Errorf("%s's environment lacks %s: %q", child, want, env)
				}
			}
		})
	}
	s.stop(t, start)
}

// TestStart_PassEnvRefused: --pass-env takes only a plain variable name, never a DOCKET_
// one (docket start sets those for each child itself), and is refused before anything
// starts.
func TestStart_PassEnvRefused(t *testing.T) {
	s := newStartEnv(t)
	for _, name := range []string{"DOCKET_CONNECTION_KEY", "docket_home", "A=B", "1ABC", ""} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("docket", "start", "--listen", "127.0.0.1:0", "--pass-env", name)
			cmd.Env = s.env
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--pass-env") {
				t.Errorf("docket start --pass-env %q = %v\n%s\nwant a usage error naming --pass-env", name, err, out)
			}
			if _, err := os.Stat(filepath.Join(s.home, datadir.KeyFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("docket start initialized the data dir before refusing --pass-env %q (%v)", name, err)
			}

		})
	}
}
