package contract

import (
	"slices"
	"strings"
	"time"
)

// AllowList is what an Agent's profile lets it use (docs/agents.md, "What a profile
// allows"): the Case Types it may open and work in and the Actions it may apply (a
// capability's Action, a direct Action named by its Tool, or a built-in Action such as
// docket.ask). An empty list leaves its side open; a profile without an AllowList limits
// nothing.
type AllowList struct {
	CaseTypes []string `json:"caseTypes,omitempty"`
	Actions   []string `json:"actions,omitempty"`
}

// Refusal says why an Agent under a may not apply action in a Case of caseType, or "" when
// it may. action "" asks about the Case Type alone (OpenCase, a write to a Case, a close);
// caseType "" is a call outside any Case. A nil a allows everything. It is the one check
// of a profile's allow-list: the View lists what it refuses blocked with
// [BlockNotInProfile], and admission refuses it with [CodeNotInProfile].
func (a *AllowList) Refusal(action, caseType string) string {
	if a == nil {
		return ""
	}
	if caseType != "" && len(a.CaseTypes) > 0 && !slices.Contains(a.CaseTypes, caseType) {
		return "your profile lets you work only in Cases of Case Type " + strings.Join(a.CaseTypes, ", ") +
			"; Case Type " + caseType + " is not among them, so work in a Case of one of those types or ask a member to change your profile"
	}
	if action != "" && len(a.Actions) > 0 && !slices.Contains(a.Actions, action) {
		return "your profile lets you apply only " + strings.Join(a.Actions, ", ") +
			"; " + action + " is not among them, so use one of those or ask a member to change your profile"
	}
	return ""
}

// Empty reports whether a limits nothing.
func (a *AllowList) Empty() bool { return a == nil || (len(a.CaseTypes) == 0 && len(a.Actions) == 0) }

// Blueprint is a named template of Agent profiles in a project: what an Agent made from it
// runs (model, instructions, settings) and may use (its AllowList). A profile set from it
// copies it and records its name and digest; changing the blueprint later changes no
// profile (docs/agents.md, "Blueprints").
type Blueprint struct {
	Name string `json:"name"`
	BlueprintSpec
	// Digest is the sha256 of the spec's JSON, which a profile made from it records.
	Digest Digest    `json:"digest"`
	SetBy  Principal `json:"setBy"`
	SetAt  time.Time `json:"setAt"`
}

// BlueprintSpec is what a member sets of a blueprint: PUT .../blueprints/{name}. Its
// Profile holds no key file and no enabled switch: those are each Agent's own, given
// when a profile is made from it.
type BlueprintSpec struct {
	Description string      `json:"description,omitempty"` // one line, for people
	Profile     ProfileSpec `json:"profile"`
}

// BlueprintRef names the blueprint a profile was made from, at the digest it had then.
type BlueprintRef struct {
	Name   string `json:"name"`
	Digest Digest `json:"digest"`
}

// FromBlueprint is a profile made from a blueprint: POST
// .../agents/{agent}/profile/from-blueprint. Digest, when set, is the blueprint's digest
// the caller read (and checked its model with); another refuses with
// [CodeBlueprintChanged].
type FromBlueprint struct {
	Blueprint string  `json:"blueprint"`
	Digest    *Digest `json:"digest,omitempty"`
	KeyFile   string  `json:"keyFile,omitempty"`
	Enabled   bool    `json:"enabled"`
}

// Blueprint states of a profile made from one, as [AgentProfile.BlueprintState] says.
const (
	BlueprintCurrent = "current" // the blueprint still has the digest the profile copied
	BlueprintChanged = "changed" // the blueprint was set again since; the profile kept the copy
	BlueprintRemoved = "removed" // the blueprint was removed since
)

// Blueprint and allow-list codes.
const (
	CodeBlueprintInvalid Code = "blueprint_invalid" // a blueprint field that cannot work, named with the fix
	CodeBlueprintChanged Code = "blueprint_changed" // the blueprint's digest is not the one the caller read
	CodeNotInProfile     Code = "not_in_profile"    // the call uses a Case Type or Action its profile does not allow
)

// MaxAllowNames bounds each list of an AllowList.
const MaxAllowNames = 64

// MaxBlueprintName bounds a blueprint's name in bytes.
const MaxBlueprintName = 64
