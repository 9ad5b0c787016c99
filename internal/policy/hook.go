package policy

import (
	"slices"

	"github.com/BurntSushi/toml"

	"github.com/docketrun/docket/internal/contract"
)

// Hook is a [hook_policy]: what each Agent's coding-agent tool calls come to
// (docs/coding-agents.md) — run freely and recorded, wait for a decision, or refused.
type Hook struct {
	// Default is the mode of a call no profile names; default contract.HookDecide.
	Default  string        `toml:"default"`
	Profiles []HookProfile `toml:"profile"`
}

// HookProfile is one Agent's profile: the mode of each tool it names, by the coding
// agent's tool name, and Default for the tools it does not name.
type HookProfile struct {
	Agent   string   `toml:"agent"` // the Agent's name
	Default string   `toml:"default"`
	Free    []string `toml:"free"`
	Decide  []string `toml:"decide"`
	Refuse  []string `toml:"refuse"`
}

// Mode returns what agent's call of tool comes to: its profile's mode for the tool, else
// its profile's default, else the policy's default.
func (h *Hook) Mode(agent, tool string) string {
	if h == nil {
		return contract.HookDecide
	}
	for _, p := range h.Profiles {
		if p.Agent != agent {
			continue
		}
		switch {
		case slices.Contains(p.Refuse, tool):
			return contract.HookRefuse
		case slices.Contains(p.Decide, tool):
			return contract.HookDecide
		case slices.Contains(p.Free, tool):
			return contract.HookFree
		case p.Default != "":
			return p.Default
		}
		break
	}
	return h.Default
}

var hookModes = []string{contract.HookFree, contract.HookDecide, contract.HookRefuse}

func (h *Hook) check(loc *locator, md toml.MetaData) error {
	if !md.IsDefined("hook_policy", "default") {
		h.Default = contract.HookDecide
	}
	if !slices.Contains(hookModes, h.Default) {
		return loc.refuse(loc.keyLine(toml.Key{"hook_policy", "default"}), "default %q is not a mode; use free, decide or refuse", h.Default)
	}
	seen := map[string]bool{}
	for i, p := range h.Profiles {
		line := loc.header("hook_policy.profile", i)
		if p.Agent == "" {
			return loc.refuse(line, "profile %d names no agent; set agent to the name of the Agent whose hook it governs", i+1)
		}
		if seen[p.Agent] {
			return loc.refuse(line, "two profiles name the agent %q; keep one profile per Agent", p.Agent)
		}
		seen[p.Agent] = true
		if p.Default != "" && !slices.Contains(hookModes, p.Default) {
			return loc.refuse(line, "profile %q: default %q is not a mode; use free, decide or refuse", p.Agent, p.Default)
		}
		tools := map[string]string{}
		for mode, list := range map[string][]string{contract.HookFree: p.Free, contract.HookDecide: p.Decide, contract.HookRefuse: p.Refuse} {
			for _, t := range list {
				if t == "" {
					return loc.refuse(line, "profile %q lists an empty tool name under %s; name tools as the coding agent does, such as \"Bash\"", p.Agent, mode)
				}
				if other, ok := tools[t]; ok {
					return loc.refuse(line, "profile %q lists the tool %q under both %s and %s; give each tool one mode", p.Agent, t, min(mode, other), max(mode, other))
				}
				tools[t] = mode
			}
		}
	}
	return nil
}
