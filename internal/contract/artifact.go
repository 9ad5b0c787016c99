package contract

import "time"

// Error codes of artifacts kept by the authority (docs/mcp.md, "Artifacts").
const (
	CodeArtifactTooLarge Code = "artifact_too_large" // an artifact over MaxArtifactBytes
	CodeArtifactExpired  Code = "artifact_expired"   // a ReadArtifact ref past the project's artifact retention
)

// MaxArtifactBytes bounds one artifact: a tool result kept whole for ReadArtifact.
const MaxArtifactBytes = 8 << 20

// DefaultArtifactRetention is how long an artifact can be read when the project set no
// retention of its own.
const DefaultArtifactRetention = 30 * 24 * time.Hour

// ArtifactPut is what an Agent's runtime sends to keep a tool result over its inline
// bound as an artifact of the Agent (POST /api/v1/artifacts).
type ArtifactPut struct {
	Tool    string `json:"tool"`    // the tool that produced it, e.g. "QueryBoard"
	CallID  string `json:"callId"`  // the model's id of the call
	Content string `json:"content"` // the whole result, as the tool returned it
}

// ArtifactRef is the answer to an [ArtifactPut]: the reference ReadArtifact reads. The
// ref is derived from the Agent and the content's digest, so the same content kept twice
// by one Agent has one ref.
type ArtifactRef struct {
	Ref       string    `json:"ref"`
	Size      int64     `json:"size"`
	Digest    Digest    `json:"digest"`
	ExpiresAt time.Time `json:"expiresAt"`
}
