package contract

import (
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the one MCP protocol version the gateway speaks.
const ProtocolVersion = "2025-11-25"

// MetaKey is the key under _meta where host metadata travels. Nothing
// under it reaches a model.
const MetaKey = "docket/v1"

// MetaConversationKey is the key under a tools/call's _meta where a runtime names the
// conversation the call belongs to: the gateway keeps a selected Case per conversation,
// so two conversations of one Agent never share one. A call without it is the session's
// own conversation.
const MetaConversationKey = "docket/conversation"

// MetaViewKey is the key under a tools/call's _meta where a client names the digest of
// the View its conversation holds (the last [HostMeta.ViewDigest] it was given in full
// or named as unchanged), or "" when it holds none. The gateway answers a View as
// unchanged only when both its own record of the conversation and this key (when sent)
// name the View's digest: a client that dropped an answer, or cut one, sends "" or the
// digest it does hold and is sent the View in full.
const MetaViewKey = "docket/view"

// MetaOperationsKey is the key under a tools/call's _meta where a client names the digest
// of the strip of Operations it holds for the conversation (the last
// [HostMeta.OperationsDigest] it was given the strip with), or "" when it holds none.
// Only a client that sends it is answered [ToolResult.OperationsUnchanged]: the strip is
// named unchanged when it is the one that digest names and the gateway last sent the
// conversation.
const MetaOperationsKey = "docket/operations"

// MetaTextOnlyKey is the key under a tools/call's _meta where a client says, with true,
// that it reads an answer's [ToolResult] from its text block alone: the answer then
// carries no structuredContent, which would hold the same object again. A client that
// does not send it is answered with both. See docs/mcp.md, "Result shape".
const MetaTextOnlyKey = "docket/textOnly"

// JSON-RPC error code and data reasons of the gateway's transport refusals.
const (
	RPCCodeServer             = -32000
	ReasonUnsupportedProtocol = "unsupported_protocol"
	ReasonConnectionReplaced  = "connection_replaced"
	ReasonUnauthenticated     = "unauthenticated"
	ReasonUnknownSession      = "unknown_session"
	ReasonSessionRequired     = "session_required"     // a request other than initialize without Mcp-Session-Id
	ReasonBatchUnsupported    = "batch_unsupported"    // a JSON-RPC batch: 2025-11-25 has none
	ReasonNoStandaloneStream  = "no_standalone_stream" // a GET without Last-Event-ID: the gateway sends nothing unasked
)

// RPCErrorData is the data of a gateway JSON-RPC error.
type RPCErrorData struct {
	Reason   string `json:"reason"`
	Teaching string `json:"teaching,omitempty"`
}

// ToolResult is the object every tool result carries, as its one text block and as
// structuredContent. RequestExecuted is set on refusals: false when the
// call was refused before anything ran.
type ToolResult struct {
	Accepted        bool            `json:"accepted"`
	Result          json.RawMessage `json:"result,omitempty"`
	ErrorCode       Code            `json:"errorCode,omitempty"`
	Teaching        string          `json:"teaching,omitempty"`
	RequestExecuted *bool           `json:"requestExecuted,omitempty"`
	View            View            `json:"view,omitzero"` // zero only in a runtime's own notices, or when ViewUnchanged or ViewDelta is set
	// ViewUnchanged, when set, stands in for View: the View is the one with this digest,
	// which the same conversation of the same MCP session was last sent. See
	// docs/mcp.md, "Result shape".
	ViewUnchanged Digest `json:"viewUnchanged,omitzero"`
	// ViewDelta, when set, stands in for View: the View is the one it makes of the View
	// the conversation holds, sent only to a client that said it applies deltas
	// ([MetaViewDeltaKey]). See docs/mcp.md, "A View sent as what changed".
	ViewDelta *ViewDelta `json:"viewDelta,omitempty"`
	// OperationsUnchanged, when set, stands in for Operations: the strip is the one with
	// this digest, which the client said it holds ([MetaOperationsKey]). See docs/mcp.md,
	// "The strip sent only when it changed".
	OperationsUnchanged Digest           `json:"operationsUnchanged,omitzero"`
	Operations          []OperationEntry `json:"operations,omitzero"` // nil only in a runtime's own notices
}

// HostMeta is _meta["docket/v1"] of a tool result, and of initialize and ping results,
// where State carries the strip with host-only ordinals. None of it reaches a model.
type HostMeta struct {
	AgentID       string        `json:"agentId"`
	FocusedRoots  []FocusedRoot `json:"focusedRoots,omitempty"`
	BoardRevision int64         `json:"boardRevision,omitempty"` // audit only
	// ViewDigest is [ViewDigest] of the View the result carries, names as unchanged, or
	// makes by its [ViewDelta].
	ViewDigest Digest `json:"viewDigest,omitzero"`
	// OperationsDigest is the digest of the JSON of the strip the result carries or names
	// as unchanged (its model form, [ToolResult.Operations]); only on tool results.
	OperationsDigest Digest          `json:"operationsDigest,omitzero"`
	AffectedCases    []CaseID        `json:"affectedCases,omitempty"`
	Ordinal          int64           `json:"ordinal,omitempty"` // the call's Operation, if it became one
	State            []OperationSlot `json:"operations,omitempty"`
}

// ArtifactFragment is the result of ReadArtifact.
type ArtifactFragment struct {
	Ref    string `json:"ref"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"` // the artifact's whole size in bytes
	Text   string `json:"text"`
	More   bool   `json:"more"`
}

// ViewDigest is the digest of v's JSON encoding: what [ToolResult.ViewUnchanged] and
// [HostMeta.ViewDigest] name. The encoding is deterministic (struct fields in order, map
// keys sorted), so two equal Views have one digest.
func ViewDigest(v View) (Digest, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Digest{}, fmt.Errorf("encode view: %w", err)
	}
	return Sum(b), nil
}
