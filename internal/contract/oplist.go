package contract

// OperationWait says what an unsettled Operation waits for, for a person reading a list.
type OperationWait string

// What an Operation waits for.
const (
	WaitNothing  OperationWait = ""         // settled, or running on the Board alone
	WaitDispatch OperationWait = "dispatch" // running, not_dispatched: no worker has claimed it
	WaitWorker   OperationWait = "worker"   // running, at_worker: a worker claimed it and has not reported
	WaitDecider  OperationWait = "decision" // waiting_for_decision: a member must approve or deny its Request
	WaitPerson   OperationWait = "person"   // needs_person: a member must reconcile it (docket reconcile)
)

// OperationInfo is one Operation as a person sees it in a list: whose it is, where it
// stands and, when it cannot proceed, why. Reason is the sentence the authority recorded
// and ReasonCode its stable code, when it has one.
type OperationInfo struct {
	Agent     AgentID `json:"agent"`
	AgentName string  `json:"agentName,omitempty"`
	Ordinal   int64   `json:"ordinal"`
	Work      string  `json:"work"` // the id docket reconcile takes: "<agent>.<ordinal>"
	OperationEntry
	Waiting  OperationWait `json:"waiting,omitempty"`
	Action   string        `json:"action,omitempty"` // an executed Action's name
	CaseID   CaseID        `json:"caseId,omitempty"` // the Case an executed Action runs in
	ExecTool string        `json:"execTool,omitempty"`
}

// WaitOf returns what an Operation in state and stage waits for.
func WaitOf(state OperationState, stage OperationStage) OperationWait {
	switch {
	case state == OpWaitingForDecision:
		return WaitDecider
	case state == OpNeedsPerson:
		return WaitPerson
	case state == OpRunning && stage == StageNotDispatched:
		return WaitDispatch
	case state == OpRunning && stage == StageAtWorker:
		return WaitWorker
	}
	return WaitNothing
}
