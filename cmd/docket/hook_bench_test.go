package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/floor"
)

// hookBenchPerAgent is how many calls the benchmark sends through one Agent's hook before
// it installs the next: one Agent may report 120 hook calls in a minute (docs/security.md,
// "Bounds"), and a call over the bound would be a fast denial, not the free call measured.
const hookBenchPerAgent = 100

// BenchmarkHook_ClaudeCodePreFree times `docket hook claude-code pre` answering a free
// call (a Read inside the repository that the hook policy in force lets run) as Claude
// Code runs it: a new process of the built binary, the PreToolUse JSON on stdin, from exec
// until the answer is read and the process has exited, against a real `docket serve` on
// loopback that records the call on its Operation before it answers. It reports the p50
// and p99 of those wall times per call. Each round also execs the least Go program there
// is (it prints a line), the floor of any hook written in Go, so x-floor is what the hook
// costs over a Go process's start, measured in the same rounds: -bench
// Hook_ClaudeCodePreFree -count 5. DOCKET_HOOK_BEFORE names another build of docket (the
// build before) to time in the same rounds against the same serve (x-before). The figures
// are in benchmarks/README.md, "The coding-agent hook's start".
func BenchmarkHook_ClaudeCodePreFree(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "docket")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	hello := filepath.Join(dir, "hello")
	if err := os.MkdirAll(hello, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"{}\\n\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(hello, name), []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	floorBin := filepath.Join(dir, "floor-go-exec")
	build := exec.Command("go", "build", "-o", floorBin, ".")
	build.Dir = hello
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build the floor: %v\n%s", err, out)
	}
	before := os.Getenv("DOCKET_HOOK_BEFORE")

	r := newHookBenchRig(b, bin, filepath.Join(dir, "home"))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		now := r.next(b)
		var then hookBenchCall
		if before != "" {
			then = r.next(b)
		}
		// The two builds take turns at going first, so that neither is always the one
		// that runs right after the Agent's install or the floor.
		if before != "" && r.sent%4 == 0 {
			r.beforeMS = append(r.beforeMS, then.run(b, before))
		}
		b.StartTimer()
		r.ms = append(r.ms, now.run(b, bin))
		b.StopTimer()
		if before != "" && r.sent%4 != 0 {
			r.beforeMS = append(r.beforeMS, then.run(b, before))
		}
		start := time.Now()
		if out, err := exec.Command(floorBin).Output(); err != nil || len(out) == 0 {
			b.Fatalf("%s: %v %q", floorBin, err, out)
		}
		r.floorMS = append(r.floorMS, float64(time.Since(start).Microseconds())/1000)
		b.StartTimer()
	}
	p50, floorP50 := floor.Median(r.ms), floor.Median(r.floorMS)
	b.ReportMetric(p50, "p50-wall-ms/call")
	b.ReportMetric(hookBenchQuantile(r.ms, 0.99), "p99-wall-ms/call")
	b.ReportMetric(floorP50, "floor-p50-ms")
	b.ReportMetric(p50/floorP50, "x-floor")
	if before != "" {
		beforeP50 := floor.Median(r.beforeMS)
		b.ReportMetric(beforeP50, "before-p50-ms")
		b.ReportMetric(hookBenchQuantile(r.beforeMS, 0.99), "before-p99-ms")
		b.ReportMetric(p50/beforeP50, "x-before")
	}
}

// hookBenchQuantile is the q quantile of xs by the nearest rank (0 for none).
func hookBenchQuantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[min(len(xs)-1, int(math.Ceil(q*float64(len(xs))))-1)]
}

// hookBenchRig is a data dir with a running docket serve and the Agents whose hooks the
// benchmark has installed so far.
type hookBenchRig struct {
	bin, home string
	env       []string
	agents    int    // Agents made so far
	calls     int    // calls sent through the last one's hook
	config    string // the last Agent's hook config
	repo      string // and its repository
	sent      int    // calls sent in all

	ms, beforeMS, floorMS []float64 // each call's exec-to-exit time, in ms
}

func newHookBenchRig(b *testing.B, bin, home string) *hookBenchRig {
	r := &hookBenchRig{bin: bin, home: home}
	if err := os.MkdirAll(home, 0o700); err != nil {
		b.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCKET_") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, "DOCKET_HOME="+home, "DOCKET_PASSPHRASE=correct horse battery")
	r.docket(b, "init")
	srv := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--log-level", "warn")
	srv.Env = r.env
	var out bytes.Buffer
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		if err := srv.Wait(); err != nil {
			b.Errorf("docket serve: %v\n%s", err, out.String())
		}
	})
	r.docket(b, "doctor", "--wait", "30s")
	return r
}

func (r *hookBenchRig) docket(b *testing.B, args ...string) string {
	b.Helper()
	cmd := exec.Command(r.bin, args...)
	cmd.Env, cmd.Dir = r.env, r.home
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("docket %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// next returns the next free call to send: a Read of a file in the repository of an
// Agent that has sent fewer than hookBenchPerAgent calls, made when the last one has.
func (r *hookBenchRig) next(b *testing.B) hookBenchCall {
	b.Helper()
	if r.config == "" || r.calls == hookBenchPerAgent {
		r.install(b)
	}
	r.calls++
	r.sent++
	in := fmt.Sprintf(`{"session_id":"bench","transcript_path":"/tmp/bench.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_%d"}`,
		r.repo, filepath.Join(r.repo, "main.go"), r.sent)
	return hookBenchCall{config: r.config, in: in}
}

// install makes the next Agent, publishes a hook policy under which Read is free for it,
// and installs its hook in a repository of its own.
func (r *hookBenchRig) install(b *testing.B) {
	b.Helper()
	name := fmt.Sprintf("coder%d", r.agents)
	r.agents++
	policy := fmt.Sprintf("[hook_policy]\ndefault = \"decide\"\n\n[[hook_policy.profile]]\nagent = %q\ndefault = \"decide\"\nfree = [\"Read\"]\n", name)
	file := filepath.Join(r.home, name+".toml")
	if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
		b.Fatal(err)
	}
	r.docket(b, "policy", "publish", file)
	r.repo = filepath.Join(r.home, name)
	if err := os.MkdirAll(r.repo, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.repo, "main.go"), []byte("package main\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	r.docket(b, "hook", "install", "claude-code", r.repo, "--agent", name)
	r.config, r.calls = filepath.Join(r.repo, ".claude", hookDirName, hookConfigName), 0
}

// hookBenchCall is one free call: the hook's config and its PreToolUse JSON.
type hookBenchCall struct{ config, in string }

// run runs bin's hook on the call, checks that it was allowed, and returns its
// exec-to-exit time in ms.
func (c hookBenchCall) run(b *testing.B, bin string) float64 {
	b.Helper()
	cmd := exec.Command(bin, "hook", "claude-code", "pre", "--config", c.config)
	cmd.Stdin = strings.NewReader(c.in)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := float64(time.Since(start).Microseconds()) / 1000
	if err != nil || !strings.Contains(out.String(), `"permissionDecision":"allow"`) {
		b.Fatalf("%s hook claude-code pre: %v\n%s", bin, err, out.String())
	}
	return took
}
