package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/docketrun/docket/internal/contract"
)

// ToolNames returns the names of the six tools of the governed surface in the order the
// gateway lists them: the only tools a model is offered and the only ones the runtime
// sends.
func ToolNames() []string {
	specs := contract.Tools()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// IsGovernedTool reports whether name is one of the six tools.
func IsGovernedTool(name string) bool {
	_, ok := contract.Tool(name)
	return ok
}

// ErrOutcomeUnknown is wrapped by a [Gateway] when a call was sent and its answer was lost
// (the session vanished, the stream broke, the gateway failed mid-call). The call must
// not be sent again: the loop reports the outcome as unknown to the model and learns it
// from the strip.
var ErrOutcomeUnknown = errors.New("agent: the call's answer was lost; its outcome is unknown")

// Gateway is the MCP connection the loop works through: one per Agent, used by one
// conversation at a time. mcpclient.Client implements it.
type Gateway interface {
	// Tools returns the six tools exactly as the gateway listed them; the loop offers
	// these schemas to the model and restates none of them.
	Tools() []ToolDef

	// Call sends one tool call and returns its answer. A lost answer is an error wrapping
	// [ErrOutcomeUnknown]; the call is never re-sent. Any other error ends the run.
	Call(ctx context.Context, name string, args json.RawMessage) (CallResult, error)

	// Strip asks the gateway for the state form of this Agent's operations, newest first
	// (an MCP ping).
	Strip(ctx context.Context) ([]contract.OperationSlot, error)
}

// CallResult is the gateway's answer to one tool call.
type CallResult struct {
	Text    string // the result's text block: the JSON of a [contract.ToolResult]
	IsError bool   // the tool result was marked as an error
	Ordinal int64  // the call's operation ordinal, 0 when it did not become one or the gateway did not say
	// ViewDigest is the digest of the View the answer carries or names unchanged
	// (_meta "docket/v1" viewDigest); zero when the gateway did not say.
	ViewDigest contract.Digest
}

// reported reports whether an operation's state is one the model must be told about as an
// outcome: settled, or handed to a person.
func reported(s contract.OperationState) bool {
	return s.Settled() || s == contract.OpNeedsPerson
}
