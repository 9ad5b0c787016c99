package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Conversations are kept as events of the Agent's project (DESIGN.md §9.3): each save is a
// conversation.saved event whose actor is the Agent, carrying the messages that changed
// and the runtime's resume state; large saves go to the store's blob path like any event
// data. Saves of one conversation form a chain through Prev, so a save from a runtime
// that did not see the last one is refused rather than interleaved.
//
// Loading a conversation reads the project's log from the start: there is no index by
// conversation yet, so a load costs one pass over the log. Saves cost a pass over the
// events since the previous save only.

// conversationSaved is the data of a conversation.saved event.
type conversationSaved struct {
	Conversation contract.ConversationID `json:"conversation"`
	Prev         int64                   `json:"prev"`
	From         int                     `json:"from"`
	Count        int                     `json:"count"` // messages after this save
	Messages     []json.RawMessage       `json:"messages"`
	State        json.RawMessage         `json:"state,omitempty"`
}

// conversationBudget is the data of a conversation.budget_exhausted event.
type conversationBudget struct {
	Conversation contract.ConversationID `json:"conversation"`
	contract.BudgetExhausted
}

// conversationRef is the part of either event that says whose it is.
type conversationRef struct {
	Conversation contract.ConversationID `json:"conversation"`
}

// agentOnly refuses callers other than an Agent: a conversation is written by the
// runtime that holds the Agent's token, never by a member on its behalf.
func (c Caller) agentOnly() (contract.ProjectID, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return "", contract.Errorf(contract.CodeForbidden, "only an Agent writes its conversations; use the agent token the runtime was given (members read conversations under /api/v1/projects/{project}/agents/{agent}/conversations).")
	}
	return c.Projects[0], nil
}

