package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// testEnv returns an env whose environment is vars, with output captured.
func testEnv(vars map[string]string) (*env, *bytes.Buffer) {
	var out bytes.Buffer
	return &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(k string) string { return vars[k] }}, &out
}

// TestServe_CrashDuringWrites kills a child docket serve with SIGKILL at random points of
// a stream of writes. After each restart the event chain must verify and every write the
// server acknowledged must be present.
func TestServe_CrashDuringWrites(t *testing.T) {
	bin := docketBinary(t) // it starts several server processes
	home := filepath.Join(t.TempDir(), "home")
	vars := map[string]string{"DOCKET_HOME": home, "DOCKET_PASSPHRASE": "correct horse battery"}
	e, out := testEnv(vars)
	if err := run(t.Context(), []string{"init"}, e); err != nil {
		t.Fatalf("docket init: %v\n%s", err, out)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	var acked []string
	const rounds = 8
	for round := range rounds {
		srv := startServe(t, bin, home)
		cl := waitClient(t, e)
		killAfter := 1 + rng.IntN(15)

		// The writer streams agent creations until the server dies; each name it records
		// was acknowledged with 201.
		ackc := make(chan string) // closed by the writer when it stops
		go func() {
			defer close(ackc)
			for i := 0; ; i++ {
				name := fmt.Sprintf("r%d-a%d", round, i)
				var at contract.AgentToken
				if err := cl.do(context.Background(), http.MethodPost, projectPath("default", "agents"), contract.CreateAgentRequest{Name: name}, &at); err != nil {
					return
				}
				ackc <- name
			}
		}()
		n := 0
		for name := range ackc {
			acked = append(acked, name)
			if n++; n == killAfter {
				srv.kill(t) // the writer has the next request in flight, or about to be
			}
		}
		srv.wait()
	}

	srv := startServe(t, bin, home)
	defer srv.stop(t)
	cl := waitClient(t, e)
	var rep contract.ChainReport
	if err := cl.do(t.Context(), http.MethodGet, projectPath("default", "events", "verify"), nil, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("after %d crashes the chain is broken: %+v", rounds, rep.Broken)
	}
	var page contract.Page[contract.Agent]
	if err := cl.do(t.Context(), http.MethodGet, projectPath("default", "agents"), nil, &page); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, a := range page.Items {
		have[a.Name] = true
	}
	for _, name := range acked {
		if !have[name] {
			t.Errorf("acknowledged agent %s is missing after the crashes", name)
		}
	}
	if len(acked) < rounds {
		t.Errorf("only %d writes acknowledged over %d rounds", len(acked), rounds)
	}
	t.Logf("%d acknowledged writes, %d agents, %d events", len(acked), len(page.Items), rep.Seq)
}

// child is a docket serve process.
type child struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	once   sync.Once
	waited chan struct{} // closed when the process has been waited for
}

// docketBinary returns the docket binary for a test that runs it as a process, skipping
// the test when there is none.
func docketBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("docket") // installed on PATH by testscript.Main
	if err != nil {
		t.Skipf("docket binary not on PATH: %v", err)
	}
	return bin
}

// startServe starts docket serve on the data dir home, with extra flags.
func startServe(t *testing.T, bin, home string, args ...string) *child {
	t.Helper()
	// A killed server leaves its url file behind; remove it so the client waits for the
	// new server's instead of dialling the dead one.
	os.Remove(filepath.Join(home, urlFile))
	c := &child{cmd: exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...)...),
		out: &bytes.Buffer{}, waited: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "DOCKET_HOME="+home)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.kill(t); c.wait() })
	return c
}

func (c *child) kill(t *testing.T) {
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !strings.Contains(err.Error(), "finished") {
		t.Logf("kill serve: %v", err)
	}
}

func (c *child) wait() {
	c.once.Do(func() { c.cmd.Wait(); close(c.waited) })
}

func (c *child) stop(t *testing.T) {
	c.cmd.Process.Signal(os.Interrupt)
	c.wait()
	if c.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("serve exited %d after an interrupt:\n%s", c.cmd.ProcessState.ExitCode(), c.out)
	}
}

func waitClient(t *testing.T, e *env) *client {
	t.Helper()
	dir, err := dataDir(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := waitHealthy(t.Context(), e, dir, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	cl, err := newClient(e)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
