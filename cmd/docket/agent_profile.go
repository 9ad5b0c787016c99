package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
)

// agentProfileCmd manages Agents' profiles (docs/workbench.md).
type agentProfileCmd struct {
	Set  agentProfileSetCmd  `cmd:"" help:"Set an Agent's profile: provider, model URL, model, key file, budgets, instructions, or a copy of a blueprint."`
	Show agentProfileShowCmd `cmd:"" help:"Show an Agent's profile and the state of its runtime."`
	List agentProfileListCmd `cmd:"" help:"List the project's profiles and the state of each runtime."`
}

// modelFlags are what a profile and a blueprint both say of the model an Agent runs and
// what it may use.
type modelFlags struct {
	Provider     string   `help:"Model provider: openai, anthropic, emulated or scripted." enum:",openai,anthropic,emulated,scripted" default:""`
	ModelURL     string   `help:"The model endpoint's root URL (default: the provider's public endpoint)." name:"model-url"`
	Model        string   `help:"The model name the endpoint knows."`
	Script       string   `help:"The scripted provider's script." type:"path"`
	MaxTurns     int      `help:"Stop a run after this many model turns (0: no bound)." name:"max-turns"`
	MaxTokens    int64    `help:"Stop a run once input plus output tokens reach this (0: no bound)." name:"max-tokens"`
	MaxUSD       float64  `help:"Stop a run once it costs this many US dollars (0: no bound)." name:"max-usd"`
	Window       int      `help:"The model's context window in tokens (0: the runtime's own for a known model, else 32768)." name:"context-window"`
	Instructions string   `help:"An AGENTS.md-style file given to the model as its standing instructions; its digest is recorded." type:"path"`
	Workspace    string   `help:"The directory the Agent works in, on the runtime's machine: its AGENTS.md and CLAUDE.md files from the root down, and its skills (.docket/skills, .claude/skills), go to the model." type:"path"`
	Thinking     string   `help:"Ask a reasoning model to think: on, off, or default (the provider's own)." enum:"default,on,off" default:"default"`
	Attempts     int      `help:"Attempts of one model request when it fails for a reason that means later (429, 5xx, a cut answer), the first included (0: the runtime's default, 5)." name:"model-attempts"`
	RetryWait    int      `help:"Seconds one model request may wait in all between its attempts (0: the runtime's default, 120)." name:"model-retry-wait-seconds"`
	FirstByte    int      `help:"Seconds a model request may wait for its answer's first byte (0: the runtime's default, 300)." name:"model-first-byte-seconds"`
	Idle         int      `help:"Seconds a model's answer may pause between two reads (0: the runtime's default, 120)." name:"model-idle-seconds"`
	CaseTypes    []string `help:"A Case Type the Agent may open and work in (repeat, or comma-separate; none: any)." name:"allow-case-type"`
	Actions      []string `help:"An Action the Agent may apply: a capability's, a locked Tool's direct Action, or docket.ask, docket.decide, docket.retry (repeat, or comma-separate; none: any)." name:"allow-action"`
}

// spec is the profile the flags say; the key file and the enabled switch are the
// caller's.
func (f *modelFlags) spec() (contract.ProfileSpec, error) {
	spec := contract.ProfileSpec{Provider: f.Provider, ModelURL: f.ModelURL, Model: f.Model, Script: f.Script,
		MaxTurns: f.MaxTurns, MaxTokens: f.MaxTokens, MaxUSD: f.MaxUSD, ContextWindow: f.Window,
		ModelAttempts: f.Attempts, ModelRetryWaitSeconds: f.RetryWait, ModelFirstByteSeconds: f.FirstByte, ModelIdleSeconds: f.Idle}
	if f.Thinking != "default" {
		spec.Thinking = f.Thinking
	}
	if len(f.CaseTypes) > 0 || len(f.Actions) > 0 {
		spec.Allow = &contract.AllowList{CaseTypes: f.CaseTypes, Actions: f.Actions}
	}
	if f.Instructions != "" {
		b, err := os.ReadFile(f.Instructions)
		if err != nil {
			return spec, &usageError{err: fmt.Errorf("read the instructions: %w", err)}
		}
		spec.InstructionsFile, spec.InstructionsDigest = f.Instructions, contract.Sum(b).String()
	}
	if f.Workspace != "" {
		abs, err := filepath.Abs(f.Workspace)
		if err != nil {
			return spec, err
		}
		spec.Workspace = abs
	}
	return spec, nil
}

