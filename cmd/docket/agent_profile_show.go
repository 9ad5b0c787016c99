package main

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

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
		{"allows", allowText(p.Allow)},
		{"blueprint", blueprintText(p)},
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

// blueprintText says which blueprint a profile was copied from and whether it changed
// since.
func blueprintText(p contract.AgentProfile) string {
	if p.Blueprint == nil {
		return "none (set field by field)"
	}
	s := p.Blueprint.Name + " at " + p.Blueprint.Digest.String()
	switch p.BlueprintState {
	case contract.BlueprintChanged:
		s += " (the blueprint changed since; this profile keeps its copy)"
	case contract.BlueprintRemoved:
		s += " (the blueprint was removed since; this profile keeps its copy)"
	}
	return s
}
