package contract

import "time"

// Error codes of grants. A worker that refuses a grant neither claims nor
// runs the work it came with.
const (
	CodeGrantMalformed Code = "grant_malformed" // the token is not payload "." mac, or its payload is not canonical grant JSON
	CodeGrantSignature Code = "grant_signature" // the MAC does not match under the Connection key
	CodeGrantMismatch  Code = "grant_mismatch"  // a signed field differs from what the worker knows
	CodeGrantExpired   Code = "grant_expired"   // the grant is past its expiry (or issued in the future)
)

// Grant is the signed permission to run one dispatched Action once. The
// authority signs it with the Connection key; the worker checks the MAC and then compares
// every field with what it knows on its own, so a grant for another request, instance or
// generation is refused. Its token form is base64url(JCS(Grant)) "." base64url(HMAC-SHA256).
type Grant struct {
	Project       ProjectID    `json:"project"`       // the Board's project
	Invocation    string       `json:"invocation"`    // the Operation id this call belongs to
	Action        string       `json:"action"`        // the Action applied
	Tool          ToolID       `json:"tool"`          // "vendor.name@N"
	ToolDigest    string       `json:"toolDigest"`    // "sha256:…" of the Tool's definition as locked
	Source        string       `json:"source"`        // the Source name; "" for a source-free Tool
	SourceDigest  string       `json:"sourceDigest"`  // "sha256:…" of the Source record; "" when source-free
	Connection    ConnectionID `json:"connection"`    // the Connection whose key signs
	WorkerID      string       `json:"workerId"`      // the worker instance the work was served to
	Generation    int64        `json:"generation"`    // that instance's lease generation
	AdapterDigest string       `json:"adapterDigest"` // "sha256:…" of the adapter the worker advertised
	RequestDigest string       `json:"requestDigest"` // "sha256:…" over JCS {args, target, toolSpec} as served
	IssuedAt      time.Time    `json:"issuedAt"`      // UTC, whole seconds
	ExpiresAt     time.Time    `json:"expiresAt"`     // UTC, whole seconds
	// PathCheck names the argument whose path the worker must check before it runs the
	// call: set when an orchestrator approved the call under a path class of the
	// delegation policy. The worker refuses the call with CodePathNeedsMember
	// when that path is absolute, climbs out with "..", passes a symbolic link, or names a
	// file with a second hard link; the authority then asks a member. A worker that does
	// not know the field refuses the grant as malformed, so no such call runs unchecked.
	PathCheck string `json:"pathCheck,omitempty"`
}
