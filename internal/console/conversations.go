package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// conversationBackend is the part of the authority the conversation routes need.
type conversationBackend interface {
	SaveConversation(ctx context.Context, c identity.Caller, id contract.ConversationID, s contract.ConversationSave) (contract.ConversationHead, error)
	RecordBudgetExhausted(ctx context.Context, c identity.Caller, id contract.ConversationID, b contract.BudgetExhausted) error
	OwnConversation(ctx context.Context, c identity.Caller, id contract.ConversationID) (contract.Conversation, error)
	Conversations(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.ConversationSummary, error)
	Conversation(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID) (contract.Conversation, error)
}

// maxConversationBody bounds a conversation save: its messages and state, plus room for
// the envelope around them.
const maxConversationBody = contract.MaxConversationEntry + 64<<10

func conversation(r *http.Request) contract.ConversationID {
	return contract.ConversationID(r.PathValue("conversation"))
}

// handleSaveConversation appends a save to one of the calling Agent's conversations.
func (s *Server) handleSaveConversation(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.ConversationSave](w, r, maxConversationBody)
	if err != nil {
		return err
	}
	head, err := s.auth.SaveConversation(r.Context(), caller(r), conversation(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, head)
}

// handleConversationBudget records a budget that stopped a run of one of the calling
// Agent's conversations.
func (s *Server) handleConversationBudget(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.BudgetExhausted](w, r, s.maxBody)
	if err != nil {
		return err
	}
	if err := s.auth.RecordBudgetExhausted(r.Context(), caller(r), conversation(r), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleOwnConversation returns one of the calling Agent's conversations.
func (s *Server) handleOwnConversation(w http.ResponseWriter, r *http.Request) error {
	c, err := s.auth.OwnConversation(r.Context(), caller(r), conversation(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}

// handleConversations lists a project's conversations for a member; ?agent= narrows it.
func (s *Server) handleConversations(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.auth.Conversations(r.Context(), caller(r), project(r), r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	page, err := paginate(r, cs, func(c contract.ConversationSummary) string { return string(c.Agent) + "/" + string(c.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleConversation returns one Agent's conversation for a member.
func (s *Server) handleConversation(w http.ResponseWriter, r *http.Request) error {
	c, err := s.auth.Conversation(r.Context(), caller(r), project(r), r.PathValue("agent"), conversation(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}
