package contract

import (
	"fmt"
	"strings"
)

// Credential prefixes. A token names its kind in clear so that a
// leaked one can be recognised by scanners and routed without a database lookup.
const (
	PrefixSession    = "dkt_ses_" // a member's session (cookie or CLI bearer)
	PrefixAgent      = "dkt_agt_" // an Agent's token
	PrefixConnection = "dkt_con_" // a Connection key: "dkt_con_<connection id>.<secret>"
	PrefixDelegate   = "dkt_dlg_" // a delegate's credential: acts for its member in one project
	// PrefixHook begins a coding agent's hook token: an Agent's token that reaches only
	// the hook routes (docs/coding-agents.md), never /mcp nor any other route.
	PrefixHook = "dkt_hok_"
)

// ProjectID names a project. It is chosen by a member, so it is a short slug.
type ProjectID string

// MemberID identifies a member: "mem_" and 16 hex digits.
type MemberID string

// AgentID identifies an Agent: "agt_" and 16 hex digits.
type AgentID string

// ConnectionID identifies a Connection: "con_" and 16 hex digits.
type ConnectionID string

// ParseProjectID checks s against the project slug form: 1 to 63 lower-case letters,
// digits and hyphens, starting with a letter or digit.
func ParseProjectID(s string) (ProjectID, error) {
	if err := checkSlug(s); err != nil {
		return "", fmt.Errorf("project id %q: %w", s, err)
	}
	return ProjectID(s), nil
}

// ParseMemberID checks s against the member id form.
func ParseMemberID(s string) (MemberID, error) {
	if err := checkMinted("mem_", s); err != nil {
		return "", err
	}
	return MemberID(s), nil
}

// ParseAgentID checks s against the agent id form.
func ParseAgentID(s string) (AgentID, error) {
	if err := checkMinted("agt_", s); err != nil {
		return "", err
	}
	return AgentID(s), nil
}

// ParseConnectionID checks s against the connection id form.
func ParseConnectionID(s string) (ConnectionID, error) {
	if err := checkMinted("con_", s); err != nil {
		return "", err
	}
	return ConnectionID(s), nil
}

// String returns the id.
func (id ProjectID) String() string { return string(id) }

// String returns the id.
func (id MemberID) String() string { return string(id) }

// String returns the id.
func (id AgentID) String() string { return string(id) }

// String returns the id.
func (id ConnectionID) String() string { return string(id) }

// ParseName checks a human-chosen name (member, agent, connection, source): 1 to 63
// lower-case letters, digits, hyphens, dots and underscores, starting with a letter or digit.
func ParseName(s string) (string, error) {
	if len(s) == 0 || len(s) > 63 {
		return "", fmt.Errorf("name %q: want 1 to 63 characters", s)
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && strings.ContainsRune("-._", r)
		if !ok {
			return "", fmt.Errorf("name %q: use lower-case letters, digits, '-', '.' and '_', starting with a letter or digit", s)
		}
	}
	return s, nil
}

func checkSlug(s string) error {
	if len(s) == 0 || len(s) > 63 {
		return fmt.Errorf("want 1 to 63 characters")
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && r == '-'
		if !ok {
			return fmt.Errorf("use lower-case letters, digits and '-', starting with a letter or digit")
		}
	}
	return nil
}

// mintedHexLen is the number of hex digits after the prefix of a minted id (64 bits).
const mintedHexLen = 16

func checkMinted(prefix, s string) error {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != mintedHexLen {
		return fmt.Errorf("id %q: want %q and %d hex digits", s, prefix, mintedHexLen)
	}
	for _, r := range rest {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return fmt.Errorf("id %q: want %q and %d lower-case hex digits", s, prefix, mintedHexLen)
		}
	}
	return nil
}

// AgentKind is what an Agent may do.
type AgentKind string

// Agent kinds.
const (
	AgentKindAgent        AgentKind = "agent"        // does work
	AgentKindOrchestrator AgentKind = "orchestrator" // may also decide delegated request classes
)

// ParseAgentKind returns the kind named s; "" means [AgentKindAgent].
func ParseAgentKind(s string) (AgentKind, error) {
	switch AgentKind(s) {
	case "", AgentKindAgent:
		return AgentKindAgent, nil
	case AgentKindOrchestrator:
		return AgentKindOrchestrator, nil
	}
	return "", fmt.Errorf("agent kind %q: want agent or orchestrator", s)
}