// SaveConversation appends s to conversation id of the calling Agent and returns where the
// conversation now stands. See [contract.ConversationSave] for Prev and From.
func (a *Authority) SaveConversation(ctx context.Context, c Caller, id contract.ConversationID, s contract.ConversationSave) (contract.ConversationHead, error) {
	project, err := c.agentOnly()
	if err != nil {
		return contract.ConversationHead{}, err
	}
	if _, err := contract.ParseConversationID(string(id)); err != nil {
		return contract.ConversationHead{}, err
	}
	if err := checkSave(s); err != nil {
		return contract.ConversationHead{}, err
	}
	actor := string(c.Principal())
	data := conversationSaved{Conversation: id, Prev: s.Prev, From: s.From, Messages: s.Messages, State: s.State}
	var head contract.ConversationHead
	err = a.store.Update(ctx, func(tx store.Tx) error {
		kept := 0
		if s.Prev > 0 {
			prev, err := savedAt(ctx, tx, project, actor, id, s.Prev)
			if err != nil {
				return err
			}
			if s.From > prev.Count {
				return contract.Errorf(contract.CodeInvalidArgument, "the save starts at message %d but conversation %s holds %d; send the messages from %d on", s.From, id, prev.Count, prev.Count)
			}
			kept = s.From
		}
		data.Count = kept + len(s.Messages)
		b, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("encode conversation save: %w", err)
		}
		ev, err := tx.Append(ctx, store.NewEvent{Project: string(project), Type: contract.EventConversationSaved, At: a.nowUTC(), Actor: actor, Data: b})
		if err != nil {
			return fmt.Errorf("append conversation save: %w", err)
		}
		if s.Prev > 0 {
			// Writers of a log are serialized from their first Append, so a save that
			// landed after Prev is visible here and this one is refused.
			err := scanLog(ctx, tx, project, s.Prev, ev.Seq-1, func(e store.Event) error {
				if ref, ok := conversationOf(e, actor); ok && e.Type == contract.EventConversationSaved && ref == id {
					return &contract.Error{Code: contract.CodeConversationConflict,
						Teaching: fmt.Sprintf("conversation %s was saved by another runtime of this Agent (event %d) after event %d; load it again and resume from there.", id, e.Seq, s.Prev)}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		head = contract.ConversationHead{ID: id, Seq: ev.Seq, Messages: data.Count}
		return nil
	})
	if err != nil {
		return contract.ConversationHead{}, fmt.Errorf("save conversation %s: %w", id, refuse(err, "conversation "+string(id)))
	}
	return head, nil
}

// checkSave refuses a save the authority cannot keep: negative positions, messages or a
// state that are not JSON objects, or a save over [contract.MaxConversationEntry].
func checkSave(s contract.ConversationSave) error {
	if s.Prev < 0 || s.From < 0 || (s.Prev == 0 && s.From != 0) {
		return contract.Errorf(contract.CodeInvalidArgument, "prev %d and from %d do not fit: both are zero or positive, and a save with prev 0 starts the conversation at message 0", s.Prev, s.From)
	}
	size := len(s.State)
	for i, m := range s.Messages {
		if !isObject(m) {
			return contract.Errorf(contract.CodeInvalidArgument, "message %d of the save is not a JSON object; send each message as an object", s.From+i)
		}
		size += len(m)
	}
	if len(s.State) > 0 && !isObject(s.State) {
		return contract.Errorf(contract.CodeInvalidArgument, "the save's state is not a JSON object; send an object or leave it out")
	}
	if size > contract.MaxConversationEntry {
		return contract.Errorf(contract.CodeConversationTooLarge, "the save holds %d bytes, over the bound of %d; send only the messages that changed and keep tool results bounded", size, contract.MaxConversationEntry)
	}
	return nil
}

func isObject(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// savedAt returns the save at seq, which must be one of actor's saves of id.
func savedAt(ctx context.Context, r store.Reader, project contract.ProjectID, actor string, id contract.ConversationID, seq int64) (conversationSaved, error) {
	es, err := r.Events(ctx, string(project), seq-1, 1)
	if err != nil {
		return conversationSaved{}, fmt.Errorf("read event %d: %w", seq, err)
	}
	var s conversationSaved
	if len(es) != 1 || es[0].Seq != seq || es[0].Type != contract.EventConversationSaved || es[0].Actor != actor ||
		json.Unmarshal(es[0].Data, &s) != nil || s.Conversation != id {
		return conversationSaved{}, contract.Errorf(contract.CodeInvalidArgument, "event %d is not a save of conversation %s; send prev as the seq of its last save, or 0 to start it anew", seq, id)
	}
	return s, nil
}

// conversationOf returns the conversation e belongs to when it is one of actor's
// conversation events (any actor when actor is empty).
func conversationOf(e store.Event, actor string) (contract.ConversationID, bool) {
	if !strings.HasPrefix(e.Type, "conversation.") || (actor != "" && e.Actor != actor) {
		return "", false
	}
	var ref conversationRef
	if json.Unmarshal(e.Data, &ref) != nil || ref.Conversation == "" {
		return "", false
	}
	return ref.Conversation, true
}

// RecordBudgetExhausted records that a budget stopped a run of conversation id of the
// calling Agent.
func (a *Authority) RecordBudgetExhausted(ctx context.Context, c Caller, id contract.ConversationID, b contract.BudgetExhausted) error {
	project, err := c.agentOnly()
	if err != nil {
		return err
	}
	if _, err := contract.ParseConversationID(string(id)); err != nil {
		return err
	}
	if (b.Scope != "run" && b.Scope != "conversation") || (b.Kind != "turns" && b.Kind != "tokens" && b.Kind != "usd") {
		return contract.Errorf(contract.CodeInvalidArgument, "budget scope %q or kind %q is unknown; scope is run or conversation, kind is turns, tokens or usd", b.Scope, b.Kind)
	}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		return a.appendEvent(ctx, tx, project, contract.EventConversationBudgetExhausted, c.Principal(), a.nowUTC(), conversationBudget{Conversation: id, BudgetExhausted: b})
	})
	if err != nil {
		return fmt.Errorf("record budget of conversation %s: %w", id, refuse(err, "conversation "+string(id)))
	}
	return nil
}

// OwnConversation returns conversation id of the calling Agent. An unknown id is
// [contract.CodeNotFound].
func (a *Authority) OwnConversation(ctx context.Context, c Caller, id contract.ConversationID) (contract.Conversation, error) {
	project, err := c.agentOnly()
	if err != nil {
		return contract.Conversation{}, err
	}
	return a.loadConversation(ctx, project, contract.AgentID(c.ID), id)
}

// Conversation returns conversation id of agent (an id or a name) in project, for a
// member of project.
func (a *Authority) Conversation(ctx context.Context, c Caller, project contract.ProjectID, agent string, id contract.ConversationID) (contract.Conversation, error) {
	if err := c.member(project); err != nil {
		return contract.Conversation{}, err
	}
	ag, err := findAgent(ctx, a.store, project, agent)
	if err != nil {
		return contract.Conversation{}, fmt.Errorf("load conversation %s: %w", id, refuse(err, "agent "+agent))
	}
	return a.loadConversation(ctx, project, contract.AgentID(ag.ID), id)
}

func (a *Authority) loadConversation(ctx context.Context, project contract.ProjectID, agent contract.AgentID, id contract.ConversationID) (contract.Conversation, error) {
	if _, err := contract.ParseConversationID(string(id)); err != nil {
		return contract.Conversation{}, err
	}
	actor := string(contract.NewPrincipal(contract.PrincipalAgent, string(agent)))
	conv := contract.Conversation{ID: id, Project: project, Agent: agent}
	err := scanLog(ctx, a.store, project, 0, -1, func(e store.Event) error {
		if ref, ok := conversationOf(e, actor); !ok || ref != id {
			return nil
		}
		switch e.Type {
		case contract.EventConversationSaved:
			var s conversationSaved
			if err := json.Unmarshal(e.Data, &s); err != nil {
				return fmt.Errorf("decode event %d: %w", e.Seq, err)
			}
			if s.Prev == 0 {
				conv.Messages = nil
			}
			conv.Messages = append(conv.Messages[:min(s.From, len(conv.Messages))], s.Messages...)
			conv.State, conv.Seq, conv.UpdatedAt = s.State, e.Seq, e.At
		case contract.EventConversationBudgetExhausted:
			var b conversationBudget
			if err := json.Unmarshal(e.Data, &b); err != nil {
				return fmt.Errorf("decode event %d: %w", e.Seq, err)
			}
			conv.Budgets = append(conv.Budgets, b.BudgetExhausted)
		}
		return nil
	})
	if err != nil {
		return contract.Conversation{}, fmt.Errorf("load conversation %s: %w", id, refuse(err, "project "+string(project)))
	}
	if conv.Seq == 0 {
		return contract.Conversation{}, contract.Errorf(contract.CodeNotFound, "agent %s has no conversation %s; list the project's conversations to see the ids in use.", agent, id)
	}
	if conv.Messages == nil {
		conv.Messages = []json.RawMessage{}
	}
	return conv, nil
}

// Conversations lists the conversations of project's Agents for a member of project,
// by agent then id; agent (an id or a name) narrows it to one Agent when not empty.
func (a *Authority) Conversations(ctx context.Context, c Caller, project contract.ProjectID, agent string) ([]contract.ConversationSummary, error) {
	if err := c.member(project); err != nil {
		return nil, err
	}
	actor := ""
	if agent != "" {
		ag, err := findAgent(ctx, a.store, project, agent)
		if err != nil {
			return nil, fmt.Errorf("list conversations: %w", refuse(err, "agent "+agent))
		}
		actor = string(contract.NewPrincipal(contract.PrincipalAgent, ag.ID))
	}
	type key struct {
		agent contract.AgentID
		id    contract.ConversationID
	}
	found := map[key]*contract.ConversationSummary{}
	err := scanLog(ctx, a.store, project, 0, -1, func(e store.Event) error {
		id, ok := conversationOf(e, actor)
		agentID, isAgent := strings.CutPrefix(e.Actor, string(contract.PrincipalAgent)+":")
		if !ok || !isAgent {
			return nil
		}
		k := key{contract.AgentID(agentID), id}
		s := found[k]
		if s == nil {
			s = &contract.ConversationSummary{ID: id, Agent: k.agent}
			found[k] = s
		}
		switch e.Type {
		case contract.EventConversationSaved:
			var d conversationSaved
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return fmt.Errorf("decode event %d: %w", e.Seq, err)
			}
			s.Seq, s.UpdatedAt, s.Messages = e.Seq, e.At, d.Count
		case contract.EventConversationBudgetExhausted:
			s.Budgets++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", refuse(err, "project "+string(project)))
	}
	out := make([]contract.ConversationSummary, 0, len(found))
	for _, s := range found {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b contract.ConversationSummary) int {
		if c := strings.Compare(string(a.Agent), string(b.Agent)); c != 0 {
			return c
		}
		return strings.Compare(string(a.ID), string(b.ID))
	})
	return out, nil
}
