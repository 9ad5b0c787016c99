package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersion: docket --version names the version, the commit and its date from the
// build information the Go toolchain records, and says plainly when there is no commit.
func TestBuildVersion(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name   string
		ldflag string
		info   *debug.BuildInfo
		want   string
	}{
		{"checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("3f2a9c1d0b7e55aa99aa", "2026-12-02T05:14:15Z", "false")},
			"dev (commit 3f2a9c1d0b7e, 2026-12-02T05:14:15Z)"},
		{"modified tree", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("3f2a9c1d0b7e55aa99aa", "2026-12-02T05:14:15Z", "true")},
			"dev (commit 3f2a9c1d0b7e, 2026-12-02T05:14:15Z, + local changes)"},
		{"go install at a version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs("abc", "2026-11-30T10:00:00Z", "false")},
			"v1.2.0 (commit abc, 2026-11-30T10:00:00Z)"},
		{"ldflags win", "v1.3.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs("abc", "2026-11-30T10:00:00Z", "false")},
			"v1.3.0 (commit abc, 2026-11-30T10:00:00Z)"},
		{"no vcs", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"dev (no commit recorded in this build)"},
		{"no build info", "dev", nil, "dev (no commit recorded in this build)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildVersion(tt.ldflag, tt.info); got != tt.want {
				t.Errorf("buildVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersion_BuiltBinary builds docket from this checkout as a person would and reads its
// --version: the commit git names for HEAD must be in it.
func TestVersion_BuiltBinary(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout to build from: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The go command records a commit only when .git is a directory: a linked worktree,
	// whose .git is a file, builds without one.
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("this checkout is a linked git worktree (.git is a file); the go command records no commit there")
	}
	bin := filepath.Join(t.TempDir(), "docket")
	// -buildvcs=true on the command line wins over a GOFLAGS that turns stamping off.
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docket %v: %v\n%s", args, err, out)
		}
		if want := "(commit " + strings.TrimSpace(string(head))[:12]; !strings.Contains(string(out), want) {
			t.Errorf("docket %v = %q, want it to contain %q", args, out, want)
		}
	}
}
