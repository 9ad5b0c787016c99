// Package event is the catalog of the event types the authority appends to a project's
// log: every type is named once here, with its payload type (the one shape of its data,
// which writers append and readers decode) and whether an event of it may change the
// project's Board. A cached Board is rebuilt when the log shows an event that may change
// it, so the catalog is what lets a busy log of Operations, leases and conversations leave
// the cache alone.
package event

import "strings"

// Event types, grouped by what appends them. The payload type of each is its name with
// Data after it (payload.go); the comment after each says what it holds.
const (
	// Identities and setup: never in a Board write (a tool lock changes the built-in
	// release of direct Actions, so its Board column says so).
	ProjectCreated     = "project.created"      // the project record
	MemberCreated      = "member.created"       // the member record, never a secret
	AgentCreated       = "agent.created"        // the agent record
	AgentTokenReplaced = "agent.token_replaced" // the agent id
	AgentRevoked       = "agent.revoked"        // the agent id
	ConnectionCreated  = "connection.created"   // the connection record
	ConnectionRevoked  = "connection.revoked"   // the connection id
	SourceBound        = "source.bound"         // the source binding
	ToolLocked         = "tool.locked"          // the tool lock; it changes the built-in release of direct Actions
	DelegateCreated    = "delegate.created"     // contract.Delegate, never its token
	DelegateRevoked    = "delegate.revoked"     // the delegate id and why

	// Cards: a delegate's consent call, recorded instead of run, and its end.
	CardRecorded  = "card.recorded"  // contract.Card, open, never a secret
	CardConfirmed = "card.confirmed" // the card as a member confirmed it, re-bound, before its call runs
	CardRan       = "card.ran"       // the card id and its call's outcome (status, error code), never the answer
	CardDeclined  = "card.declined"  // the card as a member declined it, with the reason
	CardVoided    = "card.voided"    // the card as voided, with what changed or why its delegate ended
	CardExempted  = "card.exempted"  // a consent call the delegate policy exempts: the call, its digest, the policy version

	// Capabilities: an install changes what the Board declares.
	CapabilityInstalled = "capability.installed" // the release installed

	// Board changes: each is appended with the node and Case records it changed.
	CaseOpened      = "case.opened"      // contract.Case
	CaseClosed      = "case.closed"      // the close receipt
	BatchApplied    = "batch.applied"    // the batch: the node each operation made or retracted, and the records written
	ActionApplied   = "action.applied"   // the Action and its effects
	ActionCompleted = "action.completed" // an executed Action's outcome applied
	// BoardRecorded is the full content of the node and Case records one Board change
	// wrote, appended with that change's event, so that the log, not the node table, is
	// the Board's truth.
	BoardRecorded = "board.recorded" // the node and Case records the change wrote

	// Operations, Requests and artifacts: the operation ledger's events.
	OpAdmitted     = "operation.admitted"     // a new Operation in its first state
	OpChanged      = "operation.changed"      // a later state of an Operation
	OpAcknowledged = "operation.acknowledged" // the agent saw the outcome
	OpWaiting      = "operation.waiting"      // why queued work is not dispatched, or that it no longer waits for a reason
	RequestCreated = "request.created"        // contract.Request
	RequestChanged = "request.changed"        // contract.Request in its new state
	ArtifactIssued = "artifact.issued"        // the artifact's ref and blob
	HookReported   = "hook.reported"          // a coding agent's call that ran: its exit and output digest
	LeaseAcquired  = "worker.lease.acquired"  // the lease granted
	LeaseRenewed   = "worker.lease.renewed"   // a lease renewed; appended by older versions only
	LeaseReleased  = "worker.lease.released"  // the lease given up
	WorkClaimed    = "work.claimed"           // the claim and the Source it runs against
	WorkReported   = "work.reported"          // the report and its digest

	// Policies: a member's publication of a new version of a kind.
	PolicyPublished = "policy.published" // contract.PolicyVersion, with its text

	// Autonomy: a member's acts on an Agent's level and run windows.
	LevelSet         = "agent.level_set"         // the Agent, its new level, the policy version
	RiskAcknowledged = "agent.risk_acknowledged" // the Agent, the text read and its digest, the policy version
	RunWindowOpened  = "run_window.opened"       // the Agent and the window

	// Profiles: a member's profile of an Agent, and the state docket start reports of
	// the Agent's runtime. Never a model key.
	ProfileSet      = "agent.profile_set"      // the Agent and its profile spec
	RuntimeReported = "agent.runtime_reported" // the Agent and its runtime's state

	// Recovery: an act on a failed Operation, or its refusal.
	RecoveryActed   = "recovery.acted"   // the act, the Operation, the actor, the reason, the policy version, the result
	RecoveryRefused = "recovery.refused" // the same, and why the act was refused or sent to a member

	// Signatures: a signed checkpoint of the head before it.
	CheckpointSigned = "checkpoint.signed" // signing.Checkpoint

	// Schedules: a member's acts on a schedule, and each fire of it.
	ScheduleCreated = "schedule.created" // contract.Schedule
	SchedulePaused  = "schedule.paused"  // the schedule id
	ScheduleResumed = "schedule.resumed" // the schedule id and its next fire
	ScheduleDeleted = "schedule.deleted" // the schedule id
	ScheduleFired   = "schedule.fired"   // contract.ScheduleFire: its due time, kind, the task it created or why none
	ScheduleMissed  = "schedule.missed"  // fires not run under the schedule's policy: how many, the first and last due time
	ScheduleOutcome = "schedule.outcome" // contract.ScheduleFire with its task's final state

	// Conversations: the agent runtime's stored conversations.
	ConversationSaved           = "conversation.saved"            // a conversation's new revision
	ConversationBudgetExhausted = "conversation.budget_exhausted" // an agent ran out of budget
	ConversationCompacted       = "conversation.compacted"        // older turns replaced by a summary

	// Tasks: posted to an Agent's conversation by a member or the Agent's runtime, claimed
	// by the runtime under a lease (again to renew it), and reported.
	TaskPosted   = "task.posted"   // the task as posted
	TaskClaimed  = "task.claimed"  // the task, attempt, lease end, whether it is a wake; on a renewal, what the run waits on
	TaskReported = "task.reported" // the task, attempt, state, what it waits on, the result

	// The worker docket start runs for a Connection, as docket start reports its state.
	WorkerRuntimeReported = "worker.runtime_reported" // the Connection and the state of its supervised worker

	// Holds: a Case paused and resumed, appended with the Case record they changed.
	CaseHeld     = "case.held"     // the Case and the hold placed on it
	CaseReleased = "case.released" // the Case, the hold released, who released it and whether the Case runs again
	// A member's cancel of a task; the task's end follows in task.reported (state
	// cancelled), at once for a task no runtime claimed yet.
	TaskCancelRequested = "task.cancel_requested" // the task, and who asked
	// Budgets the authority holds (docs/budgets.md): a member's set of one, and each window
	// reaching its warning share or stopping a request, once per window. The charges of
	// model requests are not events: each request's usage is in its conversation.saved.
	BudgetSet       = "budget.set"       // the budget's limits, version, and whether its window was reset
	BudgetWarned    = "budget.warned"    // contract.BudgetCrossing: the window reached its warning share
	BudgetExhausted = "budget.exhausted" // contract.BudgetCrossing: a model request was not sent
	BudgetRemoved   = "budget.removed"   // a member's removal of a budget: its name and the version removed
	// Tool locks taken back and approvals changed. Like tool.locked, each changes the
	// built-in release of direct Actions (docs/workers.md, "Direct Actions"), so a cached
	// Board is rebuilt past one.
	ToolUnlocked    = "tool.unlocked"     // the tool lock as it was removed
	ToolApprovalSet = "tool.approval_set" // the tool lock with its new approval

	// Notices (docs/notices.md): a notice sent to a member's webhook or e-mail, or given
	// up after its retries; never the webhook's URL past its host, never a secret.
	NoticeDelivered = "notice.delivered" // the notice, its subscription, kind, subject, where it went (scheme://host/… only) and attempts
	NoticeFailed    = "notice.failed"    // the same, and why the last attempt failed
)

