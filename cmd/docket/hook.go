package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/hook"
	"github.com/docketrun/docket/internal/hook/claudecode"
	"github.com/docketrun/docket/internal/worker"
)

// hookCmd governs an external coding agent's tool calls through its hook
// (docs/coding-agents.md).
type hookCmd struct {
	Install    hookInstallCmd    `cmd:"" help:"Install Docket's hook for a coding agent in a repository, with an Agent's token file."`
	ClaudeCode hookClaudeCodeCmd `cmd:"" name:"claude-code" help:"What Claude Code runs: the pre- and post-tool hooks."`
}

type hookClaudeCodeCmd struct {
	Pre  hookPreCmd  `cmd:"" help:"PreToolUse: report the call to Docket and print its decision (allow or deny)."`
	Post hookPostCmd `cmd:"" help:"PostToolUse: record what the call came to (exit, output digest)."`
}

// Files docket hook install writes beside the coding agent's settings, under
// <dir>/.claude/docket/; neither is ever a tracked file of the repository.
const (
	hookDirName    = "docket"
	hookConfigName = "hook.json"
	hookTokenName  = "agent.token"
	claudeSettings = "settings.local.json" // Claude Code's project settings that are not checked in
)

// hookConfig is what the hook reads at each call: where serve is, the Agent's token
// file, the repository root and how long a call waits for a decision.
type hookConfig struct {
	URL       string `json:"url,omitempty"`     // a fixed server URL (DOCKET_URL at install)
	DataDir   string `json:"dataDir,omitempty"` // else the data dir whose url file names serve
	TokenFile string `json:"tokenFile"`
	Root      string `json:"root"`
	Wait      string `json:"wait"` // a Go duration
}

type hookInstallCmd struct {
	clientFlags
	CLI          string        `arg:"" name:"cli" enum:"claude-code" help:"The coding agent: claude-code."`
	Dir          string        `arg:"" type:"existingdir" help:"The repository the coding agent works in."`
	Agent        string        `required:"" help:"The Agent whose Operations record the coding agent's calls; created unless it exists."`
	ReplaceToken bool          `help:"The Agent exists: replace its token (its old token stops working, its pending requests close)."`
	Wait         time.Duration `help:"How long a call waits for a decision before it is denied." default:"5m"`
}

func (c *hookInstallCmd) Run(ctx context.Context, e *env) error {
	if c.Wait <= 0 || c.Wait > contract.MaxHookWait {
		return &exitError{code: exitUsage, err: fmt.Errorf("--wait %s: wait 1s to %s for a decision", c.Wait, contract.MaxHookWait)}
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	if err := refuseTracked(ctx, dir); err != nil {
		return err
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	at, err := hookAgentToken(ctx, cl, c.Project, c.Agent, c.ReplaceToken)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the docket binary for the hook's command: %w", err)
	}
	claude := filepath.Join(dir, ".claude")
	private := filepath.Join(claude, hookDirName)
	if err := os.MkdirAll(private, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", private, err)
	}
	cfg := hookConfig{TokenFile: filepath.Join(private, hookTokenName), Root: dir, Wait: c.Wait.String()}
	if cfg.URL = e.Getenv(datadir.URLEnv); cfg.URL == "" {
		if cfg.DataDir, err = dataDir(e); err != nil {
			return err
		}
		if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
			return err
		}
	}
	if err := writePrivate(cfg.TokenFile, []byte(at.Token+"\n")); err != nil {
		return fmt.Errorf("write the Agent's token file: %w", err)
	}
	cb, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the hook's config: %w", err)
	}
	configPath := filepath.Join(private, hookConfigName)
	if err := writePrivate(configPath, append(cb, '\n')); err != nil {
		return fmt.Errorf("write the hook's config: %w", err)
	}
	settings := filepath.Join(claude, claudeSettings)
	if err := writeClaudeSettings(settings, self, configPath, c.Wait); err != nil {
		return err
	}
	if err := excludeFromGit(ctx, dir, ".claude/"+claudeSettings, ".claude/"+hookDirName+"/"); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, map[string]any{"agent": at.Agent, "settings": settings, "config": configPath, "tokenFile": cfg.TokenFile})
	}
	_, err = fmt.Fprintf(e.Stdout, "hook installed for claude-code in %s\n  agent     %s (%s)\n  settings  %s\n  token     %s (0600, not tracked by git)\n"+
		"every tool call of Claude Code in this repository is now an Operation of %s; the hook policy in force says which run freely (docket policy show hook)\n",
		dir, at.Agent.Name, at.Agent.ID, settings, cfg.TokenFile, at.Agent.Name)
	return err
}

// hookAgentToken creates the Agent name with a hook token, which reaches only the hook
// routes, or — with replace — replaces the token of the Agent of that name by one.
func hookAgentToken(ctx context.Context, cl *client, project, name string, replace bool) (contract.AgentToken, error) {
	var at contract.AgentToken
	err := cl.do(ctx, http.MethodPost, projectPath(project, "agents"), contract.CreateAgentRequest{Name: name, Kind: string(contract.AgentKindAgent), Hook: true}, &at)
	if contract.CodeOf(err) == contract.CodeAlreadyExists {
		if !replace {
			return at, fmt.Errorf("the Agent %s exists; pass --replace-token to give this hook a new token (its old one stops working), or name another Agent", name)
		}
		err = cl.do(ctx, http.MethodPost, projectPath(project, "agents", name, "token")+"?for=hook", nil, &at)
	}
	return at, err
}

