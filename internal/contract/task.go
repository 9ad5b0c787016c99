package contract

import (
	"fmt"
	"net/url"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"
)

// Error codes of tasks and messages for Agents' conversations.
const (
	CodeCasePinned     Code = "case_pinned"      // a call moves a pinned conversation's work onto another Case Type or key
	CodeTaskConflict   Code = "task_conflict"    // a client key already names another task, or a pin differs from the conversation's
	CodeTaskNotClaimed Code = "task_not_claimed" // a report or renewal of a claim that is not this runtime's any more
	CodeTaskLimit      Code = "task_limit"       // the Agent has the most open tasks it may, or was given the most it may take in an hour
)

// TaskID names a task; the authority mints it.
type TaskID string

// TaskKind says what was posted: a task starts or continues a conversation with its text;
// a message is words added to a conversation that exists.
type TaskKind string

// Task kinds.
const (
	TaskKindTask    TaskKind = "task"
	TaskKindMessage TaskKind = "message"
)

// TaskState is where a task stands.
type TaskState string

// Task states. A task is queued until a runtime claims it; claimed while a runtime holds
// its lease; waiting while its work waits on Operations (a decision, a running write, a
// person), when the authority wakes it; then completed or failed, or cancelled when a
// member cancelled it (see [TaskCancel]).
const (
	TaskQueued    TaskState = "queued"
	TaskClaimed   TaskState = "claimed"
	TaskWaiting   TaskState = "waiting"
	TaskCompleted TaskState = "completed"
	TaskFailed    TaskState = "failed"
	TaskCancelled TaskState = "cancelled"
)

// Finished reports whether s is final.
func (s TaskState) Finished() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// MaxTaskText bounds a task's or a message's text, in bytes.
const MaxTaskText = 64 << 10

