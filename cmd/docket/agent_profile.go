package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
)

// agentProfileCmd manages Agents' profiles (docs/workbench.md).
type agentProfileCmd struct {
	Set  agentProfileSetCmd  `cmd:"" help:"Set an Agent's profile: provider, model URL, model, key file, budgets, instructions."`
	Show agentProfileShowCmd `cmd:"" help:"Show an Agent's profile and the state of its runtime."`
	List agentProfileListCmd `cmd:"" help:"List the project's profiles and the state of each runtime."`
}

// agentProfileSetCmd replaces an Agent's profile. The key never goes to the authority:
// only the path of the file that holds it, beside the runtime.
type agentProfileSetCmd struct {
	clientFlags
	Name         string  `arg:"" help:"The Agent, by name or id."`
	Provider     string  `help:"Model provider: openai, anthropic, emulated or scripted." enum:"openai,anthropic,emulated,scripted" required:""`
	ModelURL     string  `help:"The model endpoint's root URL (default: the provider's public endpoint)." name:"model-url"`
	Model        string  `help:"The model name the endpoint knows."`
	KeyFile      string  `help:"File holding the model key, mode 0600, on the machine docket start runs on (none: the endpoint takes no key)." name:"key-file"`
	Script       string  `help:"The scripted provider's script." type:"path"`
	MaxTurns     int     `help:"Stop a run after this many model turns (0: no bound)." name:"max-turns"`
	MaxTokens    int64   `help:"Stop a run once input plus output tokens reach this (0: no bound)." name:"max-tokens"`
	MaxUSD       float64 `help:"Stop a run once it costs this many US dollars (0: no bound)." name:"max-usd"`
	Instructions string  `help:"An AGENTS.md-style file given to the model as its standing instructions; its digest is recorded." type:"path"`
	Workspace    string  `help:"The directory the Agent works in, on the runtime's machine: its AGENTS.md and CLAUDE.md files from the root down, and its skills (.docket/skills, .claude/skills), go to the model." type:"path"`
	Thinking     string  `help:"Ask a reasoning model to think: on, off, or default (the provider's own)." enum:"default,on,off" default:"default"`
	Attempts     int     `help:"Attempts of one model request when it fails for a reason that means later (429, 5xx, a cut answer), the first included (0: the runtime's default, 5)." name:"model-attempts"`
	RetryWait    int     `help:"Seconds one model request may wait in all between its attempts (0: the runtime's default, 120)." name:"model-retry-wait-seconds"`
	Disabled     bool    `help:"Keep the profile but do not run the Agent under docket start."`
	NoCheck      bool    `help:"Save without checking the model: by default one small request (a completion of one token) goes to the model endpoint first, and the profile is refused with the endpoint's error." name:"no-check"`
}

func (c *agentProfileSetCmd) Help() string {
	return `Set replaces the whole profile. The key file and the instructions are files on the machine
where docket start runs the Agent's runtime; a relative path in the profile is taken from
that machine's data dir. The model key itself is never sent: keep it in the key file, mode
0600. A loopback OpenAI-compatible server needs no key.

Before saving, one small request (a completion of one token) goes to the model endpoint, with
the key from the key file; a profile whose model does not answer is refused with the
endpoint's error (host unreachable, a refused key, an unknown model). --no-check saves
without it: for a model server that is not up yet, or a key file on another machine.

Examples:
  docket agent profile set calc --provider openai --model-url http://127.0.0.1:8080/v1 --model qwen2.5
  docket agent profile set calc --provider anthropic --model claude-sonnet-4-5 --key-file ~/.docket/agents/calc/model.key --max-usd 2
  docket agent profile set calc --provider openai --model gpt-4.1 --key-file k --instructions AGENTS.md --disabled
  docket agent profile set calc --provider openai --model gpt-4.1 --key-file k --workspace ~/src/shop
  docket agent profile set calc --provider openai --model-url http://127.0.0.1:8080/v1 --model qwen2.5 --no-check`
}