// claudeHookEvents are the events whose hooks docket hook install writes, with the
// subcommand each runs.
var claudeHookEvents = []struct{ event, verb string }{
	{claudecode.EventPre, "pre"}, {claudecode.EventPost, "post"}, {claudecode.EventPostFailure, "post"},
}

// writeClaudeSettings writes Docket's hooks into Claude Code's local settings at path,
// keeping every other setting and hook there and replacing an earlier Docket hook.
func writeClaudeSettings(path, self, config string, wait time.Duration) error {
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
	return writePrivate(path, append(out, '\n'))
}

// shellQuote quotes s for the POSIX shell Claude Code runs hook commands with.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// refuseTracked refuses to install into a repository that tracks the files the hook
// writes: a token or machine path must never land in a commit.
func refuseTracked(ctx context.Context, dir string) error {
	if !inGit(ctx, dir) {
		return nil
	}
	for _, p := range []string{".claude/" + claudeSettings, ".claude/" + hookDirName} {
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
// program gets (worker.ScrubEnv): PATH, HOME, the locale and little else, so no
// credential of the shell and no GIT_DIR or GIT_CONFIG_* reaches it or redirects it.
func gitCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = worker.ScrubEnv(os.Environ(), nil)
	return cmd
}

func inGit(ctx context.Context, dir string) bool {
	return gitCommand(ctx, "-C", dir, "rev-parse", "--git-dir").Run() == nil
}

// excludeFromGit adds each path that git does not ignore yet to the repository's
// .git/info/exclude, which is never committed.
func excludeFromGit(ctx context.Context, dir string, paths ...string) error {
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

// hookRunFlags are the flags of what the coding agent runs.
type hookRunFlags struct {
	Config string        `required:"" type:"existingfile" help:"The hook's config, as docket hook install wrote it."`
	Wait   time.Duration `help:"How long a call waits for a decision; default the config's." env:"DOCKET_HOOK_WAIT"`
}

// maxHookStdin bounds what a coding agent sends a hook: the tool input, or the tool's
// response, and the envelope around it.
const maxHookStdin = contract.MaxHookOutput + contract.MaxHookInput + 64<<10

type hookPreCmd struct{ hookRunFlags }

// Run answers Claude Code's PreToolUse. Whatever fails, it prints a denial and exits 0:
// a hook that exits with an error lets the call run.
func (c *hookPreCmd) Run(ctx context.Context, e *env) error {
	p := claudecode.Protocol{}
	h, err := c.hook(e, p)
	var out []byte
	if err == nil {
		var in []byte
		if in, err = readHookStdin(e.Stdin); err == nil {
			out, err = h.Pre(ctx, in)
		}
	}
	if err != nil {
		if out, err = p.Verdict(false, "Docket's hook could not run ("+err.Error()+"); the call was not run — ask the user to run docket hook install again"); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", out)
	return err
}

type hookPostCmd struct{ hookRunFlags }

// Run records Claude Code's PostToolUse or PostToolUseFailure.
func (c *hookPostCmd) Run(ctx context.Context, e *env) error {
	h, err := c.hook(e, claudecode.Protocol{})
	if err != nil {
		return err
	}
	in, err := readHookStdin(e.Stdin)
	if err != nil {
		return err
	}
	return h.Post(ctx, in)
}

func readHookStdin(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxHookStdin+1))
	if err != nil {
		return nil, fmt.Errorf("read the hook's input: %w", err)
	}
	if len(b) > maxHookStdin {
		return nil, fmt.Errorf("the hook's input is over %d bytes", maxHookStdin)
	}
	return b, nil
}

// hook builds the hook from its config file.
func (c *hookRunFlags) hook(e *env, p hook.Protocol) (hook.Hook, error) {
	b, err := os.ReadFile(c.Config)
	if err != nil {
		return hook.Hook{}, fmt.Errorf("read the hook's config: %w", err)
	}
	var cfg hookConfig
	if err := contract.DecodeStrict(b, &cfg); err != nil {
		return hook.Hook{}, fmt.Errorf("%s: %w", c.Config, err)
	}
	wait := c.Wait
	if wait == 0 {
		if wait, err = time.ParseDuration(cfg.Wait); err != nil {
			return hook.Hook{}, fmt.Errorf("%s: wait: %w", c.Config, err)
		}
	}
	base := cfg.URL
	if base == "" {
		if base, err = datadir.ServerURL(func(string) string { return "" }, cfg.DataDir); err != nil {
			return hook.Hook{}, fmt.Errorf("find docket serve: %w", err)
		}
	}
	tok, err := os.ReadFile(cfg.TokenFile)
	if err != nil {
		return hook.Hook{}, fmt.Errorf("read the Agent's token file: %w", err)
	}
	// The hook takes no proxy from its environment, which the coding agent sets: its token
	// goes only to the server its config names.
	tr := &http.Transport{}
	if d, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = d.Clone()
	}
	tr.Proxy = nil
	api := &apiclient.Client{URL: base, Token: strings.TrimSpace(string(tok)), HTTP: &http.Client{Transport: tr}}
	return hook.Hook{Protocol: p, Authority: api, Root: cfg.Root, Wait: wait, Protected: hookProtected(cfg, c.Config)}, nil
}

// hookProtected are the paths no tool call may touch, free or decided: the hook's token
// file and its config directory, Claude Code's settings that hold the hook, and the
// repository's git config and git hooks, which run commands of their own.
func hookProtected(cfg hookConfig, config string) []string {
	return []string{cfg.TokenFile, filepath.Dir(config), filepath.Join(cfg.Root, ".claude", claudeSettings),
		filepath.Join(cfg.Root, ".git", "config"), filepath.Join(cfg.Root, ".git", "hooks")}
}
