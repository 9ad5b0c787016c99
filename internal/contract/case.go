package contract

import "time"

// CaseID names a Case; the Board mints it.
type CaseID string

// CaseStatus is where a Case stands.
type CaseStatus string

// Case statuses.
const (
	CaseRunning CaseStatus = "running"
	CasePaused  CaseStatus = "paused"
	CaseClosed  CaseStatus = "closed"
)

// Disposition is how a Case was closed.
type Disposition string

// Dispositions. Only Completed needs a certified root; the others need a reason.
const (
	DispositionCompleted  Disposition = "completed"
	DispositionCancelled  Disposition = "cancelled"
	DispositionFailed     Disposition = "failed"
	DispositionAbandoned  Disposition = "abandoned"
	DispositionSuperseded Disposition = "superseded"
)

// ParseDisposition returns the Disposition named s.
func ParseDisposition(s string) (Disposition, error) {
	switch d := Disposition(s); d {
	case DispositionCompleted, DispositionCancelled, DispositionFailed, DispositionAbandoned, DispositionSuperseded:
		return d, nil
	}
	return "", Errorf(CodeInvalidArgument, "the disposition %q is unknown; use completed, cancelled, failed, abandoned or superseded", s)
}

// Case is an acceptance boundary as it is persisted and shown. The
// pins (ReleaseDigest, ContractDigest, KeyDigest) are frozen when the Case opens.
type Case struct {
	CaseID      CaseID     `json:"caseId"`
	Root        string     `json:"root"` // the node id of the Case's root goal
	CaseType    string     `json:"caseType"`
	BusinessKey Args       `json:"businessKey"`
	Status      CaseStatus `json:"status"`
	Exploration bool       `json:"exploration,omitempty"`

	Release        string `json:"release"`        // "id@version" of the release declaring the Case Type
	ReleaseDigest  string `json:"releaseDigest"`  // that release's digest
	ContractDigest string `json:"contractDigest"` // sha256 over the Case Type's contract
	KeyDigest      string `json:"keyDigest"`      // sha256 over the business key

	OpenedBy Principal `json:"openedBy"`
	OpenedAt time.Time `json:"openedAt"`

	// Terminal lists the once_per_case Actions that have succeeded in this Case.
	Terminal []string `json:"terminal,omitempty"`

	Disposition Disposition `json:"disposition,omitempty"`
	Reason      string      `json:"reason,omitempty"`
	ClosedAt    *time.Time  `json:"closedAt,omitempty"`

	// Holds are what pause the Case: it is paused while any stands and runs again when
	// the last is released (docs/console.md#pausing-a-case). HoldSeq counts the holds
	// ever placed on it, so that a hold's id is never reused.
	Holds   []CaseHold `json:"holds,omitempty"`
	HoldSeq int        `json:"holdSeq,omitempty"`
}

// HoldOwner is the kind of authority that owns a hold on a Case: only an owner of that
// kind releases it.
type HoldOwner string

// Hold owners.
const (
	// HoldMember is a member's hold, placed and released by any member of the project.
	HoldMember HoldOwner = "member"
	// HoldPolicy is a policy's hold, placed and released by the authority under the
	// policy it names, never by a person.
	HoldPolicy HoldOwner = "policy"
)

// CaseHold is one hold on a Case.
type CaseHold struct {
	ID     string    `json:"id"` // "hold-N", unique in its Case
	Owner  HoldOwner `json:"owner"`
	Policy string    `json:"policy,omitempty"` // the policy kind of a policy's hold, e.g. recovery
	// Subject is what a policy's hold waits for (an Operation, as agent.ordinal): a
	// policy holds a Case once per subject.
	Subject string    `json:"subject,omitempty"`
	By      Principal `json:"by"` // the member, or the principal acting under the policy
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

// PauseRequest asks to pause a Case with a member's hold.
type PauseRequest struct {
	Reason string `json:"reason"`
}

// ResumeRequest asks to release a member's hold on a Case: Hold names one, or every
// member's hold is released when it is empty. A policy's hold is never released so.
type ResumeRequest struct {
	Hold string `json:"hold,omitempty"`
}
