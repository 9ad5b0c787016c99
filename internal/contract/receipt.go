package contract

import "time"

// ClosureReceipt is the durable record a Case's closure writes. The
// authority signs and stores it; the Board builds it from the Case's frozen pins and the
// acceptance it certified.
type ClosureReceipt struct {
	CaseID         CaseID      `json:"caseId"`
	Root           string      `json:"root"`
	CaseType       string      `json:"caseType"`
	BusinessKey    Args        `json:"businessKey"`
	Disposition    Disposition `json:"disposition"`
	Reason         string      `json:"reason,omitempty"`
	Release        string      `json:"release"`
	ReleaseDigest  string      `json:"releaseDigest"`
	ContractDigest string      `json:"contractDigest"`
	KeyDigest      string      `json:"keyDigest"`
	Certified      bool        `json:"certified"`

	// Acceptance is the derived acceptance node that certified the root, with its tier and
	// the sha256 of its canonical explanation tree; empty unless Certified.
	Acceptance        *Node  `json:"acceptance,omitempty"`
	ExplanationDigest string `json:"explanationDigest,omitempty"`

	// Exploratory marks the receipt of an exploration Case: nothing it held was certified
	// as project truth, and its Case-local nodes are gone.
	Exploratory bool      `json:"exploratory,omitempty"`
	ClosedBy    Principal `json:"closedBy"`
	At          time.Time `json:"at"`
}
