package contract

import "fmt"

// Tier is the grounding of a Board node, from strongest to weakest.
// The zero value is invalid so that a forgotten tier is caught, never read as strong.
type Tier uint8

// Tiers in order of strength: Verified is the strongest, Asserted the weakest.
const (
	TierVerified Tier = iota + 1
	TierAttested
	TierApproximate
	TierInductive
	TierUncertain
	TierPerceived
	TierAsserted
)

var tierNames = [...]string{
	TierVerified:    "verified",
	TierAttested:    "attested",
	TierApproximate: "approximate",
	TierInductive:   "inductive",
	TierUncertain:   "uncertain",
	TierPerceived:   "perceived",
	TierAsserted:    "asserted",
}

// ParseTier returns the Tier named s.
func ParseTier(s string) (Tier, error) {
	for t, name := range tierNames {
		if name != "" && name == s {
			return Tier(t), nil
		}
	}
	return 0, fmt.Errorf("unknown tier %q: want one of verified, attested, approximate, inductive, uncertain, perceived, asserted", s)
}

// Valid reports whether t is one of the named tiers.
func (t Tier) Valid() bool { return t >= TierVerified && t <= TierAsserted }

// String returns the tier's wire name.
func (t Tier) String() string {
	if !t.Valid() {
		return fmt.Sprintf("tier(%d)", uint8(t))
	}
	return tierNames[t]
}

// AtLeast reports whether t is as strong as floor or stronger.
func (t Tier) AtLeast(floor Tier) bool { return t.Valid() && t <= floor }

// Weaker returns the weaker of t and u: a conclusion is no stronger than its weakest premise.
func Weaker(t, u Tier) Tier { return max(t, u) }

// Stronger returns the stronger of t and u: of two derivations, the best one counts.
func Stronger(t, u Tier) Tier { return min(t, u) }

// MarshalText encodes the tier as its name.
func (t Tier) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("marshal tier: invalid tier %d", uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes a tier name.
func (t *Tier) UnmarshalText(b []byte) error {
	v, err := ParseTier(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
