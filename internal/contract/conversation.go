package contract

import (
	"encoding/json"
	"regexp"
	"sync"
	"time"
)

// Error codes of conversations kept in the authority.
const (
	CodeConversationConflict Code = "conversation_conflict"  // another runtime saved the conversation since this one loaded it
	CodeConversationTooLarge Code = "conversation_too_large" // one save is over MaxConversationEntry bytes
	CodeHookRefused          Code = "hook_refused"           // a pre-tool hook refused the call; it was not sent
	CodeConversationLimit    Code = "conversation_limit"     // the Agent saved the most bytes, or started the most conversations, it may in an hour
)

// MaxConversationEntry bounds the messages and state of one save, in bytes of JSON. A
// runtime sends only the messages that changed since its last save, and tool results are
// already cut to a bounded view, so a save near this bound is a fault.
const MaxConversationEntry = 1 << 20

// ConversationID names one of an Agent's conversations: 1 to 64 letters, digits, '_',
// '.' or '-', starting with a letter or digit. Ids are per Agent: two Agents may use the
// same one.
type ConversationID string

// conversationIDForm is the conversation id's form but for its length, which is checked
// apart (maxConversationID): a counted repetition ({0,63}) compiles to a program of one
// state per count at every start of every docket process, the hook's included
// (docs/coding-agents.md, "Speed"). The classes are ASCII, so each byte is a character.
var conversationIDForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// maxConversationID is the longest conversation id, in bytes.
const maxConversationID = 64

// ParseConversationID checks s against the conversation id form.
func ParseConversationID(s string) (ConversationID, error) {
	if len(s) > maxConversationID || !conversationIDForm().MatchString(s) {
		return "", Errorf(CodeInvalidArgument, "conversation id %q is not 1 to 64 letters, digits, '_', '.' or '-' starting with a letter or digit; pick another", s)
	}
	return ConversationID(s), nil
}

func (id ConversationID) String() string { return string(id) }

// ConversationSave is what an agent runtime appends to one of its own conversations: the
// messages from index From on (earlier ones are kept, later ones replaced) and the
// runtime's resume state. Prev is the sequence number of the conversation's last save as
// the runtime knows it (0 for a new conversation, which then starts anew); a save whose
// Prev is not the last one is refused with [CodeConversationConflict], so two runtimes
// cannot interleave one transcript. The authority keeps messages and state as opaque JSON.
type ConversationSave struct {
	Prev     int64             `json:"prev"`
	From     int               `json:"from"`
	Messages []json.RawMessage `json:"messages"`
	State    json.RawMessage   `json:"state,omitempty"`
}

// ConversationHead is the answer to a save: where the conversation now stands.
type ConversationHead struct {
	ID       ConversationID `json:"id"`
	Seq      int64          `json:"seq"`      // the save's event; the next save's Prev
	Messages int            `json:"messages"` // how many messages the conversation holds
}

// BudgetExhausted is the record of a budget that stopped a run of a conversation.
type BudgetExhausted struct {
	Scope        string  `json:"scope"` // "run" or "conversation"
	Kind         string  `json:"kind"`  // "turns", "tokens" or "usd"
	Limit        float64 `json:"limit"`
	Used         float64 `json:"used"`
	Turns        int     `json:"turns"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	USD          float64 `json:"usd"`
}

// Conversation is one of an Agent's conversations as the authority keeps it.
type Conversation struct {
	ID        ConversationID    `json:"id"`
	Project   ProjectID         `json:"project"`
	Agent     AgentID           `json:"agent"`
	Seq       int64             `json:"seq"` // the last save's event
	UpdatedAt time.Time         `json:"updatedAt"`
	Messages  []json.RawMessage `json:"messages"`
	State     json.RawMessage   `json:"state,omitempty"`
	Budgets   []BudgetExhausted `json:"budgets,omitempty"` // budgets that stopped its runs, oldest first
	// Compactions are the times its older turns were replaced by a summary, oldest first.
	Compactions []Compacted `json:"compactions,omitempty"`
}

// ConversationSummary is one line of a project's conversations.
type ConversationSummary struct {
	ID        ConversationID `json:"id"`
	Agent     AgentID        `json:"agent"`
	Seq       int64          `json:"seq"`
	UpdatedAt time.Time      `json:"updatedAt"`
	Messages  int            `json:"messages"`
	Budgets   int            `json:"budgets"` // how many runs a budget stopped
}
