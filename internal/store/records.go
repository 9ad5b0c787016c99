package store

import (
	"encoding/json"
	"time"
)

// The records below are what the authority keeps. The store keeps the bytes
// it is given: passphrase hashes, token digests and key ciphertexts are computed by the
// caller, and no plaintext token or key ever reaches the store.
// Times are kept to the nanosecond in UTC; a nil *time.Time means "not yet".

// Project is the unit of tenancy.
type Project struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Member is a person. PassphraseHash is the caller's argon2id/scrypt encoding.
type Member struct {
	ID             string
	Name           string // unique across the installation
	PassphraseHash []byte
	CreatedAt      time.Time
	RevokedAt      *time.Time
}

// Session is a member's login. Only the digest of its token is kept.
type Session struct {
	TokenDigest []byte // unique
	MemberID    string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	RevokedAt   *time.Time
}

// Card is a delegate's consent call recorded instead of run. Record is the
// card as the API shows it (JSON); the other fields are what the store selects by.
type Card struct {
	ID        string
	Project   string
	Delegate  string
	State     string // open, confirmed, declined or void
	CreatedAt time.Time
	Record    []byte
}

// CardFilter selects cards; an empty field selects any.
type CardFilter struct {
	Project  string
	Delegate string
	State    string
}

// Delegate is a credential a member made for an assistant acting for it in one project.
// Only the digest of its token is kept.
type Delegate struct {
	ID          string
	Member      string
	Project     string
	Name        string // unique among the member's delegates
	TokenDigest []byte // unique
	CreatedAt   time.Time
	ExpiresAt   time.Time
	RevokedAt   *time.Time
}

// Agent kinds.
const (
	AgentKindAgent        = "agent"        // does work
	AgentKindOrchestrator = "orchestrator" // may also decide delegated request classes
)

// Agent is a fixed-identity, model-driven actor of one project.
type Agent struct {
	ID          string
	Project     string
	Name        string // unique within the project
	Kind        string // AgentKindAgent or AgentKindOrchestrator
	TokenDigest []byte // unique; replaced by [Tx.SetAgentToken]
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// Connection is the credential a worker process uses. KeyCiphertext is the connection key
// encrypted by the caller with the installation key; the store never sees the key.
type Connection struct {
	ID            string
	Project       string
	Name          string // unique within the project
	KeyCiphertext []byte
	CreatedAt     time.Time
	RevokedAt     *time.Time
}

// Release is an immutable, installed version of a capability, pinned by Digest (the
// capability package's digest over canonical content). Content (the package bytes) is kept
// once as a blob, addressed by its sha256, which is ContentHash.
type Release struct {
	ID          string // capability id, e.g. "demo.calc"
	Version     string
	Digest      []byte
	Content     []byte
	ContentHash Hash // set by the store
	CreatedAt   time.Time
}

// Install records that a project uses a release. A project has at most one installed
// version of each capability id; installing another version replaces it.
type Install struct {
	Project     string
	ReleaseID   string
	Version     string
	InstalledAt time.Time
}

// Source is a typed origin of attested facts bound to a connection. Data
// is the caller's JSON description (type, words, tier); its secret parts never come here.
type Source struct {
	Connection string
	ID         string
	Digest     []byte
	Data       json.RawMessage
}

// ToolLock authorizes a tool on a connection, pinned by the digest of its definition.
type ToolLock struct {
	Connection string
	Tool       string // "vendor.name@N"
	Digest     []byte
	// Data is the lock's record (contract.ToolLock: its approval, who locked it, the
	// advertised descriptor); nil for a lock stored before it was kept. The store does
	// not read it.
	Data json.RawMessage
}

// Node is a Board node kept as an opaque record so the in-memory Board can be rebuilt.
// The store does not read Data.
type Node struct {
	ID   string
	Kind string
	Data json.RawMessage
}
