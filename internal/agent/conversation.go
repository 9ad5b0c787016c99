package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/contract"
)

// Conversation is one transcript the loop serves over the Agent's connection, with what
// the loop needs to resume it after a restart without re-sending anything. It is saved after every step, so a killed runtime loses at most the step it was
// taking, and never forgets that a call was sent.
type Conversation struct {
	ID       string    `json:"id"`
	Messages []Message `json:"messages"`

	// InFlight is the call handed to the gateway whose answer has not arrived. It is set
	// and saved before the call is sent and cleared once the answer is kept, so a runtime
	// that finds it set on resume knows the call may have run and must not be sent again.
	InFlight *Pending `json:"inFlight,omitempty"`
	// Partial holds the results of the current turn's calls answered so far.
	Partial []ToolResult `json:"partial,omitempty"`
	// Watching are this conversation's operations whose outcome its model has not read:
	// held past the wait bound, waiting for a decision, or sent with the answer lost.
	Watching []Pending `json:"watching,omitempty"`
	// Unread are outcomes found for watched operations and not yet shown to the model;
	// they are shown before it decides again.
	Unread []string `json:"unread,omitempty"`
	// LastOrdinal is the highest operation ordinal this conversation has seen; an
	// operation whose ordinal is unknown is looked for above it.
	LastOrdinal int64 `json:"lastOrdinal,omitempty"`
	// Spent is what the conversation has used over all its runs, for its budget.
	Spent Spent `json:"spent"`
	// Tasks are the authority's tasks whose text the conversation holds, so a task taken
	// again after its runtime stopped resumes the conversation instead of adding it twice.
	Tasks []string `json:"tasks,omitempty"`
	// View is the digest of the gateway's View the model holds whole in this
	// conversation: shown in full, named unchanged, or made by a View delta it was shown
	// (and the runtime checked); zero when it holds none. Each call tells the gateway
	// (_meta "docket/view"), so an answer names the View unchanged, or sends what changed
	// in it, only when the model's context holds it.
	View contract.Digest `json:"view,omitzero"`
	// Context is the provider's count of the conversation's last request and answer, from
	// which the loop estimates the next request's size; zero when the provider gave none.
	Context ContextCount `json:"context,omitzero"`
	// Compactions is how many times older turns were compacted into a summary.
	Compactions int `json:"compactions,omitempty"`
	// Failed are the newest model turns that failed, each with every attempt of its
	// request: a failed turn writes no message to hold them.
	Failed []FailedTurn `json:"failed,omitempty"`
}

// Pending is one of a conversation's calls whose outcome is still to be learned: by
// ordinal, or by tool above After (the conversation's LastOrdinal when it was sent) while
// the gateway never named the ordinal. It is the wait a task reports to the authority.
type Pending = contract.TaskWait

// ErrNoConversation is returned by a [ConversationStore] for an id it does not hold.
var ErrNoConversation = errors.New("agent: no such conversation")

// ConversationStore keeps conversations so a restarted runtime resumes them. Save
// replaces the stored conversation with c whole; an implementation backed by the
// authority's event log appends it as an event. Load returns an error
// wrapping [ErrNoConversation] for an unknown id. Implementations are safe for
// concurrent use.
type ConversationStore interface {
	Load(ctx context.Context, id string) (*Conversation, error)
	Save(ctx context.Context, c *Conversation) error
}

// BudgetRecorder is an optional ability of a [ConversationStore]: it records that a
// budget stopped a run of conversation id, as an event the console shows. The loop calls it once per stopped run; its error is logged, and the run still
// ends with the *[BudgetError].
type BudgetRecorder interface {
	RecordBudget(ctx context.Context, id string, e *BudgetError) error
}

// CheckConversationID refuses ids that cannot name a conversation: 1 to 64 letters,
// digits, '_', '.', '-', not starting with a punctuation mark (see
// [contract.ParseConversationID]).
func CheckConversationID(id string) error {
	if _, err := contract.ParseConversationID(id); err != nil {
		return contract.Errorf(contract.CodeConversation, "conversation id %q is not 1 to 64 letters, digits, '_', '.' or '-' starting with a letter or digit; pick another", id)
	}
	return nil
}

// FileConversations is a [ConversationStore] of one JSON file per conversation in Dir
// (mode 0600, replaced atomically), for runs without an authority (tests, offline
// scripts); [AuthorityConversations] keeps them as events of the authority.
type FileConversations struct {
	Dir string
}

var _ ConversationStore = FileConversations{}

// Load reads the conversation id.
func (f FileConversations) Load(_ context.Context, id string) (*Conversation, error) {
	if err := CheckConversationID(id); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(f.Dir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load conversation %s: %w", id, ErrNoConversation)
	}
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", id, err)
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, &contract.Error{Code: contract.CodeConversation, Teaching: fmt.Sprintf("conversation %s in %s does not decode; move the file away to start it anew", id, f.Dir), Err: err}
	}
	return &c, nil
}

// Save writes c, replacing the file atomically so a reader never sees half of it.
func (f FileConversations) Save(_ context.Context, c *Conversation) error {
	if err := CheckConversationID(c.ID); err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("save conversation %s: %w", c.ID, err)
	}
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return fmt.Errorf("save conversation %s: %w", c.ID, err)
	}
	tmp, err := os.CreateTemp(f.Dir, "."+c.ID+".*")
	if err != nil {
		return fmt.Errorf("save conversation %s: %w", c.ID, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(f.Dir, c.ID+".json"))
	}
	if err != nil {
		return fmt.Errorf("save conversation %s: %w", c.ID, err)
	}
	return nil
}