// Kind is one entry of the catalog.
type Kind struct {
	Type string
	// Board is whether an event of Type may be appended in a transaction that changes a
	// Board's nodes, Cases or releases.
	Board bool
	// Payload is the zero value of Type's payload type, whose EventType is Type.
	Payload Payload
}

// Catalog lists every event type the authority appends, in the order above, with its
// payload type. A type is added at the end, with its payload type and a golden file of
// its bytes under testdata (see FormatVersion).
var Catalog = []Kind{
	{ProjectCreated, false, ProjectCreatedData{}},
	{MemberCreated, false, MemberCreatedData{}},
	{AgentCreated, false, AgentCreatedData{}},
	{AgentTokenReplaced, false, AgentTokenReplacedData{}},
	{AgentRevoked, false, AgentRevokedData{}},
	{ConnectionCreated, false, ConnectionCreatedData{}},
	{ConnectionRevoked, true, ConnectionRevokedData{}}, // its locks leave the built-in release of direct Actions
	{SourceBound, false, SourceBoundData{}},
	{ToolLocked, true, ToolLockedData{}},
	{DelegateCreated, false, DelegateCreatedData{}},
	{DelegateRevoked, false, DelegateRevokedData{}},
	{CardRecorded, false, CardRecordedData{}},
	{CardConfirmed, false, CardConfirmedData{}},
	{CardRan, false, CardRanData{}},
	{CardDeclined, false, CardDeclinedData{}},
	{CardVoided, false, CardVoidedData{}},
	{CardExempted, false, CardExemptedData{}},
	{CapabilityInstalled, true, CapabilityInstalledData{}},
	{CaseOpened, true, CaseOpenedData{}},
	{CaseClosed, true, CaseClosedData{}},
	{BatchApplied, true, BatchAppliedData{}},
	{ActionApplied, true, ActionAppliedData{}},
	{ActionCompleted, true, ActionCompletedData{}},
	{BoardRecorded, true, BoardRecordedData{}},
	{OpAdmitted, false, OpAdmittedData{}},
	{OpChanged, false, OpChangedData{}},
	{OpAcknowledged, false, OpAcknowledgedData{}},
	{OpWaiting, false, OpWaitingData{}},
	{RequestCreated, false, RequestCreatedData{}},
	{RequestChanged, false, RequestChangedData{}},
	{ArtifactIssued, false, ArtifactIssuedData{}},
	{HookReported, false, HookReportedData{}},
	{LeaseAcquired, false, LeaseAcquiredData{}},
	{LeaseRenewed, false, LeaseRenewedData{}},
	{LeaseReleased, false, LeaseReleasedData{}},
	{WorkClaimed, false, WorkClaimedData{}},
	{WorkReported, false, WorkReportedData{}},
	{PolicyPublished, false, PolicyPublishedData{}},
	{LevelSet, false, LevelSetData{}},
	{RiskAcknowledged, false, RiskAcknowledgedData{}},
	{RunWindowOpened, false, RunWindowOpenedData{}},
	{ProfileSet, false, ProfileSetData{}},
	{RuntimeReported, false, RuntimeReportedData{}},
	{RecoveryActed, false, RecoveryActedData{}},
	{RecoveryRefused, false, RecoveryRefusedData{}},
	{CheckpointSigned, false, CheckpointSignedData{}},
	{ScheduleCreated, false, ScheduleCreatedData{}},
	{SchedulePaused, false, SchedulePausedData{}},
	{ScheduleResumed, false, ScheduleResumedData{}},
	{ScheduleDeleted, false, ScheduleDeletedData{}},
	{ScheduleFired, false, ScheduleFiredData{}},
	{ScheduleMissed, false, ScheduleMissedData{}},
	{ScheduleOutcome, false, ScheduleOutcomeData{}},
	{ConversationSaved, false, ConversationSavedData{}},
	{ConversationBudgetExhausted, false, ConversationBudgetExhaustedData{}},
	{TaskPosted, false, TaskPostedData{}},
	{TaskClaimed, false, TaskClaimedData{}},
	{TaskReported, false, TaskReportedData{}},
	{WorkerRuntimeReported, false, WorkerRuntimeReportedData{}},
	{CaseHeld, true, CaseHeldData{}},
	{CaseReleased, true, CaseReleasedData{}},
	{TaskCancelRequested, false, TaskCancelRequestedData{}},
	{BudgetSet, false, BudgetSetData{}},
	{BudgetWarned, false, BudgetWarnedData{}},
	{BudgetExhausted, false, BudgetExhaustedData{}},
	{ConversationCompacted, false, ConversationCompactedData{}},
	{ToolUnlocked, true, ToolUnlockedData{}},
	{ToolApprovalSet, true, ToolApprovalSetData{}},
	{NoticeDelivered, false, NoticeDeliveredData{}},
	{NoticeFailed, false, NoticeFailedData{}},
	{MaterialAdded, false, MaterialAddedData{}},
	{MaterialDisclosureSet, false, MaterialDisclosureSetData{}},
	{BlueprintSet, false, BlueprintSetData{}},
	{BlueprintRemoved, false, BlueprintRemovedData{}},
	{BudgetRemoved, false, BudgetRemovedData{}},
}

