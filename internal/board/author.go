package board

import (
	"slices"

	"github.com/docketrun/docket/internal/contract"
)

// Author is who writes to the Board and at what tier its facts land.
//
// The Board enforces what it can know and the caller — the authority — checks the rest:
//   - an agent's facts are always asserted, whatever Tier says;
//   - a tool's facts take Tier, which the authority must have taken from the Source the
//     Tool ran against (its declared tier), after checking that the Source is bound to the
//     Tool's Connection. The Board refuses a tool fact whose predicate is not in Words (the
//     Source's words) with source_word, and a tool Author without a valid Tier;
//   - a member's facts take Tier, or asserted when Tier is zero;
//   - capability principals never write: their rules come from releases.
type Author struct {
	Principal contract.Principal
	Tier      contract.Tier
	Words     []string // tool: the predicates its Source may attest
}

// factTier returns the tier the Author's facts and rules land at.
func (a Author) factTier() (contract.Tier, error) {
	switch a.Principal.Kind() {
	case contract.PrincipalAgent:
		return contract.TierAsserted, nil
	case contract.PrincipalTool:
		if !a.Tier.Valid() {
			return 0, contract.Errorf(contract.CodeInvalidArgument,
				"the tool %s wrote without a tier; the authority must pass its Source's tier", a.Principal)
		}
		return a.Tier, nil
	case contract.PrincipalMember:
		if a.Tier.Valid() {
			return a.Tier, nil
		}
		return contract.TierAsserted, nil
	case contract.PrincipalCapability:
		return 0, contract.Errorf(contract.CodeInvalidArgument,
			"%s cannot write to the Board; capability rules arrive with their release", a.Principal)
	}
	return 0, contract.Errorf(contract.CodeInvalidArgument,
		"the principal %q is malformed; use agent:<id>, tool:<id> or member:<id>", a.Principal)
}

// checkWord refuses a tool fact outside its Source's words.
func (a Author) checkWord(pred string) error {
	if a.Principal.Kind() != contract.PrincipalTool || slices.Contains(a.Words, pred) {
		return nil
	}
	return contract.Errorf(contract.CodeSourceWord,
		"the tool %s may attest only %v, not %s; declare %s among the Source's words or assert it as an agent",
		a.Principal, a.Words, pred, pred)
}
