package contract

// ExecutionRequest is what applying an executed Action asks the authority to dispatch: the
// Action, its Tool, and the exact arguments after bindings. Args
// marshals with sorted keys, so equal requests have equal bytes.
type ExecutionRequest struct {
	Action      string   `json:"action"`
	CaseID      CaseID   `json:"caseId,omitempty"`
	Tool        string   `json:"tool"`
	Kind        string   `json:"kind"` // read, write or run
	SourceTypes []string `json:"sourceTypes,omitempty"`
	// Source is the name of the Source the capability declares for the call, which the
	// authority looks for first among the Connection's bound Sources of SourceTypes.
	Source   string `json:"source,omitempty"`
	Approval string `json:"approval"`
	Args     Args   `json:"args"`
	// Bound names the arguments the Board filled from trusted premises, sorted.
	Bound []string `json:"bound,omitempty"`
}

// ExecutionOutcome is what a Worker reported for an ExecutionRequest: whether it
// succeeded and the rows it returned, one Args per row keyed by column.
type ExecutionOutcome struct {
	OK     bool   `json:"ok"`
	Rows   []Args `json:"rows,omitempty"`
	Reason string `json:"reason,omitempty"`
}