var neutral = func() map[string]bool {
	m := make(map[string]bool, len(Catalog))
	for _, k := range Catalog {
		if !k.Board {
			m[k.Type] = true
		}
	}
	return m
}()

// ChangesBoard reports whether an event of type typ may change a Board. A type the
// catalog does not list may: a cached Board is rebuilt rather than trusted past it.
func ChangesBoard(typ string) bool { return !neutral[typ] }

// ChangesSetup reports whether an event of type typ may change which Tools are locked on
// a live Connection. Every write to Connections, Sources and tool locks appends one of
// these, in the Connection's project.
func ChangesSetup(typ string) bool {
	return strings.HasPrefix(typ, "connection.") || strings.HasPrefix(typ, "tool.") || strings.HasPrefix(typ, "source.")
}

// Materials (docs/materials.md): what the authority learns of a file a person hands an
// Agent, never its bytes.
const (
	MaterialAdded         = "material.added"          // a material's name, size, media type and sha256, for an Agent
	MaterialDisclosureSet = "material.disclosure_set" // whether a material's content may go to the Agent's model provider
)

// Blueprints (docs/agents.md, "Blueprints"): a member's named templates of Agent
// profiles. Never a model key.
const (
	BlueprintSet     = "blueprint.set"     // the blueprint's name, spec and digest
	BlueprintRemoved = "blueprint.removed" // the blueprint's name
)
