package contract

// Error codes of the agent runtime's MCP client and governed loop.
const (
	CodeProtocolDrift  Code = "protocol_drift"      // the gateway speaks an MCP protocol version other than the compiled one
	CodeToolDrift      Code = "tool_drift"          // the gateway's tool list is not exactly the six tools
	CodeGatewayDown    Code = "gateway_unreachable" // the gateway could not be reached or answered outside the protocol
	CodeToolNotOffered Code = "tool_not_offered"    // the model named a tool outside the six; refused locally, never sent
	CodeOutcomeUnknown Code = "outcome_unknown"     // a call's answer was lost; the call is never re-sent
	CodeNotExecuted    Code = "not_executed"        // a proposed call was not sent, because an earlier one stopped the turn
	CodeConversation   Code = "conversation"        // a conversation cannot be loaded, saved or resumed
)
