package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/hook"
	"github.com/docketrun/docket/internal/hook/claudecode"
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
	hookDirName    = claudecode.DirName
	hookConfigName = "hook.json"
	hookTokenName  = "agent.token"
	claudeSettings = claudecode.SettingsName
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
	if err := claudecode.RefuseTracked(ctx, dir); err != nil {
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
	if err := claudecode.WriteSettings(settings, self, configPath, c.Wait); err != nil {
		return err
	}
	if err := claudecode.ExcludeFromGit(ctx, dir, ".claude/"+claudeSettings, ".claude/"+hookDirName+"/"); err != nil {
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
