package claudecode_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/hook/claudecode"
)

// TestWriteSettings: Docket's hooks are written for every tool on the three events,
// every other setting and hook kept, an earlier Docket hook replaced rather than doubled.
func TestWriteSettings(t *testing.T) {
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
			if err := claudecode.WriteSettings(path, "/bin/docket", "/r/.claude/docket/hook.json", 2*time.Minute); err != nil {
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

// TestGitEnvironment: the git that install runs gets the
// allow-listed environment of a run adapter's program, not the shell's credentials nor a
// GIT_DIR that would point it at another repository; a real git behind a wrapper that
// records its environment.
func TestGitEnvironment(t *testing.T) {
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
	if err := claudecode.RefuseTracked(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if err := claudecode.ExcludeFromGit(t.Context(), dir, ".claude/docket/"); err != nil {
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

// gitRepo makes a real git repository for the install tests, or skips without git.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not on PATH: %v", err)
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRefuseTracked: a repository that tracks the settings file or Docket's directory is
// refused with a sentence naming the file and the way out; an untracked one, or a
// directory outside git, is accepted.
func TestRefuseTracked(t *testing.T) {
	tests := []struct {
		name    string
		git     bool
		tracked string // a file under the repository, added to the index
		want    string // in the error; "" for none
	}{
		{name: "not a git repository"},
		{name: "an untracked repository", git: true},
		{name: "other files tracked", git: true, tracked: ".claude/settings.json"},
		{name: "the settings tracked", git: true, tracked: ".claude/settings.local.json", want: ".claude/settings.local.json is tracked by git"},
		{name: "the docket directory tracked", git: true, tracked: ".claude/docket/hook.json", want: ".claude/docket is tracked by git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.git {
				dir = gitRepo(t)
			}
			if tt.tracked != "" {
				writeFile(t, filepath.Join(dir, tt.tracked), "{}\n")
				gitIn(t, dir, "add", "-f", "--", tt.tracked)
			}
			err := claudecode.RefuseTracked(t.Context(), dir)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("RefuseTracked = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "git rm --cached")):
				t.Errorf("RefuseTracked = %v, want an error saying %q and how to untrack it", err, tt.want)
			}
		})
	}
}

// TestExcludeFromGit: the hook's files are added to .git/info/exclude once: a second
// install, or a path the repository already ignores, adds nothing; outside git nothing
// is written.
func TestExcludeFromGit(t *testing.T) {
	paths := []string{".claude/settings.local.json", ".claude/docket/"}
	t.Run("twice adds once", func(t *testing.T) {
		dir := gitRepo(t)
		for range 2 {
			if err := claudecode.ExcludeFromGit(t.Context(), dir, paths...); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if n := strings.Count(string(b), "/"+p+"\n"); n != 1 {
				t.Errorf("exclude names /%s %d times, want once:\n%s", p, n, b)
			}
		}
	})
	t.Run("already ignored", func(t *testing.T) {
		dir := gitRepo(t)
		writeFile(t, filepath.Join(dir, ".gitignore"), ".claude/\n")
		before, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := claudecode.ExcludeFromGit(t.Context(), dir, paths...); err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if string(after) != string(before) {
			t.Errorf("exclude changed for ignored paths:\n%s", after)
		}
	})
	t.Run("outside git", func(t *testing.T) {
		dir := t.TempDir()
		if err := claudecode.ExcludeFromGit(t.Context(), dir, paths...); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); !os.IsNotExist(err) {
			t.Errorf("a .git appeared outside git: %v", err)
		}
	})
}