// clientKeyForm is checked with the length apart, as conversationIDForm is.
var clientKeyForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`) })

// maxClientKey is the longest client key, in bytes.
const maxClientKey = 128

// CheckClientKey checks an idempotency key: 1 to 128 letters, digits, '_', '.', ':' or
// '-', starting with a letter or digit; "" is none.
func CheckClientKey(k string) error {
	if k != "" && (len(k) > maxClientKey || !clientKeyForm().MatchString(k)) {
		return Errorf(CodeInvalidArgument, "client key %q is not 1 to 128 letters, digits, '_', '.', ':' or '-' starting with a letter or digit; pick another", k)
	}
	return nil
}

// TaskRequest is a task posted for an Agent: POST
// /api/v1/projects/{project}/agents/{agent}/tasks (Agent comes from the path) or, by the
// Agent's own runtime, POST /api/v1/tasks. Conversation names the conversation to start
// or continue; empty, the authority makes one. CaseType with BusinessKey pins the
// conversation to that Case: the authority refuses its calls on any other Case Type or
// key. CaseID brings a Case into the conversation's focus. ClientKey makes a post
// idempotent: the same key with the same request returns the task already posted.
type TaskRequest struct {
	Agent        string `json:"agent,omitempty"`
	Text         string `json:"text"`
	Conversation string `json:"conversation,omitempty"`
	CaseType     string `json:"caseType,omitempty"`
	BusinessKey  Args   `json:"businessKey,omitempty"`
	CaseID       CaseID `json:"caseId,omitempty"`
	ClientKey    string `json:"clientKey,omitempty"`
}

// MessageRequest is words a member adds to an Agent's conversation: POST
// /api/v1/projects/{project}/agents/{agent}/conversations/{conversation}/messages.
type MessageRequest struct {
	Text      string `json:"text"`
	ClientKey string `json:"clientKey,omitempty"`
}

// CasePin is what a conversation's work is held to: a Case Type and business key, and the
// Case brought into its focus.
type CasePin struct {
	CaseType    string `json:"caseType,omitempty"`
	BusinessKey Args   `json:"businessKey,omitempty"`
	CaseID      CaseID `json:"caseId,omitempty"`
}

// TaskWait is an Operation of the Agent a task's conversation waits on: by ordinal, or,
// while the ordinal is unknown (an answer lost in flight), the newest Operation of Tool
// after ordinal After. A wait that names Budget instead waits for room in that budget
// of the project (docs/budgets.md): it names no call and no tool.
type TaskWait struct {
	CallID  string `json:"callId"`
	Tool    string `json:"tool"`
	Ordinal int64  `json:"ordinal,omitempty"`
	After   int64  `json:"after,omitempty"`
	Budget  string `json:"budget,omitempty"`
}

// ClosedCase is a Case a task closed: its id, root and disposition. Dispositions are
// listed each as it is, never summed up.
type ClosedCase struct {
	CaseID      CaseID      `json:"caseId"`
	Root        string      `json:"root,omitempty"`
	Disposition Disposition `json:"disposition"`
}

// TaskResult is how a runtime's run of a task ended, as it reported it.
type TaskResult struct {
	Final       string       `json:"final,omitempty"`
	ErrorCode   Code         `json:"errorCode,omitempty"`
	Teaching    string       `json:"teaching,omitempty"`
	ClosedCases []ClosedCase `json:"closedCases"`
	// Operations are the Operations the task's runs admitted, listed on a cancelled
	// task's report: what did run, or runs still, or waits for a person.
	Operations []TaskOperation `json:"operations,omitempty"`
}

// Task is a task or message as the authority keeps it.
type Task struct {
	ID           TaskID         `json:"id"`
	Project      ProjectID      `json:"project"`
	Agent        AgentID        `json:"agent"`
	Kind         TaskKind       `json:"kind"`
	Text         string         `json:"text"`
	Conversation ConversationID `json:"conversation"`
	CasePin
	ClientKey string    `json:"clientKey,omitempty"`
	PostedBy  Principal `json:"postedBy"`
	PostedAt  time.Time `json:"postedAt"`

	State TaskState `json:"state"`
	// Attempt counts the claims: a claim whose lease ran out is taken again with the next.
	Attempt    int        `json:"attempt"`
	LeaseUntil *time.Time `json:"leaseUntil,omitempty"`
	// Waiting are the Operations the conversation waits on while State is waiting.
	Waiting []TaskWait `json:"waiting,omitempty"`
	// RunWait is what the claim's run waited on when its runtime last renewed the lease
	// (a model request, for its first byte or its next data), kept until the run reports
	// or the task is claimed again: a run that waits past RunWait.Deadline is stuck, and
	// its runtime stops renewing (docs/workbench.md, Model deadlines).
	RunWait *TaskRunWait `json:"runWait,omitempty"`
	// Cancel, once set, says a member asked to cancel the task: its runtime sends no
	// further model request or tool call, and the task ends cancelled.
	Cancel *TaskCancel `json:"cancel,omitempty"`
	// Parent, when set, names the docket.ask that posted the task (docs/agents.md).
	Parent    *TaskParent `json:"parent,omitempty"`
	Result    *TaskResult `json:"result,omitempty"`
	UpdatedAt time.Time   `json:"updatedAt"`
}

// TaskClaimRequest is a runtime's long-poll for its Agent's next task: POST
// /api/v1/tasks/claim. WaitMS bounds the poll (0: answer at once; at most
// MaxTaskClaimWait); Task narrows it to one task.
type TaskClaimRequest struct {
	WaitMS int    `json:"waitMs,omitempty"`
	Task   TaskID `json:"task,omitempty"`
}

// MaxTaskClaimWait bounds a claim's long-poll.
const MaxTaskClaimWait = 60 * time.Second

// TaskClaim is the answer to a claim: no task when the poll ran out; else the task
// claimed under a lease until LeaseUntil. Wake says the task's conversation waited on
// Operations that now have an outcome: the runtime resumes it rather than sending the
// task's text.
type TaskClaim struct {
	Task *Task `json:"task,omitempty"`
	Wake bool  `json:"wake,omitempty"`
}

// TaskRenewal extends a claim's lease: POST /api/v1/tasks/{task}/renew. Wait, when set,
// is what the run waits on as it renews; see [CheckTaskRunWait].
type TaskRenewal struct {
	Attempt int          `json:"attempt"`
	Wait    *TaskRunWait `json:"wait,omitempty"`
	// WaitMS, when set, holds the renewal's answer up to WaitMS (at most
	// MaxTaskClaimWait) after the lease is renewed, answering at once when the task's
	// cancel is asked for: the runtime learns of a cancel from the renewal it sends anyway.
	WaitMS int `json:"waitMs,omitempty"`
}

// What a run waits on.
const (
	RunWaitModel = "model" // a model request
)

// Phases of a model request's wait.
const (
	RunWaitFirstByte = "first_byte" // the request is sent; no answer has begun
	RunWaitIdle      = "idle"       // the answer began; no more of it came since Since
	RunWaitRetry     = "retry"      // an attempt failed for a reason that means "later"; the next is sent at Deadline
)

// TaskRunWait is what a claimed task's run waits on: a model request at Origin, in Phase,
// since Since; at Deadline the runtime ends the request (the task fails with
// model_stalled), and past it the runtime no longer renews the claim.
//
// In phase retry the run waits out a back-off: at Deadline it sends attempt Attempt of
// Attempts, after the last one failed for Reason ("rate limited (HTTP 429)").
type TaskRunWait struct {
	On       string    `json:"on"`
	Origin   string    `json:"origin"`
	Phase    string    `json:"phase"`
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"`
	Attempt  int       `json:"attempt,omitempty"`
	Attempts int       `json:"attempts,omitempty"`
	Reason   string    `json:"reason,omitempty"`
}

