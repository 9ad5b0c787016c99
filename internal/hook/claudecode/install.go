package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/environ"
)

// Where docket hook install writes in a repository, under <dir>/.claude/: Claude Code's
// settings that are not checked in, and Docket's own directory beside them (the hook's
// config and the Agent's token). Neither is ever a tracked file of the repository
// (docs/coding-agents.md).
const (
	SettingsName = "settings.local.json"
	DirName      = "docket"
)

// claudeHookEvents are the events whose hooks docket hook install writes, with the
// subcommand each runs.
var claudeHookEvents = []struct{ event, verb string }{
	{EventPre, "pre"}, {EventPost, "post"}, {EventPostFailure, "post"},
}

// WriteSettings writes Docket's hooks into Claude Code's local settings at path,
// keeping every other setting and hook there and replacing an earlier Docket hook.
func WriteSettings(path, self, config string, wait time.Duration) error {
	settings := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		if err := contract.CheckJSON(b); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("%s is not a JSON object of settings: %w", path, err)
		}
	}
	type command struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int64  `json:"timeout,omitempty"`
	}
	type group struct {
		Matcher string            `json:"matcher"`
		Hooks   []json.RawMessage `json:"hooks"`
	}
	hooks := map[string]json.RawMessage{}
	if raw, ok := settings["hooks"]; ok {
		if err := json.Unmarshal(raw, &hooks); err != nil {
			return fmt.Errorf("%s: hooks is not an object of events: %w", path, err)
		}
	}
	for _, h := range claudeHookEvents {
		var groups []group
		if raw, ok := hooks[h.event]; ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return fmt.Errorf("%s: hooks.%s is not a list of matchers: %w", path, h.event, err)
			}
		}
		kept := groups[:0]
		for _, g := range groups {
			ours := false
			for _, raw := range g.Hooks {
				ours = ours || bytes.Contains(raw, []byte(" hook claude-code "))
			}
			if !ours {
				kept = append(kept, g)
			}
		}
		cmd := command{Type: "command", Command: shellQuote(self) + " hook claude-code " + h.verb + " --config " + shellQuote(config)}
		if h.verb == "pre" {
			cmd.Timeout = int64((wait + 30*time.Second) / time.Second) // the hook denies at its bound, before Claude Code's timeout
		}
		cb, err := json.Marshal(cmd)
		if err != nil {
			return fmt.Errorf("encode the hook command: %w", err)
		}
		kept = append(kept, group{Matcher: "*", Hooks: []json.RawMessage{cb}})
		if hooks[h.event], err = json.Marshal(kept); err != nil {
			return fmt.Errorf("encode hooks.%s: %w", h.event, err)
		}
	}
	var err2 error
	if settings["hooks"], err2 = json.Marshal(hooks); err2 != nil {
		return fmt.Errorf("encode hooks: %w", err2)
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return datadir.WritePrivate(path, append(out, '\n'))
}

// shellQuote quotes s for the POSIX shell Claude Code runs hook commands with.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// RefuseTracked refuses to install into a repository that tracks the files the hook
// writes: a token or machine path must never land in a commit.
func RefuseTracked(ctx context.Context, dir string) error {
	if !inGit(ctx, dir) {
		return nil
	}
	for _, p := range []string{".claude/" + SettingsName, ".claude/" + DirName} {
		out, err := gitCommand(ctx, "-C", dir, "ls-files", "--", p).Output()
		if err != nil {
			return fmt.Errorf("ask git whether %s is tracked: %w", p, err)
		}
		if len(bytes.TrimSpace(out)) > 0 {
			return fmt.Errorf("%s is tracked by git in %s; the hook writes a token and this machine's paths there, so untrack it first (git rm --cached %s)", p, dir, p)
		}
	}
	return nil
}

// gitCommand is git with args, under the allow-listed environment a run adapter's
// program gets (environ.Allow): PATH, HOME, the locale and little else, so no
// credential of the shell and no GIT_DIR or GIT_CONFIG_* reaches it or redirects it.
func gitCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = environ.Allow(os.Environ(), nil)
	return cmd
}

func inGit(ctx context.Context, dir string) bool {
	return gitCommand(ctx, "-C", dir, "rev-parse", "--git-dir").Run() == nil
}

// ExcludeFromGit adds each path that git does not ignore yet to the repository's
// .git/info/exclude, which is never committed.
func ExcludeFromGit(ctx context.Context, dir string, paths ...string) error {
	if !inGit(ctx, dir) {
		return nil
	}
	out, err := gitCommand(ctx, "-C", dir, "rev-parse", "--git-path", "info/exclude").Output()
	if err != nil {
		return fmt.Errorf("find the repository's info/exclude: %w", err)
	}
	exclude := strings.TrimSpace(string(out))
	if !filepath.IsAbs(exclude) {
		exclude = filepath.Join(dir, exclude)
	}
	var add []string
	for _, p := range paths {
		if gitCommand(ctx, "-C", dir, "check-ignore", "-q", "--", p).Run() != nil {
			add = append(add, "/"+p)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(exclude), err)
	}
	f, err := os.OpenFile(exclude, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", exclude, err)
	}
	_, werr := fmt.Fprintf(f, "# docket hook install: a token and this machine's paths\n%s\n", strings.Join(add, "\n"))
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", exclude, err)
	}
	return nil
}
