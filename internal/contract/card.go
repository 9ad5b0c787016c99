package contract

import (
	"encoding/json"
	"time"
)

// Card codes.
const (
	// CodeCardRecorded answers a delegate's consent call (202): nothing ran, a card was
	// recorded, and a member confirms it.
	CodeCardRecorded Code = "card_recorded"
	CodeCardVoid     Code = "card_void"       // the card's subject changed since it was recorded, or its delegate ended
	CodeCardClosed   Code = "card_closed"     // the card was confirmed, declined or voided already
	CodeCardLimit    Code = "card_limit"      // the delegate has MaxOpenCards open cards in the project
	CodeCardReason   Code = "reason_required" // a delegate's consent call gave no reason
	CodeCardSecret   Code = "secret_in_card"  // a consent call's body holds a credential, which a card never keeps
)

// MaxOpenCards bounds the open cards of one delegate in one project.
const MaxOpenCards = 20

// MaxCardReason bounds a card's reason in bytes.
const MaxCardReason = 500

// ReasonHeader carries a delegate's reason for a consent call: the request body is the
// operation's own, so the reason travels beside it. The CLI sends DOCKET_REASON in it.
const ReasonHeader = "Docket-Reason"

// CardState is where a card is in its life: open until a member confirms or declines it,
// or until it is voided.
type CardState string

// Card states.
const (
	CardOpen      CardState = "open"
	CardConfirmed CardState = "confirmed"
	CardDeclined  CardState = "declined"
	CardVoid      CardState = "void"
)

// CardSubject is what a card's call acts on, as it stood: its kind (agent, connection,
// source, tool, capability, request), the reference the call names it by, and the version
// read then — the digest of its record, or "absent" for one the call would create.
type CardSubject struct {
	Kind    string `json:"kind"`
	Ref     string `json:"ref"`
	Version string `json:"version"`
}

// SubjectAbsent is the version of a subject that does not exist yet.
const SubjectAbsent = "absent"

// Card is a delegate's consent call recorded instead of run: the exact call, why the
// delegate proposes it, what it changes, and its subject as it stood. A member confirms
// it (it then runs once, as that member) or declines it.
type Card struct {
	ID         string          `json:"id"`
	Project    ProjectID       `json:"project"`
	Delegate   string          `json:"delegate"` // the delegate's id
	Member     MemberID        `json:"member"`   // the member it acts for
	ProposedBy Principal       `json:"proposedBy"`
	Operation  string          `json:"operation"` // its name in docket operation list
	Method     string          `json:"method"`
	Path       string          `json:"path"`
	Body       json.RawMessage `json:"body,omitempty"` // the call's body, canonical JSON; never a secret
	BodyDigest string          `json:"bodyDigest"`     // sha256 over Body (RFC 8785)
	Reason     string          `json:"reason"`
	Changes    string          `json:"changes"`
	Subject    CardSubject     `json:"subject"`
	Policy     int64           `json:"policyVersion"` // the delegate policy version in force
	State      CardState       `json:"state"`
	CreatedAt  time.Time       `json:"createdAt"`
	ClosedAt   *time.Time      `json:"closedAt,omitempty"`
	ClosedBy   Principal       `json:"closedBy,omitempty"`
	// Why says why a closed card closed: the decline's reason, or what voided it.
	Why     string       `json:"why,omitempty"`
	Outcome *CardOutcome `json:"outcome,omitempty"`
}

// CardOutcome is how a confirmed card's call ended: its HTTP status and, when refused,
// its error code. The call's answer goes to the member who confirmed it and is not kept
// (it may hold a token shown once).
type CardOutcome struct {
	Status    int  `json:"status"`
	ErrorCode Code `json:"errorCode,omitempty"`
}

// CardAnswer is the 202 answer to a delegate's consent call.
type CardAnswer struct {
	Code     Code   `json:"errorCode"`
	Teaching string `json:"teaching"`
	Card     Card   `json:"card"`
}

// DeclineCardRequest is the body of a member's decline.
type DeclineCardRequest struct {
	Reason string `json:"reason,omitempty"`
}

// CardConfirmation answers a member's confirm: the card as it closed and the call's own
// answer, given this once.
type CardConfirmation struct {
	Card   Card            `json:"card"`
	Result json.RawMessage `json:"result,omitempty"`
}
