package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
