package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"

	"github.com/docketrun/docket/internal/contract"
)

// AuthorityConversations is a [ConversationStore] backed by the authority's event log
// over /api/v1, so that a conversation outlives the machine that ran it: each Save sends only the messages that changed since the
// last one, with the resume state, as a conversation.saved event of the Agent whose token
// it holds; Load reads the conversation back, so a restarted runtime on any machine
// resumes it. Every save is scrubbed of Key. It is safe for concurrent use.
//
// Saves of one conversation are chained: a Save after another runtime of the same Agent
// saved the conversation is refused with [contract.CodeConversationConflict].
type AuthorityConversations struct {
	API API // the authority's /api/v1, called with the Agent's token; required
	Key Key // the model key, scrubbed from every save

	// mu guards known.
	mu sync.Mutex
	// known is, per conversation, the last save this store made or read: its event and
	// its messages as sent, so the next save sends only what changed.
	known map[string]savedConversation
}

var (
	_ ConversationStore = (*AuthorityConversations)(nil)
	_ BudgetRecorder    = (*AuthorityConversations)(nil)
)

// API is the part of an /api/v1 client the conversation store needs: one call that sends
// in as JSON and decodes a 2xx answer into out (when not nil), returning the authority's
// refusal as an error that holds its *contract.Error. A call that got no answer returns
// an error that holds a [net.Error].
type API interface {
	Do(ctx context.Context, method, path string, in, out any) error
}

type savedConversation struct {
	seq      int64
	messages [][]byte
}

// conversationState is the part of a [Conversation] saved beside its messages.
type conversationState struct {
	InFlight    *Pending     `json:"inFlight,omitempty"`
	Partial     []ToolResult `json:"partial,omitempty"`
	Watching    []Pending    `json:"watching,omitempty"`
	Unread      []string     `json:"unread,omitempty"`
	LastOrdinal int64        `json:"lastOrdinal,omitempty"`
	Spent       Spent        `json:"spent"`
	Tasks       []string     `json:"tasks,omitempty"`
	Context     ContextCount `json:"context,omitzero"`
	Compactions int          `json:"compactions,omitempty"`
	Failed      []FailedTurn `json:"failed,omitempty"`
}

// Load reads conversation id from the authority.
func (s *AuthorityConversations) Load(ctx context.Context, id string) (*Conversation, error) {
	if err := CheckConversationID(id); err != nil {
		return nil, err
	}
	var wire contract.Conversation
	err := s.do(ctx, http.MethodGet, "/api/v1/conversations/"+url.PathEscape(id), nil, &wire)
	if contract.CodeOf(err) == contract.CodeNotFound {
		return nil, fmt.Errorf("load conversation %s: %w", id, ErrNoConversation)
	}
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", id, err)
	}
	c := &Conversation{ID: id, Messages: make([]Message, len(wire.Messages))}
	known := savedConversation{seq: wire.Seq, messages: make([][]byte, len(wire.Messages))}
	for i, m := range wire.Messages {
		if err := json.Unmarshal(m, &c.Messages[i]); err != nil {
			return nil, &contract.Error{Code: contract.CodeConversation, Teaching: fmt.Sprintf("message %d of conversation %s does not decode; start a new conversation", i, id), Err: err}
		}
		known.messages[i] = m
	}
	var st conversationState
	if len(wire.State) > 0 {
		if err := json.Unmarshal(wire.State, &st); err != nil {
			return nil, &contract.Error{Code: contract.CodeConversation, Teaching: fmt.Sprintf("the state of conversation %s does not decode; start a new conversation", id), Err: err}
		}
	}
	c.InFlight, c.Partial, c.Watching, c.Unread, c.LastOrdinal, c.Spent, c.Tasks = st.InFlight, st.Partial, st.Watching, st.Unread, st.LastOrdinal, st.Spent, st.Tasks
	c.Context, c.Compactions, c.Failed = st.Context, st.Compactions, st.Failed
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		s.known = map[string]savedConversation{}
	}
	s.known[id] = known
	return c, nil
}

// Save sends the messages of c that changed since the last Save or Load of it, and its
// state. A conversation this store has not seen starts anew in the authority.
func (s *AuthorityConversations) Save(ctx context.Context, c *Conversation) error {
	if err := CheckConversationID(c.ID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.known[c.ID]
	msgs := make([][]byte, len(c.Messages))
	from := -1
	for i, m := range c.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("save conversation %s: %w", c.ID, err)
		}
		msgs[i] = []byte(s.Key.Scrub(string(b)))
		if from < 0 && (i >= len(prev.messages) || !bytes.Equal(prev.messages[i], msgs[i])) {
			from = i
		}
	}
	if from < 0 {
		from = len(msgs)
	}
	if prev.seq == 0 {
		from = 0
	}
	state, err := json.Marshal(conversationState{InFlight: c.InFlight, Partial: c.Partial, Watching: c.Watching, Unread: c.Unread, LastOrdinal: c.LastOrdinal, Spent: c.Spent, Tasks: c.Tasks,
		Context: c.Context, Compactions: c.Compactions, Failed: c.Failed})
	if err != nil {
		return fmt.Errorf("save conversation %s: %w", c.ID, err)
	}
	req := contract.ConversationSave{Prev: prev.seq, From: from, Messages: make([]json.RawMessage, 0, len(msgs)-from), State: json.RawMessage(s.Key.Scrub(string(state)))}
	for _, m := range msgs[from:] {
		req.Messages = append(req.Messages, m)
	}
	var head contract.ConversationHead
	if err := s.do(ctx, http.MethodPost, "/api/v1/conversations/"+url.PathEscape(c.ID)+"/saves", req, &head); err != nil {
		return fmt.Errorf("save conversation %s: %w", c.ID, err)
	}
	if s.known == nil {
		s.known = map[string]savedConversation{}
	}
	s.known[c.ID] = savedConversation{seq: head.Seq, messages: msgs}
	return nil
}

// RecordBudget records e as a conversation.budget_exhausted event of conversation id.
func (s *AuthorityConversations) RecordBudget(ctx context.Context, id string, e *BudgetError) error {
	b := contract.BudgetExhausted{Scope: string(e.Scope), Kind: string(e.Kind), Limit: e.Limit, Used: e.Used,
		Turns: e.Spent.Turns, InputTokens: e.Spent.InputTokens, OutputTokens: e.Spent.OutputTokens, USD: e.Spent.USD}
	if b.Scope == "" {
		b.Scope = string(ScopeRun)
	}
	if err := s.do(ctx, http.MethodPost, "/api/v1/conversations/"+url.PathEscape(id)+"/budget-exhausted", b, nil); err != nil {
		return fmt.Errorf("record the budget of conversation %s: %w", id, err)
	}
	return nil
}

// do sends one API call through s.API. A call that got no answer becomes a refusal that
// names the fix; the authority's own refusals come back as they are.
func (s *AuthorityConversations) do(ctx context.Context, method, path string, in, out any) error {
	err := s.API.Do(ctx, method, path, in, out)
	if ne, ok := errors.AsType[net.Error](err); ok && contract.CodeOf(err) == "" {
		return &contract.Error{Code: contract.CodeUnavailable, Teaching: "the authority cannot be reached to keep the conversation; check that docket serve runs", Err: ne}
	}
	return err
}
