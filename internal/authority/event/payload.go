package event

import (
	"encoding/json"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// A Payload is the data of one event: each type of the catalog has its own payload type,
// whose EventType names it, so that an appended event's type and data never disagree.
// Its JSON is what the log stores and what the hash chain makes permanent: the golden
// files under testdata hold today's bytes of each (see docs/architecture.md, "Event
// catalog").
type Payload interface {
	EventType() string
}

// Payload types are named for their event type's constant with Data after it. Types
// whose events share one shape are defined over that shape (Operation, Lease, Action,
// Recovery, ScheduleStep, IDRef) and converted to and from it.

// Identities and setup.

// ProjectCreatedData is the project record.
type ProjectCreatedData struct{ contract.Project }

// MemberCreatedData is the member record, never a secret.
type MemberCreatedData struct{ contract.Member }

// AgentCreatedData is the agent record.
type AgentCreatedData struct{ contract.Agent }

// IDRef names the record an event is about by its id alone.
type IDRef struct {
	ID string `json:"id"`
}

// AgentTokenReplacedData names the agent whose token was replaced, never the token.
type AgentTokenReplacedData IDRef

// AgentRevokedData names the agent revoked.
type AgentRevokedData IDRef

// ConnectionCreatedData is the connection record, never its key.
type ConnectionCreatedData struct{ contract.Connection }

// ConnectionRevokedData names the connection revoked.
type ConnectionRevokedData IDRef

// SourceBoundData is the source binding, with its digest.
type SourceBoundData struct{ contract.Source }

// ToolLockedData is the tool lock.
type ToolLockedData struct{ contract.ToolLock }

// ToolUnlockedData is the tool lock as it was when a member removed it.
type ToolUnlockedData struct{ contract.ToolLock }

// ToolApprovalSetData is the tool lock with the approval a member set on it.
type ToolApprovalSetData struct{ contract.ToolLock }

// DelegateCreatedData is the delegate record, never its token.
type DelegateCreatedData struct{ contract.Delegate }

// DelegateRevokedData names the delegate revoked and why: "revoked" (by its member) or
// "signed_out" (its member's last session ended).
type DelegateRevokedData struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Cards.

// CardRecordedData is the card as recorded, open, never a secret.
type CardRecordedData struct{ contract.Card }

// CardConfirmedData is the card as a member confirmed it, re-bound, before its call runs.
type CardConfirmedData struct{ contract.Card }

// CardRanData is the card's id and its call's outcome (status, error code), never the
// answer.
type CardRanData struct {
	ID      string               `json:"id"`
	Outcome contract.CardOutcome `json:"outcome"`
}

// CardDeclinedData is the card as a member declined it, with the reason.
type CardDeclinedData struct{ contract.Card }

// CardVoidedData is the card as voided, with what changed or why its delegate ended.
type CardVoidedData struct{ contract.Card }

// CardExemptedData is a consent call the delegate policy exempts from a card: the call,
// its body's digest, the delegate and the policy version.
type CardExemptedData struct {
	Operation  string    `json:"operation"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	BodyDigest string    `json:"bodyDigest"`
	Reason     string    `json:"reason,omitempty"`
	Delegate   string    `json:"delegate"`
	Policy     int64     `json:"policyVersion"`
	At         time.Time `json:"at"`
}

// Capabilities and Board changes.

// CapabilityInstalledData is the release installed.
type CapabilityInstalledData struct{ contract.Release }

// CaseOpenedData is the Case opened.
type CaseOpenedData struct{ contract.Case }

// CaseClosedData is the Case's closure receipt.
type CaseClosedData struct{ contract.ClosureReceipt }

// CaseHeldData is a hold placed on a Case, which pauses it.
type CaseHeldData struct {
	CaseID contract.CaseID   `json:"caseId"`
	Hold   contract.CaseHold `json:"hold"`
}

// CaseReleasedData is a hold released from a Case by by; Running says the Case runs
// again, no hold being left.
type CaseReleasedData struct {
	CaseID  contract.CaseID    `json:"caseId"`
	Hold    contract.CaseHold  `json:"hold"`
	By      contract.Principal `json:"by"`
	Running bool               `json:"running,omitempty"`
}

// BatchAppliedData is a batch's outcome: per operation, the node it created or retracted,
// and the node records written, in order.
type BatchAppliedData struct {
	NodeIDs []string              `json:"nodeIds"`
	Changes []contract.NodeChange `json:"changes"`
}

// Action is an Action applied to the Board: its name, its Case ("" for a Case-free
// Action, written out) and its parameters (null when none).
type Action struct {
	Action string          `json:"action"`
	CaseID contract.CaseID `json:"caseId"`
	Params contract.Args   `json:"params"`
}

// ActionAppliedData is an Action a member or an Agent applied.
type ActionAppliedData Action

// ActionCompletedData is an executed Action whose outcome was applied.
type ActionCompletedData Action

// BoardRecordedData is the full content of every node and Case record one Board change
// wrote (a node's atom, tier, provenance and premises; the tool rows an Action's outcome
// turned into facts are those nodes), and the ids it deleted, appended with that
// change's event, so that the log, not the node table, is the Board's truth: the node
// table is a projection of these events, which the boards package replays to check it.
type BoardRecordedData struct {
	// Snapshot marks the record a log written before records existed gets at its first
	// start on a version that records: it adopts the node table as found then, replacing
	// what the log said before.
	Snapshot bool              `json:"snapshot,omitempty"`
	Nodes    []json.RawMessage `json:"nodes,omitempty"`   // node records, as the node table holds them
	Deleted  []string          `json:"deleted,omitempty"` // node ids removed
	Cases    []json.RawMessage `json:"cases,omitempty"`   // Case records, as the node table holds them
}

// Operations, Requests and artifacts.

// Operation is one state of an Operation, the shape of every operation.* event.
type Operation struct {
	Agent    string                  `json:"agent"`
	Ordinal  int64                   `json:"ordinal"`
	Tool     string                  `json:"tool,omitempty"`
	Label    string                  `json:"label,omitempty"`
	Input    json.RawMessage         `json:"input,omitempty"` // the call's arguments
	State    contract.OperationState `json:"state,omitempty"`
	Stage    contract.OperationStage `json:"stage,omitempty"`
	Decision string                  `json:"decision,omitempty"`
	Reason   string                  `json:"reason,omitempty"`
	// ReasonCode says why in a word: why queued work waits (an OpWaiting event) or why a
	// worker's report failed it (contract.CodeWorkerRefused).
	ReasonCode contract.Code              `json:"reasonCode,omitempty"`
	ErrorCode  contract.Code              `json:"errorCode,omitempty"`
	Result     json.RawMessage            `json:"result,omitempty"`
	Execution  *contract.ExecutionRequest `json:"execution,omitempty"` // queued for dispatch
	// RetryOf is the Operation a recovery act retries, and Attempt which attempt this is
	// (the first run is 1; 0 in older logs means 1).
	RetryOf int64 `json:"retryOf,omitempty"`
	Attempt int64 `json:"attempt,omitempty"`
	// TraceParent is the W3C traceparent of the call that made the Operation (on its
	// admission, and on each event that queues its Execution), kept in the log so that
	// the worker's span joins the call's trace even when the work is served after a
	// restart or served again; "" when the call was not traced.
	TraceParent string `json:"traceParent,omitempty"`
}

// OpAdmittedData is a new Operation in its first state.
type OpAdmittedData Operation

// OpChangedData is a later state of an Operation.
type OpChangedData Operation

// OpAcknowledgedData names the Operation whose outcome the agent saw.
type OpAcknowledgedData Operation

// OpWaitingData says why queued work is not dispatched (ReasonCode, Reason), or that it
// no longer waits for a reason.
type OpWaitingData Operation

// RequestCreatedData is the Request made.
type RequestCreatedData struct{ contract.Request }

// RequestChangedData is the Request in its new state.
type RequestChangedData struct{ contract.Request }

// ArtifactIssuedData is an artifact's ref, its Agent and its blob's hash (hex sha256,
// as the store names blobs) and size.
type ArtifactIssuedData struct {
	Ref   string `json:"ref"`
	Agent string `json:"agent"`
	Hash  string `json:"hash"`
	Size  int64  `json:"size"`
	// ExpiresAt is when ReadArtifact stops reading it: the issue time plus the retention
	// in force then. Zero for artifacts issued before retention was kept.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// HookReportedData is a coding agent's call that ran: the Operation and its outcome.
type HookReportedData struct {
	Agent   string               `json:"agent"`
	Ordinal int64                `json:"ordinal"`
	Outcome contract.HookOutcome `json:"outcome"`
}

// Lease is a worker's lease on a Connection, the shape of every worker.lease.* event.
type Lease struct {
	Connection contract.ConnectionID `json:"connection"`
	WorkerID   string                `json:"workerId"`
	Generation int64                 `json:"workerGeneration"`
	ExpiresAt  time.Time             `json:"expiresAt"`
}

// LeaseAcquiredData is the lease granted.
type LeaseAcquiredData Lease

// LeaseRenewedData is a lease renewed; appended by older versions only.
type LeaseRenewedData Lease

// LeaseReleasedData is the lease given up.
type LeaseReleasedData Lease

// WorkClaimedData is a claim of queued work and the Source it runs against.
type WorkClaimedData struct {
	Work        string                `json:"work"`
	Agent       string                `json:"agent"`
	Ordinal     int64                 `json:"ordinal"`
	Connection  contract.ConnectionID `json:"connection"`
	WorkerID    string                `json:"workerId"`
	Generation  int64                 `json:"workerGeneration"`
	GrantDigest string                `json:"grantDigest"`
	Source      *contract.Source      `json:"source,omitempty"` // nil for a source-free Tool
}

// WorkReportedData is a worker's report of claimed work: its digest, whether it was
// judged (a report under a lease that was lost), and the refusal it carried.
type WorkReportedData struct {
	Work     string        `json:"work"`
	Digest   string        `json:"digest"`
	Judged   bool          `json:"judged,omitempty"`
	Code     contract.Code `json:"errorCode,omitempty"`
	Teaching string        `json:"teaching,omitempty"`
}

// Policies and autonomy.

// PolicyPublishedData is the policy version published, with its text.
type PolicyPublishedData struct{ contract.PolicyVersion }

// LevelSetData is an Agent's new autonomy level and the policy version it was set under.
type LevelSetData struct {
	Agent  contract.AgentID `json:"agent"`
	Level  string           `json:"level"`
	Policy int64            `json:"policyVersion"`
}

// RiskAcknowledgedData is the Agent, the text a member read and its digest, and the
// policy version.
type RiskAcknowledgedData struct {
	Agent  contract.AgentID `json:"agent"`
	Text   string           `json:"text"`
	Digest string           `json:"digest"`
	Policy int64            `json:"policyVersion"`
}

// RunWindowOpenedData is the Agent and its run window.
type RunWindowOpenedData struct {
	Agent contract.AgentID `json:"agent"`
	contract.RunWindow
}

// Profiles: never a model key.

// ProfileSetData is the Agent and its profile spec.
type ProfileSetData struct {
	Agent contract.AgentID `json:"agent"`
	contract.ProfileSpec
	// Blueprint names the blueprint the spec was copied from, at its digest; nil when the
	// spec was set field by field.
	Blueprint *contract.BlueprintRef `json:"blueprint,omitempty"`
}

// RuntimeReportedData is the Agent and its runtime's state.
type RuntimeReportedData struct {
	Agent contract.AgentID `json:"agent"`
	contract.RuntimeStatus
}

// Recovery.

// Recovery is an act on a failed Operation, the shape of every recovery.* event: the
// act, the Operation, the actor, the reason, the policy version and the result.
type Recovery struct {
	Act       string             `json:"act"`
	Operation string             `json:"operation"`
	Actor     contract.Principal `json:"actor"`
	Reason    string             `json:"reason"`
	Policy    int64              `json:"policyVersion"`
	Result    string             `json:"result"`
}

// RecoveryActedData is an act done.
type RecoveryActedData Recovery

// RecoveryRefusedData is an act refused or sent to a member; Result says which.
type RecoveryRefusedData Recovery

// Signatures.

// CheckpointSignedData is a signed checkpoint of the head before it, as
// internal/signing makes it.
type CheckpointSignedData struct {
	Project   string    `json:"project"`
	Seq       int64     `json:"seq"`
	Hash      string    `json:"hash"` // hex sha256, as events show their hashes
	At        time.Time `json:"at"`
	Reason    string    `json:"reason"`
	Case      string    `json:"case,omitempty"`
	KeyID     string    `json:"kid"`
	Signature string    `json:"sig"` // base64url Ed25519 signature of the checkpoint's message
}

// Schedules.

// ScheduleCreatedData is the schedule made.
type ScheduleCreatedData struct{ contract.Schedule }

// ScheduleStep is a member's act on a schedule: which, and its next fire (nil when none).
type ScheduleStep struct {
	Schedule contract.ScheduleID `json:"schedule"`
	NextFire *time.Time          `json:"nextFire,omitempty"`
}

// SchedulePausedData names the schedule paused.
type SchedulePausedData ScheduleStep

// ScheduleResumedData names the schedule resumed and its next fire.
type ScheduleResumedData ScheduleStep

// ScheduleDeletedData names the schedule deleted.
type ScheduleDeletedData ScheduleStep

// ScheduleFiredData is one fire: its due time, kind, the task it created or why none.
type ScheduleFiredData struct{ contract.ScheduleFire }

// ScheduleMissedData is fires not run under the schedule's policy: how many, the first
// and last due time, the fire made for them and the next.
type ScheduleMissedData struct {
	Schedule contract.ScheduleID   `json:"schedule"`
	Policy   contract.MissedPolicy `json:"policy"`
	Count    int                   `json:"count"`
	AtLeast  bool                  `json:"atLeast,omitempty"`
	First    time.Time             `json:"first"`
	Last     time.Time             `json:"last"`
	RunAt    *time.Time            `json:"runAt,omitempty"` // the due time of the fire made for them
	NextFire time.Time             `json:"nextFire"`
}

// ScheduleOutcomeData is a fire with its task's final state.
type ScheduleOutcomeData struct{ contract.ScheduleFire }

// Conversations.

// ConversationSavedData is a conversation's new revision: the messages from From on,
// replacing those after it.
type ConversationSavedData struct {
	Conversation contract.ConversationID `json:"conversation"`
	Prev         int64                   `json:"prev"`
	From         int                     `json:"from"`
	Count        int                     `json:"count"` // messages after this save
	Messages     []json.RawMessage       `json:"messages"`
	State        json.RawMessage         `json:"state,omitempty"`
}

// ConversationBudgetExhaustedData is an Agent's conversation that ran out of budget.
type ConversationBudgetExhaustedData struct {
	Conversation contract.ConversationID `json:"conversation"`
	contract.BudgetExhausted
}

// ConversationCompactedData is an Agent's conversation whose older turns its runtime
// replaced by a summary the model wrote, nearing the model's context window: the
// replaced messages are named by Digest, the SHA-256 of their JSON array, which is also
// the hash of the blob that keeps them for the console.
type ConversationCompactedData struct {
	Conversation contract.ConversationID `json:"conversation"`
	Digest       string                  `json:"digest"`   // hex sha256 of the replaced messages' JSON array; their blob
	Messages     int                     `json:"messages"` // how many messages were replaced
	Turns        int                     `json:"turns"`    // model turns among them, earlier summaries' included
	Size         int64                   `json:"size"`     // bytes of the replaced messages' JSON array
	Summary      string                  `json:"summary"`  // the summary that replaced them
}

// Tasks.

// TaskPostedData is the task as posted.
type TaskPostedData struct {
	Task contract.Task `json:"task"`
}

// TaskClaimedData is a claim of a task, or the renewal of one (the same attempt again).
type TaskClaimedData struct {
	Task       contract.TaskID `json:"task"`
	Attempt    int             `json:"attempt"`
	LeaseUntil time.Time       `json:"leaseUntil"`
	Wake       bool            `json:"wake,omitempty"`
	// Wait is what the run waited on when its runtime renewed the claim; a claim (not a
	// renewal) has none. Since format version 2.
	Wait *contract.TaskRunWait `json:"wait,omitempty"`
}

// TaskReportedData is how an attempt of a task ended.
type TaskReportedData struct {
	Task contract.TaskID `json:"task"`
	contract.TaskReport
}

// TaskCancelRequestedData is a member's cancel of a task. Since format version 6.
type TaskCancelRequestedData struct {
	Task contract.TaskID `json:"task"`
	contract.TaskCancel
}

func (ProjectCreatedData) EventType() string              { return ProjectCreated }
func (MemberCreatedData) EventType() string               { return MemberCreated }
func (AgentCreatedData) EventType() string                { return AgentCreated }
func (AgentTokenReplacedData) EventType() string          { return AgentTokenReplaced }
func (AgentRevokedData) EventType() string                { return AgentRevoked }
func (ConnectionCreatedData) EventType() string           { return ConnectionCreated }
func (ConnectionRevokedData) EventType() string           { return ConnectionRevoked }
func (SourceBoundData) EventType() string                 { return SourceBound }
func (ToolLockedData) EventType() string                  { return ToolLocked }
func (ToolUnlockedData) EventType() string                { return ToolUnlocked }
func (ToolApprovalSetData) EventType() string             { return ToolApprovalSet }
func (DelegateCreatedData) EventType() string             { return DelegateCreated }
func (DelegateRevokedData) EventType() string             { return DelegateRevoked }
func (CardRecordedData) EventType() string                { return CardRecorded }
func (CardConfirmedData) EventType() string               { return CardConfirmed }
func (CardRanData) EventType() string                     { return CardRan }
func (CardDeclinedData) EventType() string                { return CardDeclined }
func (CardVoidedData) EventType() string                  { return CardVoided }
func (CardExemptedData) EventType() string                { return CardExempted }
func (CapabilityInstalledData) EventType() string         { return CapabilityInstalled }
func (CaseOpenedData) EventType() string                  { return CaseOpened }
func (CaseClosedData) EventType() string                  { return CaseClosed }
func (NoticeDeliveredData) EventType() string             { return NoticeDelivered }
func (NoticeFailedData) EventType() string                { return NoticeFailed }
func (CaseHeldData) EventType() string                    { return CaseHeld }
func (CaseReleasedData) EventType() string                { return CaseReleased }
func (BatchAppliedData) EventType() string                { return BatchApplied }
func (ActionAppliedData) EventType() string               { return ActionApplied }
func (ActionCompletedData) EventType() string             { return ActionCompleted }
func (BoardRecordedData) EventType() string               { return BoardRecorded }
func (OpAdmittedData) EventType() string                  { return OpAdmitted }
func (OpChangedData) EventType() string                   { return OpChanged }
func (OpAcknowledgedData) EventType() string              { return OpAcknowledged }
func (OpWaitingData) EventType() string                   { return OpWaiting }
func (RequestCreatedData) EventType() string              { return RequestCreated }
func (RequestChangedData) EventType() string              { return RequestChanged }
func (ArtifactIssuedData) EventType() string              { return ArtifactIssued }
func (HookReportedData) EventType() string                { return HookReported }
func (LeaseAcquiredData) EventType() string               { return LeaseAcquired }
func (LeaseRenewedData) EventType() string                { return LeaseRenewed }
func (LeaseReleasedData) EventType() string               { return LeaseReleased }
func (WorkClaimedData) EventType() string                 { return WorkClaimed }
func (WorkReportedData) EventType() string                { return WorkReported }
func (PolicyPublishedData) EventType() string             { return PolicyPublished }
func (LevelSetData) EventType() string                    { return LevelSet }
func (RiskAcknowledgedData) EventType() string            { return RiskAcknowledged }
func (RunWindowOpenedData) EventType() string             { return RunWindowOpened }
func (ProfileSetData) EventType() string                  { return ProfileSet }
func (RuntimeReportedData) EventType() string             { return RuntimeReported }
func (RecoveryActedData) EventType() string               { return RecoveryActed }
func (RecoveryRefusedData) EventType() string             { return RecoveryRefused }
func (CheckpointSignedData) EventType() string            { return CheckpointSigned }
func (ScheduleCreatedData) EventType() string             { return ScheduleCreated }
func (SchedulePausedData) EventType() string              { return SchedulePaused }
func (ScheduleResumedData) EventType() string             { return ScheduleResumed }
func (ScheduleDeletedData) EventType() string             { return ScheduleDeleted }
func (ScheduleFiredData) EventType() string               { return ScheduleFired }
func (ScheduleMissedData) EventType() string              { return ScheduleMissed }
func (ScheduleOutcomeData) EventType() string             { return ScheduleOutcome }
func (ConversationSavedData) EventType() string           { return ConversationSaved }
func (ConversationBudgetExhaustedData) EventType() string { return ConversationBudgetExhausted }
func (ConversationCompactedData) EventType() string       { return ConversationCompacted }
func (TaskPostedData) EventType() string                  { return TaskPosted }
func (TaskClaimedData) EventType() string                 { return TaskClaimed }
func (TaskReportedData) EventType() string                { return TaskReported }
func (TaskCancelRequestedData) EventType() string         { return TaskCancelRequested }

// Notice is a notice's outcome as its events record it: the notice's id (the
// Docket-Notice-Id its receiver sees), its subscription and member, its kind and subject
// (a digest's first; Count says how many it carried), its channel and Destination, which
// is a webhook's scheme://host/… or an e-mail address, never a URL's path or query.
type Notice struct {
	ID           string `json:"id"`
	Subscription string `json:"subscription"`
	Member       string `json:"member"`
	Kind         string `json:"kind"`
	Subject      string `json:"subject"`
	Count        int    `json:"count,omitempty"`
	Channel      string `json:"channel"`
	Destination  string `json:"destination"`
	Attempts     int    `json:"attempts"`
	Error        string `json:"error,omitempty"` // why the last attempt failed, without the URL's secret parts
}

// NoticeDeliveredData is a notice its receiver accepted.
type NoticeDeliveredData Notice

// NoticeFailedData is a notice given up after its attempts, with why the last failed.
type NoticeFailedData Notice

// MaterialAddedData is a material added to an Agent's conversation: its metadata and the
// basis of its digest, never its bytes.
type MaterialAddedData struct {
	Agent contract.AgentID `json:"agent"`
	contract.MaterialAdd
	Basis string `json:"basis"`
}

// MaterialDisclosureSetData says whether material's content may be sent to Agent's
// model provider.
type MaterialDisclosureSetData struct {
	Agent    contract.AgentID `json:"agent"`
	Material string           `json:"material"`
	Allowed  bool             `json:"allowed"`
}

func (MaterialAddedData) EventType() string         { return MaterialAdded }
func (MaterialDisclosureSetData) EventType() string { return MaterialDisclosureSet }

// BlueprintSetData is a blueprint as a member set it, with the digest of its spec.
type BlueprintSetData struct {
	Name string `json:"name"`
	contract.BlueprintSpec
	Digest contract.Digest `json:"digest"`
}

// BlueprintRemovedData names a removed blueprint.
type BlueprintRemovedData struct {
	Name string `json:"name"`
}

func (BlueprintSetData) EventType() string     { return BlueprintSet }
func (BlueprintRemovedData) EventType() string { return BlueprintRemoved }
