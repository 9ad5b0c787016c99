package contract

// Why is the derivation tree of one Board node: why it holds, down to the facts someone
// asserted or a Tool attested. The tree is bounded: a node whose
// premises were cut by the depth or size bound says how many in More, and a node reached
// a second time is marked Repeat and not expanded again.
type Why struct {
	Root WhyNode `json:"root"`
	// Shown counts the nodes in the tree; Omitted counts the premises left out by the
	// bounds, the sum of every More.
	Shown   int `json:"shown"`
	Omitted int `json:"omitted,omitempty"`
}

// WhyNode is one node of a [Why] tree.
type WhyNode struct {
	NodeID string   `json:"nodeId"`
	Kind   NodeKind `json:"kind"` // fact, derived, rule or goal
	Tier   Tier     `json:"tier"`
	Atom   *Atom    `json:"atom,omitempty"`
	CaseID CaseID   `json:"caseId,omitempty"` // the exploration Case the node is local to

	// Rule is the id of the rule whose best derivation makes a derived node hold, and
	// RuleBy who declared it: capability:<release> for a capability's rule.
	Rule   string    `json:"rule,omitempty"`
	RuleBy Principal `json:"ruleBy,omitempty"`

	// CreatedBy is who asserted a base node: an agent, a member, a Tool, or the
	// capability release of a rule. A Tool's fact also has Attestation.
	CreatedBy   Principal    `json:"createdBy,omitempty"`
	Attestation *Attestation `json:"attestation,omitempty"`

	Premises []WhyNode `json:"premises,omitempty"`
	// More is how many of this node's premises the bounds left out ("… N more").
	More int `json:"more,omitempty"`
	// Repeat marks a node shown already elsewhere in the tree; its premises are there.
	Repeat bool `json:"repeat,omitempty"`
}

// Attestation names what attested a Tool's fact: the Tool, the executed Action whose
// returns make that predicate and the capability release declaring it, and the Sources
// bound for that Tool that may attest the predicate (their non-secret parts).
type Attestation struct {
	Tool    string   `json:"tool"`
	Action  string   `json:"action,omitempty"`
	Release string   `json:"release,omitempty"`
	Sources []Source `json:"sources,omitempty"`
}
