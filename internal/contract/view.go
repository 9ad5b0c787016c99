package contract

// Bounded is a list cut at a bound. Truncated says that more items existed than were
// sent; the bound for each list is documented where the list is computed.
type Bounded[T any] struct {
	Items     []T  `json:"items"`
	Truncated bool `json:"truncated"`
}

// PositionOpen is the value of a Position field when the caller may proceed.
const PositionOpen = "open"

// Position says what the caller may do next: each field is [PositionOpen] or a sentence
// saying why not.
type Position struct {
	Writes   string `json:"writes"`
	NewCases string `json:"newCases"`
	Rules    string `json:"rules"`
}

// CaseEntry is one Case in the View's bounded directory.
type CaseEntry struct {
	CaseID      CaseID     `json:"caseId"`
	Root        string     `json:"root"`
	CaseType    string     `json:"caseType"`
	BusinessKey Args       `json:"businessKey"`
	Status      CaseStatus `json:"status"`
}

// CaseTypeEntry is one installed Case Type: what a caller needs to open a Case of it.
type CaseTypeEntry struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	KeyArgs     []string `json:"keyArgs"`
	Opening     string   `json:"opening,omitempty"`
	Acceptance  string   `json:"acceptance,omitempty"`
	Floor       Tier     `json:"floor,omitempty"`
	Exploration bool     `json:"exploration,omitempty"`
}

// RootEntry is a focused Case's root: whether it is certified, the floor its acceptance
// must reach, and what is still missing (gaps, bounded).
type RootEntry struct {
	CaseID    CaseID          `json:"caseId"`
	Root      string          `json:"root"`
	Certified bool            `json:"certified"`
	Floor     Tier            `json:"floor,omitempty"`
	Gaps      Bounded[string] `json:"gaps"`
}

// ActionState is whether an Action can be applied now.
type ActionState string

// Action states.
const (
	ActionReady   ActionState = "ready"
	ActionBlocked ActionState = "blocked"
)

// BlockReason says why an Action is blocked.
type BlockReason string

// Block reasons.
const (
	BlockNeedsSetup BlockReason = "needs_setup" // its Tool is not locked with a bound Source
	BlockLawLock    BlockReason = "law_lock"    // a once_per_case terminal Action already succeeded
	BlockRule       BlockReason = "rule"        // its preconditions do not hold on trusted premises
	BlockCasePaused BlockReason = "case_paused"
	BlockCaseClosed BlockReason = "case_closed"
	// BlockCaseType: a direct Action of a locked Tool, outside an exploration Case or a
	// Case whose Case Type opts in to direct Actions.
	BlockCaseType BlockReason = "case_type"
	// BlockNotInProfile: the caller's profile does not allow the Action, or work in the
	// focused Case's Case Type ([AllowList.Refusal]).
	BlockNotInProfile BlockReason = "not_in_profile"
)

// Wait is what a ready Action will wait on once applied.
type Wait string

// Waits. The Board knows Decision and Execution from the declaration; the authority adds
// WorkerOffline.
const (
	WaitDecision      Wait = "decision"
	WaitExecution     Wait = "execution"
	WaitWorkerOffline Wait = "worker_offline"
)

// ParamEntry is a parameter the caller may pass to an Action.
type ParamEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Optional    bool   `json:"optional,omitempty"`
	Description string `json:"description,omitempty"`
}

// ActionEntry is one Action as the View shows it. Bound lists the parameters the Board
// fills from trusted premises; the caller must not pass them.
type ActionEntry struct {
	Name   string       `json:"name"`
	State  ActionState  `json:"state"`
	Reason BlockReason  `json:"reason,omitempty"`
	Detail string       `json:"detail,omitempty"` // a sentence on what is missing when blocked
	Waits  []Wait       `json:"waits,omitempty"`
	Params []ParamEntry `json:"params"`
	Bound  []string     `json:"bound"`
	CaseID CaseID       `json:"caseId,omitempty"` // the Case readiness was computed for
}

// View is the bounded Board View every tool result carries.
type View struct {
	Position  Position               `json:"position"`
	Cases     Bounded[CaseEntry]     `json:"cases"`
	CaseTypes Bounded[CaseTypeEntry] `json:"caseTypes"`
	Roots     Bounded[RootEntry]     `json:"roots"`
	Nodes     Bounded[Node]          `json:"nodes"`
	Actions   Bounded[ActionEntry]   `json:"actions"`
	// Decisions lists, for an orchestrator only, the pending requests a class of the
	// delegation policy in force lets it decide; nil for every other caller.
	Decisions *Bounded[DecidableRequest] `json:"decisions,omitempty"`
}
