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
}
