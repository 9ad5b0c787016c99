package contract

import (
	"encoding/json"
	"time"
)

// The console API's wire types (/api/v1). Requests are decoded strictly:
// an unknown field is refused. Secrets travel only in the one response that creates them
// (a session token, an agent token, a connection key) and in login and create requests.

// Page is one page of a list. Next is the cursor for the following page; empty when this
// page is the last.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// MinPassphrase is the shortest passphrase a member may choose, in bytes: the authority
// refuses a shorter one, and docket init asks again rather than end on it.
const MinPassphrase = 12

// LoginRequest asks for a session with a member's passphrase.
type LoginRequest struct {
	Name       string `json:"name"`
	Passphrase string `json:"passphrase"`
}

// SessionCreated answers a login. Token is shown once; a browser receives it as an
// HttpOnly cookie instead and sends CSRFToken in the X-CSRF-Token header on writes.
type SessionCreated struct {
	Token     string    `json:"token,omitempty"`
	CSRFToken string    `json:"csrfToken"`
	ExpiresAt time.Time `json:"expiresAt"`
	Member    Member    `json:"member"`
}

// Whoami describes the caller.
type Whoami struct {
	Kind     PrincipalKind `json:"kind"`
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Projects []ProjectID   `json:"projects"`
}

// Member is a person. The passphrase hash never leaves the authority.
type Member struct {
	ID        MemberID   `json:"id"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// CreateMemberRequest adds a member to the caller's projects.
type CreateMemberRequest struct {
	Name       string `json:"name"`
	Passphrase string `json:"passphrase"`
}

// Project is the unit of tenancy.
type Project struct {
	ID        ProjectID `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// CreateProjectRequest creates a project with the caller as its first member.
type CreateProjectRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Agent is a model-driven actor of one project. Its token is never shown again.
type Agent struct {
	ID        AgentID    `json:"id"`
	Project   ProjectID  `json:"project"`
	Name      string     `json:"name"`
	Kind      AgentKind  `json:"kind"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// CreateAgentRequest creates an Agent; Kind "" means "agent".
type CreateAgentRequest struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
	// Hook asks for a hook token ([PrefixHook]) for a coding agent's hook: it reaches
	// only the hook routes. Only an Agent of kind agent has one.
	Hook bool `json:"hook,omitempty"`
}

// AgentToken answers agent create and agent token: the token is shown this once.
type AgentToken struct {
	Agent Agent  `json:"agent"`
	Token string `json:"token"`
}

// Connection is the credential of a worker process. Its key is never shown again.
type Connection struct {
	ID        ConnectionID `json:"id"`
	Project   ProjectID    `json:"project"`
	Name      string       `json:"name"`
	CreatedAt time.Time    `json:"createdAt"`
	RevokedAt *time.Time   `json:"revokedAt,omitempty"`
}

// CreateConnectionRequest creates a Connection.
type CreateConnectionRequest struct {
	Name string `json:"name"`
}

// ConnectionKey answers connection create: the key is shown this once.
type ConnectionKey struct {
	Connection Connection `json:"connection"`
	Key        string     `json:"key"`
}

// Source is the public record of a Source bound to a Connection;
// its secret parts (root path, DSN, tokens) stay in the worker's vault.
type Source struct {
	Connection ConnectionID `json:"connection,omitempty"`
	Name       string       `json:"name"`
	Type       string       `json:"type"` // file, http, db or mcp
	Words      []string     `json:"words"`
	Tier       Tier         `json:"tier"`
	Digest     string       `json:"digest,omitempty"` // "sha256:…" of the record; set by the authority
	// SigningKey, on an http Source that signs its requests (RFC 9421), is the public key
	// it signs with; the authority's key directory lists it. Never a private key.
	SigningKey *PublicJWK `json:"signingKey,omitempty"`
}

// PublicJWK is an Ed25519 public key as a JWK (RFC 8037): kty OKP, crv Ed25519, x the
// base64url key, kid its RFC 7638 thumbprint.
type PublicJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
}

// SourceTypes are the Source types a worker can serve.
var SourceTypes = []string{"file", "http", "db", "mcp"}

// ToolLock authorizes a Tool on a Connection at the digest of its definition. As a
// request (PUT …/tools/{tool}) only Digest and Approval may be set, and both may be left
// out: without a digest the authority locks the one the Connection's worker advertises.
type ToolLock struct {
	Connection ConnectionID `json:"connection,omitempty"`
	Tool       string       `json:"tool"`   // "vendor.name@N"
	Digest     string       `json:"digest"` // "sha256:" and 64 hex digits
	// Approval is what the Tool's direct Action needs: none, person or a delegation
	// class. Left out of a lock request it is the kind's default (read: none; write and
	// run: person).
	Approval string     `json:"approval,omitempty"`
	LockedBy Principal  `json:"lockedBy,omitempty"` // who locked it or last set its approval
	LockedAt *time.Time `json:"lockedAt,omitempty"`
	// Descriptor is what the worker advertised for the Tool at Digest when it was locked;
	// nil when it was locked by digest with no worker advertising it, and then the Tool
	// is offered as no direct Action.
	Descriptor *ToolDescriptor `json:"descriptor,omitempty"`
}

// CapabilityUpload is a capability package sent for install: its files by relative path.
type CapabilityUpload struct {
	Files map[string]string `json:"files"`
}

// Release is an immutable, installed version of a capability.
type Release struct {
	ID        string    `json:"id"`
	Version   string    `json:"version"`
	Digest    string    `json:"digest"` // "sha256:…"
	CreatedAt time.Time `json:"createdAt"`
}

// Installed answers a capability install.
type Installed struct {
	Project ProjectID `json:"project"`
	Release Release   `json:"release"`
	Created bool      `json:"created"` // false when the same release was already stored
}

// Event is one record of a project's hash-chained log. Hashes are hex.
type Event struct {
	Project  ProjectID       `json:"project"`
	Seq      int64           `json:"seq"`
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`
	Data     json.RawMessage `json:"data"`
	DataHash string          `json:"dataHash"`
	PrevHash string          `json:"prevHash"`
	Hash     string          `json:"hash"`
}

// ChainReport is the result of verifying a project's log. When OK is false, Broken names
// the first link that does not hold.
type ChainReport struct {
	Project ProjectID `json:"project"`
	OK      bool      `json:"ok"`
	Seq     int64     `json:"seq"` // the last event that verified
	Hash    string    `json:"hash,omitempty"`
	// SignedSeq is the head the last signed checkpoint covers (0: none), and SignedBy the
	// key id that signed it; events after SignedSeq are chained but not yet signed.
	SignedSeq int64       `json:"signedSeq,omitempty"`
	SignedBy  string      `json:"signedBy,omitempty"`
	Broken    *BrokenLink `json:"broken,omitempty"`
}

// BrokenLink names the first event where a log stops matching its chain, or, with Node
// set, the first row of a projection (the node table, an installed release) that
// disagrees with the log: Seq is then the event that last recorded it (0 if none did).
type BrokenLink struct {
	Seq   int64  `json:"seq"`
	Node  string `json:"node,omitempty"`
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// Health answers doctor: what the authority knows about itself.
type Health struct {
	Version string `json:"version"`
	Store   string `json:"store"` // "ok" or "unavailable"
}
