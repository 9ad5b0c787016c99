package contract

import (
	"fmt"
	"strings"
)

// Principal names who created a Board node or made a call: "agent:<id>", "tool:<id>",
// "member:<id>" or "capability:<release>".
type Principal string

// PrincipalKind is the part of a Principal before the colon.
type PrincipalKind string

// Principal kinds.
const (
	PrincipalAgent      PrincipalKind = "agent"
	PrincipalTool       PrincipalKind = "tool"
	PrincipalMember     PrincipalKind = "member"
	PrincipalCapability PrincipalKind = "capability"
)

// NewPrincipal returns the Principal kind:id.
func NewPrincipal(kind PrincipalKind, id string) Principal { return Principal(string(kind) + ":" + id) }

// ParsePrincipal checks that s is kind:id with a known kind and a non-empty id.
func ParsePrincipal(s string) (Principal, error) {
	p := Principal(s)
	if p.Kind() == "" || p.ID() == "" {
		return "", fmt.Errorf("parse principal %q: want agent:<id>, tool:<id>, member:<id> or capability:<release>", s)
	}
	return p, nil
}

// Kind returns p's kind, or "" when p is malformed.
func (p Principal) Kind() PrincipalKind {
	k, _, ok := strings.Cut(string(p), ":")
	switch PrincipalKind(k) {
	case PrincipalAgent, PrincipalTool, PrincipalMember, PrincipalCapability:
		if ok {
			return PrincipalKind(k)
		}
	}
	return ""
}

// ID returns the part of p after the colon.
func (p Principal) ID() string {
	_, id, _ := strings.Cut(string(p), ":")
	return id
}

// String returns p as text.
func (p Principal) String() string { return string(p) }
