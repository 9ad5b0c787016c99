package contract

import "time"

// CodeTaskFinished refuses the cancel of a task that has already ended.
const CodeTaskFinished Code = "task_finished"

// TaskCancel is a member's cancel of a task: who asked for it, and when. A task not yet
// claimed ends cancelled at once; a claimed or waiting one ends cancelled once its
// runtime has stopped (it sends no further model request or tool call) and the
// Operations its runs admitted have an outcome: an admitted Operation is not cancelled
// (docs/workbench.md, Cancelling a task).
type TaskCancel struct {
	By Principal `json:"by"`
	At time.Time `json:"at"`
}

// TaskOperation is an Operation a task's run admitted: the call that made it, its tool
// and its ordinal in the Agent's strip.
type TaskOperation struct {
	CallID  string `json:"callId"`
	Tool    string `json:"tool"`
	Ordinal int64  `json:"ordinal"`
}
