package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestRun_HookLinesParseAsInTheWholeTree: the hook's command lines, parsed by the tree of
// the hook alone (hookRunCLI), come to what the whole command tree makes of them — the same
// output, the same exit, the same refusal of a delegate's credential — so the shortcut
// that keeps the hook's start short changes nothing a user or Claude Code sees.
func TestRun_HookLinesParseAsInTheWholeTree(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "hook.json")
	if err := os.WriteFile(config, []byte(`{"url":"http://127.0.0.1:1","tokenFile":"`+filepath.Join(dir, "missing.token")+`","root":"`+dir+`","wait":"5s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		token string // DOCKET_TOKEN
	}{
		{"pre with its config", []string{"hook", "claude-code", "pre", "--config", config}, ""},
		{"post with its config", []string{"hook", "claude-code", "post", "--config", config}, ""},
		{"pre with a wait", []string{"hook", "claude-code", "pre", "--config", config, "--wait", "2s"}, ""},
		{"pre without its config", []string{"hook", "claude-code", "pre"}, ""},
		{"pre with a config that is not there", []string{"hook", "claude-code", "pre", "--config", filepath.Join(dir, "nope.json")}, ""},
		{"pre with a bad wait", []string{"hook", "claude-code", "pre", "--config", config, "--wait", "soon"}, ""},
		{"pre with an unknown flag", []string{"hook", "claude-code", "pre", "--config", config, "--nope"}, ""},
		{"pre with an argument", []string{"hook", "claude-code", "pre", "--config", config, "extra"}, ""},
		{"pre's help", []string{"hook", "claude-code", "pre", "--help"}, ""},
		{"post's help", []string{"hook", "claude-code", "post", "-h"}, ""},
		{"the version flag", []string{"hook", "claude-code", "pre", "--version"}, ""},
		{"a delegate's credential", []string{"hook", "claude-code", "pre", "--config", config}, contract.PrefixDelegate + "x"},
		{"a delegate's credential, no config", []string{"hook", "claude-code", "post"}, contract.PrefixDelegate + "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := commandTree(tc.args).(*hookRunCLI); !ok {
				t.Fatalf("commandTree(%q) is not the hook's own tree", tc.args)
			}
			whole := runOutcome(t, &cli{}, tc.args, tc.token)
			own := runOutcome(t, &hookRunCLI{}, tc.args, tc.token)
			if own != whole {
				t.Errorf("docket %s\nthe hook's own tree: %+v\nthe whole tree:     %+v", strings.Join(tc.args, " "), own, whole)
			}
		})
	}
}

// TestCommandTree_OnlyTheHookLinesGetTheHookTree: every other command line, and one that
// names the hook's commands only after a flag or among other words, gets the whole tree.
func TestCommandTree_OnlyTheHookLinesGetTheHookTree(t *testing.T) {
	for _, args := range [][]string{
		nil, {"hook"}, {"hook", "claude-code"}, {"hook", "install", "claude-code", "."},
		{"hook", "claude-code", "prelude"}, {"--help", "hook", "claude-code", "pre"},
		{"help", "hook", "claude-code", "pre"}, {"version"}, {"serve"},
	} {
		if _, ok := commandTree(args).(*cli); !ok {
			t.Errorf("commandTree(%q) is not the whole tree", args)
		}
	}
}

// TestHookRunCLI_SameCommandsAsTheWholeTree: the hook's own tree declares its commands
// with the very tags of the whole tree, so their help and flags cannot drift apart.
func TestHookRunCLI_SameCommandsAsTheWholeTree(t *testing.T) {
	tag := func(v any, path ...string) reflect.StructTag {
		t.Helper()
		ty := reflect.TypeOf(v).Elem()
		var f reflect.StructField
		for _, name := range path {
			var ok bool
			if f, ok = ty.FieldByName(name); !ok {
				t.Fatalf("%s has no field %s", ty, name)
			}
			ty = f.Type
		}
		return f.Tag
	}
	for _, path := range [][]string{{"Hook"}, {"Hook", "ClaudeCode"}, {"VersionFlag"}} {
		if own, whole := tag(&hookRunCLI{}, path...), tag(&cli{}, path...); own != whole {
			t.Errorf("%s: the hook's tree tags it %q, the whole tree %q", strings.Join(path, "."), own, whole)
		}
	}
	if own, whole := reflect.TypeOf(hookRunCLI{}.Hook.ClaudeCode), reflect.TypeOf(cli{}.Hook.ClaudeCode); own != whole {
		t.Errorf("the hook's tree runs %s, the whole tree %s", own, whole)
	}
}

// TestRun_HookLinesBuildLittle: most of the hook's start was building the whole command
// tree; the hook's command line now allocates a fraction of what docket version does,
// which builds it (docs/coding-agents.md, "Speed"). Counted in allocations, not time.
func TestRun_HookLinesBuildLittle(t *testing.T) {
	config := filepath.Join(t.TempDir(), "missing.json") // the parser refuses it: nothing after parsing runs
	allocs := func(args ...string) float64 {
		return testing.AllocsPerRun(5, func() {
			e := &env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
			_ = run(context.Background(), args, e) // the outcome is TestRun_HookLinesParseAsInTheWholeTree's
		})
	}
	hook, version := allocs("hook", "claude-code", "pre", "--config", config), allocs("version")
	if hook*5 > version {
		t.Errorf("docket hook claude-code pre allocates %.0f times to parse its command line, docket version %.0f; want at most a fifth", hook, version)
	}
}

// outcome is what a command line came to: its output and exit code.
type outcome struct {
	Stdout, Stderr string
	Code           int
}

func runOutcome(t *testing.T, tree any, args []string, token string) outcome {
	t.Helper()
	var out, errw bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(k string) string {
		if k == "DOCKET_TOKEN" {
			return token
		}
		return ""
	}}
	err := runTree(t.Context(), tree, args, e)
	code := exitCode(err, &errw)
	return outcome{Stdout: out.String(), Stderr: errw.String(), Code: code}
}

// maxInitBytes bounds what Docket's own packages allocate in their initialisers, summed:
// every docket process runs them before main, the hook's twice per tool call included
// (docs/coding-agents.md, "Speed"). A pattern with a counted repetition ({0,63}) compiled
// at start took 60–100 KB and 50 µs alone. Counted in bytes, not time.
const maxInitBytes = 96 << 10

// TestStart_DocketInitsAllocateLittle runs docket --version with the runtime's init trace
// and sums what the packages under internal/ allocate before main.
func TestStart_DocketInitsAllocateLittle(t *testing.T) {
	bin := docketBinary(t) // it runs the docket binary as a process
	cmd := exec.CommandContext(t.Context(), bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var errw bytes.Buffer
	cmd.Stderr = &errw
	if err := cmd.Run(); err != nil {
		t.Fatalf("docket --version: %v\n%s", err, errw.String())
	}
	// init github.com/docketrun/docket/internal/contract @7.1 ms, 0.28 ms clock, 178272 bytes, 2555 allocs
	line := regexp.MustCompile(`^init (github\.com/docketrun/docket/internal/\S+) @.*, (\d+) bytes, \d+ allocs$`)
	total, seen := 0, 0
	var each []string
	for _, l := range strings.Split(errw.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			t.Fatal(err)
		}
		total, seen = total+n, seen+1
		each = append(each, fmt.Sprintf("%s %d", m[1], n))
	}
	if seen < 5 {
		t.Fatalf("the init trace names %d of Docket's packages; the trace's form changed?\n%s", seen, errw.String())
	}
	if total > maxInitBytes {
		t.Errorf("Docket's packages allocate %d bytes before main, over %d:\n%s", total, maxInitBytes, strings.Join(each, "\n"))
	}
}
