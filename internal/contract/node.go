package contract

// NodeKind is the kind of a Board node.
type NodeKind string

// Node kinds.
const (
	NodeFact    NodeKind = "fact"
	NodeRule    NodeKind = "rule"
	NodeGoal    NodeKind = "goal"
	NodeDerived NodeKind = "derived"
)

// Node is one Board node as it is shown and persisted. The authority persists the
// fact, rule and goal nodes a change returns and gives them back to rebuild the Board;
// derived nodes are recomputed and never persisted.
type Node struct {
	NodeID    string    `json:"nodeId"`
	Kind      NodeKind  `json:"kind"`
	CreatedBy Principal `json:"createdBy"`
	Tier      Tier      `json:"tier"`
	Atom      *Atom     `json:"atom,omitempty"` // fact, goal, derived
	Rule      *Rule     `json:"rule,omitempty"` // rule
	// Aggregate is the aggregated head argument of an aggregate rule.
	Aggregate *Aggregate `json:"aggregate,omitempty"`
	CaseID    CaseID     `json:"caseId,omitempty"`   // the exploration Case the node is local to
	Premises  []string   `json:"premises,omitempty"` // derived: the node ids its best derivation rests on
	Holds     *bool      `json:"holds,omitempty"`    // goal: whether its atom holds now
	// Seq orders the nodes of one Board: a node created later has a larger Seq, and a
	// rebuilt Board replays nodes in Seq order.
	Seq uint64 `json:"seq,omitempty"`
}

// NodeChange is one change the authority persists: Put a node, or Delete the node with
// that id.
type NodeChange struct {
	Put    *Node  `json:"put,omitempty"`
	Delete string `json:"delete,omitempty"`
}
