package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWriteClaudeSettings: Docket's hooks are written for every tool on the three events,
// every other setting and hook kept, an earlier Docket hook replaced rather than doubled.
func TestWriteClaudeSettings(t *testing.T) {
	tests := []struct {
		name, before string
		wantOther    int // hooks of others kept on PreToolUse
	}{
		{name: "no settings yet"},
		{name: "other settings and hooks are kept", wantOther: 1,
			before: `{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"lint"}]}]}}`},
		{name: "an earlier Docket hook is replaced",
			before: `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"'/old/docket' hook claude-code pre --config 'x'"}]}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.local.json")
			if tt.before != "" {
				if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeClaudeSettings(path, "/bin/docket", "/r/.claude/docket/hook.json", 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Model string `json:"model"`
				Hooks map[string][]struct {
					Matcher string `json:"matcher"`
					Hooks   []struct {
						Command string `json:"command"`
						Timeout int    `json:"timeout"`
					} `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tt.before, `"model"`) && got.Model != "x" {
				t.Errorf("the model setting was lost: %s", b)
			}
			for _, ev := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"} {
				groups := got.Hooks[ev]
				other := 0
				if ev == "PreToolUse" {
					other = tt.wantOther
				}
				if len(groups) != other+1 {
					t.Fatalf("%s has %d matchers, want %d: %s", ev, len(groups), other+1, b)
				}
				ours := groups[len(groups)-1]
				verb := map[string]string{"PreToolUse": "pre"}[ev]
				if verb == "" {
					verb = "post"
				}
				want := "'/bin/docket' hook claude-code " + verb + " --config '/r/.claude/docket/hook.json'"
				if diff := cmp.Diff(want, ours.Hooks[0].Command); ours.Matcher != "*" || diff != "" {
					t.Errorf("%s: matcher %q, command (-want +got):\n%s", ev, ours.Matcher, diff)
				}
				if ev == "PreToolUse" && ours.Hooks[0].Timeout != 150 {
					t.Errorf("the pre hook's timeout is %ds, want the bound and 30s", ours.Hooks[0].Timeout)
				}
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("settings mode %v, %v; want 0600", fi, err)
			}
		})
	}
}

// TestHookInstall_RefusesTrackedSettings: a repository that tracks the settings file the
// hook writes is refused before anything is written or any credential read.
func TestHookInstall_RefusesTrackedSettings(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not on PATH: %v", err)
	}
	repo := t.TempDir()
	settings := filepath.Join(repo, ".claude", "settings.local.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-f", ".")
	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"hook", "install", "claude-code", "--agent", "coder", repo},
		&env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "is tracked by git") {
		t.Errorf("install into a repository tracking its settings: %v, want a refusal that names it", err)
	}
	if b, err := os.ReadFile(settings); err != nil || string(b) != "{}\n" {
		t.Errorf("the tracked settings became %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude", "docket")); err == nil {
		t.Errorf("the refused install wrote its token dir")
	}
}

// TestHookInstall_GitEnvironment: the git that docket hook install runs gets the
// allow-listed environment of a run adapter's program, not the shell's credentials nor a
// GIT_DIR that would point it at another repository; a real git behind a wrapper that
// records its environment.
func TestHookInstall_GitEnvironment(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH:", err)
	}
	dir, bin := t.TempDir(), t.TempDir()
	if out, err := exec.Command(real, "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	seen := filepath.Join(t.TempDir(), "env")
	wrapper := "#!/bin/sh\nenv >> '" + seen + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	if err := refuseTracked(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if err := excludeFromGit(t.Context(), dir, ".claude/docket/"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the wrapper never ran: %v", err)
	}
	for _, v := range []string{"AWS_SECRET_ACCESS_KEY", "GIT_DIR"} {
		if strings.Contains(string(b), v+"=") {
			t.Errorf("git was started with %s", v)
		}
	}
	if !strings.Contains(string(b), "PATH=") {
		t.Errorf("git was started without PATH:\n%s", b)
	}
	ex, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if err != nil || !strings.Contains(string(ex), "/.claude/docket/") {
		t.Errorf("the repository's exclude = %q, %v; want the hook's directory in it", ex, err)
	}
}
