package contract

// Error codes of the agent runtime and its model providers.
const (
	CodeModelAuth          Code = "model_auth"           // the model endpoint refused the key
	CodeModelRateLimited   Code = "model_rate_limited"   // the model endpoint asked us to slow down
	CodeModelQuota         Code = "model_quota"          // the account behind the key has no quota left
	CodeModelContextLength Code = "model_context_length" // the conversation does not fit the model's context
	CodeModelBadRequest    Code = "model_bad_request"    // the model endpoint refused the request as malformed
	CodeModelServer        Code = "model_server"         // the model endpoint failed or is overloaded
	CodeModelTransport     Code = "model_transport"      // the model endpoint could not be reached
	CodeModelStream        Code = "model_stream"         // the model's answer stream was cut or malformed
	CodeModelReply         Code = "model_reply"          // an emulated model's reply is not one tool call or final answer
	CodeModelStalled       Code = "model_stalled"        // the model sent no first byte, or no more data, within its deadline
	CodeModelConfig        Code = "model_config"         // the model URL, name, provider or key is missing or wrong
	CodeBudgetExceeded     Code = "budget_exceeded"      // a run reached its turn, token or USD budget
	CodeScriptInvalid      Code = "script_invalid"       // a scripted model's script does not parse or refers to nothing
)

// ModelFailure reports whether code says an Agent's model failed or cannot be used: the
// endpoint could not be reached, refused the key or the request, failed, stalled or
// answered out of format, or the profile's model is misconfigured. A person fixes these at
// the model server or in the Agent's profile, not in the project, so the console's
// Operations page and docket doctor name them (docs/workbench.md, Agent profiles).
func ModelFailure(code Code) bool {
	switch code {
	case CodeModelAuth, CodeModelRateLimited, CodeModelQuota, CodeModelContextLength, CodeModelBadRequest,
		CodeModelServer, CodeModelTransport, CodeModelStream, CodeModelReply, CodeModelStalled, CodeModelConfig:
		return true
	}
	return false
}
