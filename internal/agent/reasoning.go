package agent

import "github.com/docketrun/docket/internal/contract"

// Reasoning is one block of a reasoning model's thinking that came with an assistant
// message: DeepSeek's reasoning_content, or an Anthropic thinking block with its
// signature (or a redacted_thinking block's data). It is kept in the conversation and
// sent back where the provider requires it (with the assistant message whose tool calls
// it led to); it is never the answer ([Message.Text]), never a tool call's argument, so
// never on the Board, and the console's transcript does not show it (docs/workbench.md,
// Reasoning models).
type Reasoning struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"` // Anthropic: the thinking block's signature
	Redacted  string `json:"redacted,omitempty"`  // Anthropic: a redacted_thinking block's data
}

// Thinking says whether a reasoning model is asked to think: "" leaves it to the
// provider's default, "on" and "off" ask for it or not (Anthropic's thinking parameter;
// on a Chat Completions server, DeepSeek's thinking field).
type Thinking string

// Thinking settings.
const (
	ThinkingDefault Thinking = ""
	ThinkingOn      Thinking = "on"
	ThinkingOff     Thinking = "off"
)

// ParseThinking reads a thinking setting: "", "default", "on" or "off".
func ParseThinking(s string) (Thinking, error) {
	switch s {
	case "", "default":
		return ThinkingDefault, nil
	case "on":
		return ThinkingOn, nil
	case "off":
		return ThinkingOff, nil
	}
	return "", contract.Errorf(contract.CodeModelConfig, "thinking %q is not on, off or default; pass --thinking on|off|default", s)
}
