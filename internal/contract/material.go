package contract

import "time"

// Bases of a material's recorded digest: what stands behind it (docs/materials.md).
const (
	// MaterialAsserted: a member's docket start wrote the bytes into the material area
	// and computed the digest; the authority, which never sees the bytes, records it as
	// the member's assertion. Each read by the worker checks the bytes still have it.
	MaterialAsserted = "asserted"
)

// MaterialAdd is the fact a member records of a file added to an Agent's conversation:
// what the Board learns, never the bytes.
type MaterialAdd struct {
	Conversation string `json:"conversation,omitempty"` // the conversation it was added to; empty: the Agent's
	Name         string `json:"name"`
	Size         int64  `json:"size"`
	MediaType    string `json:"mediaType"`
	SHA256       string `json:"sha256"` // "sha256:" and 64 lowercase hex digits
}

// MaterialDisclosure sets whether a material's content may be sent to the Agent's model
// provider.
type MaterialDisclosure struct {
	Allowed bool `json:"allowed"`
}

// MaterialRead is one settled read of a material by an Agent's Operation, with the
// decision that let it run.
type MaterialRead struct {
	Agent   AgentID   `json:"agent"`
	Ordinal int64     `json:"ordinal"`
	At      time.Time `json:"at"`
	// Request is the Request the read waited on, and ApprovedBy and ApprovedAt who
	// approved it and when; empty when the read needed no decision (its approval set to
	// none).
	Request    RequestID `json:"request,omitempty"`
	ApprovedBy Principal `json:"approvedBy,omitempty"`
	ApprovedAt time.Time `json:"approvedAt,omitzero"`
}

// Material is a material as the authority keeps it, per Agent.
type Material struct {
	Agent     AgentID `json:"agent"`
	AgentName string  `json:"agentName"`
	MaterialAdd
	Basis   string    `json:"basis"` // MaterialAsserted
	AddedBy Principal `json:"addedBy"`
	AddedAt time.Time `json:"addedAt"`
	// Disclosed says whether the content may be sent to this Agent's model provider;
	// false until a member allows it.
	Disclosed    bool           `json:"disclosed"`
	DisclosureBy Principal      `json:"disclosureBy,omitempty"`
	DisclosureAt time.Time      `json:"disclosureAt,omitzero"`
	Reads        []MaterialRead `json:"reads,omitempty"`
}
