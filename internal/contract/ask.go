package contract

// ActionAsk is the built-in Action by which an Agent asks another Agent of its project
// for work: ApplyAction with params agent (the asked Agent's name or id) and task (the
// task's text). It is governed like every Action: a class of the delegation policy in
// force whose action is docket.ask and whose agent names the asked Agent lets it start
// without a person; otherwise it raises a request a member decides. Once started, the
// asked Agent's task is posted with the asking task as its parent, and the asking
// Operation runs (stage asked) until that task reports: its result is then the report
// (docs/agents.md).
const ActionAsk = "docket.ask"

// StageAsked is the stage of a running docket.ask Operation: the asked Agent's task runs.
const StageAsked OperationStage = "asked"

// MaxAskDepth bounds how deep asks nest: a task posted by an ask at this depth (the
// asking task's own depth plus one) is refused ask_too_deep. A task a member posted is at
// depth 0.
const MaxAskDepth = 3

// MaxAskFanOut bounds the asked tasks one asking task has open at once: one more is
// refused ask_fan_out until one reports.
const MaxAskFanOut = 4

// Ask refusals.
const (
	CodeAskTooDeep Code = "ask_too_deep" // an ask from a task already MaxAskDepth asks deep
	CodeAskFanOut  Code = "ask_fan_out"  // the asking task already has MaxAskFanOut asked tasks open
	CodeAskRefused Code = "ask_refused"  // an ask of oneself, of a revoked Agent, or of one that does not exist
)

// TaskParent names the ask that posted a task: the asking task (empty when the ask came
// from outside a task's conversation), the asking Agent and its docket.ask Operation.
type TaskParent struct {
	Task    TaskID  `json:"task,omitempty"`
	Agent   AgentID `json:"agent"`
	Ordinal int64   `json:"ordinal"`
	Depth   int     `json:"depth"` // this task's depth: the asking task's plus one
}

// AskOrigin is what the authority knows of the task a docket.ask call comes from: the
// conversation's claimed task, its depth and how many tasks it asked for are still open.
// Task is empty when the call came from outside a task's conversation.
type AskOrigin struct {
	Task     TaskID
	Depth    int
	OpenAsks int
}

// TaskNode is one task of a task tree: the task, its Agent's name, and the tasks it
// asked for, oldest first (GET /api/v1/projects/{project}/tasks/{task}/tree).
type TaskNode struct {
	Task      Task       `json:"task"`
	AgentName string     `json:"agentName"`
	Children  []TaskNode `json:"children"`
}