// RetryWaitText says what a run waiting to send a model request again waits on, as a
// person reads it at now: "rate limited (HTTP 429), attempt 2 of 5 at
// https://api.example.com, next in 4 s".
func RetryWaitText(w TaskRunWait, now time.Time) string {
	next := max(w.Deadline.Sub(now), 0).Round(time.Second)
	return fmt.Sprintf("%s, attempt %d of %d at %s, next in %d s", w.Reason, w.Attempt, w.Attempts, w.Origin, int64(next/time.Second))
}

// maxRunWaitReason bounds a [TaskRunWait]'s reason, in bytes.
const maxRunWaitReason = 200

// maxRunWaitOrigin bounds a [TaskRunWait]'s origin, in bytes.
const maxRunWaitOrigin = 200

// CheckTaskRunWait refuses a run wait that is not a model request's first-byte or idle
// wait at an http(s) origin (scheme://host[:port], no path, credentials or query), since
// Since and ending at a Deadline after it.
func CheckTaskRunWait(w TaskRunWait) error {
	u, err := url.Parse(w.Origin)
	switch {
	case w.On != RunWaitModel:
		return Errorf(CodeInvalidArgument, "a run wait is on %q, the only thing a run waits on that it reports", RunWaitModel)
	case w.Phase != RunWaitFirstByte && w.Phase != RunWaitIdle && w.Phase != RunWaitRetry:
		return Errorf(CodeInvalidArgument, "a run wait's phase is %q, %q or %q", RunWaitFirstByte, RunWaitIdle, RunWaitRetry)
	case w.Phase == RunWaitRetry && (w.Attempt < 2 || w.Attempts < w.Attempt || len(w.Reason) > maxRunWaitReason || !utf8.ValidString(w.Reason)):
		return Errorf(CodeInvalidArgument, "a retry wait names the attempt it waits for (2 or more, at most attempts) and a reason of at most %d bytes", maxRunWaitReason)
	case w.Phase != RunWaitRetry && (w.Attempt != 0 || w.Attempts != 0 || w.Reason != ""):
		return Errorf(CodeInvalidArgument, "only a retry wait names an attempt and a reason")
	case len(w.Origin) > maxRunWaitOrigin || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return Errorf(CodeInvalidArgument, "a run wait's origin is the model endpoint's scheme://host[:port], without a path, credentials or query")
	case w.Since.IsZero() || !w.Deadline.After(w.Since):
		return Errorf(CodeInvalidArgument, "a run wait has a since and a deadline after it")
	}
	return nil
}

// TaskReport is how a runtime's run of a claimed task ended: POST
// /api/v1/tasks/{task}/report. Waiting, when not empty, says the task's work is not done
// (State is then waiting and the authority wakes it when they settle); else State is
// completed or failed.
type TaskReport struct {
	Attempt int        `json:"attempt"`
	State   TaskState  `json:"state"`
	Waiting []TaskWait `json:"waiting,omitempty"`
	TaskResult
}

// OperationsWait is an Agent's long-poll for outcomes: POST /api/v1/operations/wait
// answers once each Operation has one (settled, or needs a person), or after WaitMS.
type OperationsWait struct {
	Waiting []TaskWait `json:"waiting"`
	WaitMS  int        `json:"waitMs"`
}

// OperationsWaited is the answer to [OperationsWait]: whether every one has an outcome.
type OperationsWaited struct {
	Reported bool `json:"reported"`
}