func (c *agentProfileSetCmd) Run(ctx context.Context, e *env) error {
	spec := contract.ProfileSpec{Provider: c.Provider, ModelURL: c.ModelURL, Model: c.Model, Script: c.Script,
		MaxTurns: c.MaxTurns, MaxTokens: c.MaxTokens, MaxUSD: c.MaxUSD, Enabled: !c.Disabled,
		ModelAttempts: c.Attempts, ModelRetryWaitSeconds: c.RetryWait}
	if c.Thinking != "default" {
		spec.Thinking = c.Thinking
	}
	if c.KeyFile != "" {
		// A key file named here is on this machine: the profile keeps its absolute path.
		abs, err := filepath.Abs(c.KeyFile)
		if err != nil {
			return err
		}
		spec.KeyFile = abs
	}
	if c.Instructions != "" {
		b, err := os.ReadFile(c.Instructions)
		if err != nil {
			return &usageError{err: fmt.Errorf("read the instructions: %w", err)}
		}
		spec.InstructionsFile, spec.InstructionsDigest = c.Instructions, contract.Sum(b).String()
	}
	if c.Workspace != "" {
		abs, err := filepath.Abs(c.Workspace)
		if err != nil {
			return err
		}
		spec.Workspace = abs
	}
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

type agentProfileShowCmd struct {
	clientFlags
	Name string `arg:"" help:"The Agent, by name or id."`
}

func (c *agentProfileShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	p, err := cl.api.Profile(ctx, c.Project, c.Name)
	if err != nil {
		return err
	}
	return printProfile(e, c.clientFlags, p)
}

type agentProfileListCmd struct {
	clientFlags
}

func (c *agentProfileListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	ps, err := cl.api.Profiles(ctx, c.Project)
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, ps)
	}
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, []string{p.AgentName, p.Provider, dash(p.Model), enabledText(p.Enabled), runtimeText(p.Runtime)})
	}
	return writeList(e, []string{"agent", "provider", "model", "enabled", "runtime"}, rows,
		"no profiles in project "+c.Project+"; set one with docket agent profile set NAME --provider …")
}

func printProfile(e *env, f clientFlags, p contract.AgentProfile) error {
	if f.json() {
		return printJSON(e.Stdout, p)
	}
	lines := [][2]string{
		{"agent", p.AgentName + " (" + string(p.Agent) + ")"},
		{"provider", p.Provider},
		{"model url", dash(p.ModelURL)},
		{"wire", dash(agent.Wire(agent.ProviderKind(p.Provider), p.ModelURL))},
		{"model", dash(p.Model)},
		{"key file", dash(p.KeyFile)},
		{"script", dash(p.Script)},
		{"budgets", budgetText(p.ProfileSpec)},
		{"thinking", cmp.Or(p.Thinking, "the provider's default")},
		{"retries", retryText(p.ProfileSpec)},
		{"instructions", dash(strings.TrimSpace(p.InstructionsFile + " " + p.InstructionsDigest))},
		{"workspace", dash(p.Workspace)},
		{"enabled", enabledText(p.Enabled)},
		{"set", string(p.SetBy) + " at " + p.SetAt.Format("2006-01-02T15:04:05Z")},
		{"runtime", runtimeText(p.Runtime)},
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(e.Stdout, "%-13s %s\n", l[0], l[1]); err != nil {
			return err
		}
	}
	return nil
}

func enabledText(on bool) string {
	if on {
		return "yes"
	}
	return "no"
}

func budgetText(s contract.ProfileSpec) string {
	var parts []string
	if s.MaxTurns > 0 {
		parts = append(parts, strconv.Itoa(s.MaxTurns)+" turns")
	}
	if s.MaxTokens > 0 {
		parts = append(parts, strconv.FormatInt(s.MaxTokens, 10)+" tokens")
	}
	if s.MaxUSD > 0 {
		parts = append(parts, "$"+strconv.FormatFloat(s.MaxUSD, 'f', -1, 64))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ") + " a run"
}

// runtimeText is a runtime's last reported state, with why it is not running.
func runtimeText(st *contract.RuntimeStatus) string {
	if st == nil {
		return "never started (docket start runs enabled profiles)"
	}
	s := st.State
	if st.Pid > 0 {
		s += fmt.Sprintf(" pid %d", st.Pid)
	}
	if st.Restarts > 0 {
		s += fmt.Sprintf(", %d restarts", st.Restarts)
	}
	if st.Reason != "" {
		s += ": " + st.Reason
	}
	return s + " (reported " + st.Reported.Format("2006-01-02T15:04:05Z") + ")"
}

func retryText(s contract.ProfileSpec) string {
	attempts, wait := strconv.Itoa(agent.DefaultRetryAttempts)+" attempts", agent.DefaultRetryWait.String()
	if s.ModelAttempts > 0 {
		attempts = strconv.Itoa(s.ModelAttempts) + " attempts"
	}
	if s.ModelRetryWaitSeconds > 0 {
		wait = (time.Duration(s.ModelRetryWaitSeconds) * time.Second).String()
	}
	return attempts + ", " + wait + " of back-off in all"
}