// agentProfileSetCmd replaces an Agent's profile. The key never goes to the authority:
// only the path of the file that holds it, beside the runtime.
type agentProfileSetCmd struct {
	clientFlags
	Name string `arg:"" help:"The Agent, by name or id."`
	modelFlags
	Blueprint string `help:"Copy the project's blueprint NAME (docket agent blueprint list): its model, instructions and allow-list; give only --key-file, --disabled and --no-check beside it."`
	KeyFile   string `help:"File holding the model key, mode 0600, on the machine docket start runs on (none: the endpoint takes no key)." name:"key-file"`
	Disabled  bool   `help:"Keep the profile but do not run the Agent under docket start."`
	NoCheck   bool   `help:"Save without checking the model: by default one small request (a completion of one token) goes to the model endpoint first, and the profile is refused with the endpoint's error." name:"no-check"`
}

func (c *agentProfileSetCmd) Help() string {
	return `Set replaces the whole profile. The key file and the instructions are files on the machine
where docket start runs the Agent's runtime; a relative path in the profile is taken from
that machine's data dir. The model key itself is never sent: keep it in the key file, mode
0600. A loopback OpenAI-compatible server needs no key.

--allow-case-type and --allow-action limit what the Agent may use: the authority lists
every other Action blocked (not_in_profile) in its View and refuses it. --blueprint copies
a blueprint instead of the model flags, and records which (docs/agents.md, Blueprints).

Before saving, one small request (a completion of one token) goes to the model endpoint, with
the key from the key file; a profile whose model does not answer is refused with the
endpoint's error (host unreachable, a refused key, an unknown model). --no-check saves
without it: for a model server that is not up yet, or a key file on another machine.

Examples:
  docket agent profile set calc --provider openai --model-url http://127.0.0.1:8080/v1 --model qwen2.5
  docket agent profile set calc --provider anthropic --model claude-sonnet-4-5 --key-file ~/.docket/agents/calc/model.key --max-usd 2
  docket agent profile set calc --provider openai --model gpt-4.1 --key-file k --instructions AGENTS.md --disabled
  docket agent profile set calc --provider openai --model gpt-4.1 --key-file k --allow-case-type verified_calculation --allow-action write_output
  docket agent profile set calc --blueprint researcher --key-file ~/.docket/agents/calc/model.key
  docket agent profile set calc --provider openai --model-url http://127.0.0.1:8080/v1 --model qwen2.5 --no-check
  docket agent profile set think --provider openai --model-url https://api.deepseek.com/chat/completions --model deepseek-reasoner --key-file k --thinking on --model-attempts 8`
}

func (c *agentProfileSetCmd) Run(ctx context.Context, e *env) error {
	keyFile := ""
	if c.KeyFile != "" {
		// A key file named here is on this machine: the profile keeps its absolute path.
		abs, err := filepath.Abs(c.KeyFile)
		if err != nil {
			return err
		}
		keyFile = abs
	}
	if c.Blueprint != "" {
		return c.fromBlueprint(ctx, e, keyFile)
	}
	if c.Provider == "" {
		return &usageError{err: fmt.Errorf("name the model with --provider (and --model, --model-url), or copy a blueprint with --blueprint NAME")}
	}
	spec, err := c.spec()
	if err != nil {
		return err
	}
	spec.KeyFile, spec.Enabled = keyFile, !c.Disabled
	if !c.NoCheck {
		if err := checkModel(ctx, spec); err != nil {
			return err
		}
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	p, err := cl.api.SetProfile(ctx, c.Project, c.Name, spec)
	if err != nil {
		return err
	}
	return printProfile(e, c.clientFlags, p)
}

// checkModel sends the profile's model endpoint one small request before the profile is
// saved, so a dead URL, a refused key or an unknown model is said now, with the endpoint's
// own words, rather than when a task fails (docs/workbench.md, Agent profiles). The key
// is read from the key file here, on the machine the profile names it on; it is sent
// only to the model endpoint and is in no error.
func checkModel(ctx context.Context, spec contract.ProfileSpec) error {
	var key agent.Key
	if spec.KeyFile != "" {
		k, err := agent.LoadKey(spec.KeyFile, func(string) string { return "" })
		if err != nil {
			return fmt.Errorf("%w (or save with --no-check when the key file is on another machine)", err)
		}
		key = k
	}
	err := runner.Probe(ctx, runner.ProbeConfig{Provider: spec.Provider, URL: spec.ModelURL, Model: spec.Model, Key: key})
	if err != nil {
		return fmt.Errorf("the profile was not saved: %w; to save it anyway, add --no-check", err)
	}
	return nil
}
