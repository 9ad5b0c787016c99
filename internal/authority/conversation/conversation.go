// Package conversation keeps the conversations of Agents in their project's event log: an
// Agent's runtime saves each revision and reads it back to resume, and members read them.
// An index of where each conversation's events are, caught up from the log, keeps a read
// from rereading the whole log.
package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Keeper keeps the conversations of one store's Agents. It is safe for concurrent use.
type Keeper struct {
	store store.Store
	now   func() time.Time
	// indexes keeps each project's conversation index, and is the path the Keeper reads
	// it and writes a save through (docs/architecture.md, "The project state and its
	// driver"). It is a part of a project [eventlog.Log] that other parts may join (the
	// authority's, with the operation ledger): its lock is then the project's one lock,
	// which a save holds across its transaction and a read while it catches up, each
	// holding no other lock (docs/architecture.md, "The lock order").
	indexes *eventlog.Driver[*index]
}

// New returns the Keeper of st's conversations, on a project log of its own; now is the
// clock of the events it appends.
func New(st store.Store, now func() time.Time) *Keeper {
	return Join(eventlog.NewLog(st), now)
}

// Join returns the Keeper of the conversations of l's store as a part of l
// ([eventlog.Join]): each project's index is under the one lock of the project's log and
// caught up by its one cursor, beside the other parts that joined l.
func Join(l *eventlog.Log, now func() time.Time) *Keeper {
	return &Keeper{store: l.Store(), now: now, indexes: eventlog.Join(l, newIndex)}
}

// nowUTC is the clock, in UTC, at the precision the event log keeps.
func (a *Keeper) nowUTC() time.Time { return a.now().UTC().Round(0) }

// Conversations are kept as events of the Agent's project: each save is a
// conversation.saved event whose actor is the Agent, carrying the messages that changed
// and the runtime's resume state; large saves go to the store's blob path like any event
// data. Saves of one conversation form a chain through Prev, so a save from a runtime
// that did not see the last one is refused rather than interleaved.
//
// An in-process index, a State of the log (index below), says which events are whose
// conversation: a load reads only the conversation's own events since it last started
// anew, and a list reads none beyond catching the index up. A save that continues the
// conversation's last save reads nothing beyond its catch-up: the index knows that save's
// count, and that no save came after it.

// agentOnly refuses callers other than an Agent: a conversation is written by the
// runtime that holds the Agent's token, never by a member on its behalf.
func agentOnly(c identity.Caller) (contract.ProjectID, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return "", contract.Errorf(contract.CodeForbidden, "only an Agent writes its conversations; use the agent token the runtime was given (members read conversations under /api/v1/projects/{project}/agents/{agent}/conversations).")
	}
	return c.Projects[0], nil
}

// SaveConversation appends s to conversation id of the calling Agent and returns where the
// conversation now stands. See [contract.ConversationSave] for Prev and From.
func (a *Keeper) SaveConversation(ctx context.Context, c identity.Caller, id contract.ConversationID, s contract.ConversationSave) (contract.ConversationHead, error) {
	project, err := agentOnly(c)
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
	data := event.ConversationSavedData{Conversation: id, Prev: s.Prev, From: s.From, Messages: s.Messages, State: s.State}
	var head contract.ConversationHead
	err = a.indexes.Write(ctx, project, func(tx store.Tx, x *index) error {
		kept := 0
		last := x.convs[conversationKey{actor, id}]
		if s.Prev > 0 {
			count, err := x.countAt(ctx, tx, project, actor, id, s.Prev)
			if err != nil {
				return err
			}
			if s.From > count {
				return contract.Errorf(contract.CodeInvalidArgument, "the save starts at message %d but conversation %s holds %d; send the messages from %d on", s.From, id, count, count)
			}
			kept = s.From
		}
		data.Count = kept + len(s.Messages)
		now := a.nowUTC()
		ne, err := eventlog.New(project, "", contract.Principal(actor), now, data)
		if err != nil {
			return err
		}
		if err := x.checkBounds(c, id, len(ne.Data), now); err != nil {
			return err
		}
		if s.Prev > 0 && last != nil && last.seq > s.Prev {
			// The write sequence holds the log's head, so the index, caught up to it,
			// holds every save that landed after prev: this one is refused, naming the
			// first of them.
			return conflict(ctx, tx, project, actor, id, s.Prev)
		}
		ev, err := tx.Append(ctx, ne)
		if err != nil {
			return fmt.Errorf("append conversation save: %w", err)
		}
		head = contract.ConversationHead{ID: id, Seq: ev.Seq, Messages: data.Count}
		return nil
	})
	if err != nil {
		return contract.ConversationHead{}, fmt.Errorf("save conversation %s: %w", id, eventlog.Refuse(err, "conversation "+string(id)))
	}
	return head, nil
}

// conflict is the refusal of a save of conversation id by actor whose prev is not the
// conversation's last save: it names the first save after prev, read from r.
func conflict(ctx context.Context, r store.Reader, project contract.ProjectID, actor string, id contract.ConversationID, prev int64) error {
	err := eventlog.Scan(ctx, r, project, prev, -1, func(e store.Event) error {
		if ref, ok := conversationOf(e, actor); ok && e.Type == event.ConversationSaved && ref == id {
			return &contract.Error{Code: contract.CodeConversationConflict,
				Teaching: fmt.Sprintf("conversation %s was saved by another runtime of this Agent (event %d) after event %d; load it again and resume from there.", id, e.Seq, prev)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fmt.Errorf("conversation %s: the index holds a save after event %d that the log lacks", id, prev)
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

// countAt returns the count of messages of the save at seq, which must be one of actor's
// saves of id: known when it is the conversation's last save, else read from r.
func (x *index) countAt(ctx context.Context, r store.Reader, project contract.ProjectID, actor string, id contract.ConversationID, seq int64) (int, error) {
	if e := x.convs[conversationKey{actor, id}]; e != nil && e.seq == seq {
		return e.count, nil
	}
	s, err := savedAt(ctx, r, project, actor, id, seq)
	return s.Count, err
}

// savedAt returns the save at seq, which must be one of actor's saves of id.
func savedAt(ctx context.Context, r store.Reader, project contract.ProjectID, actor string, id contract.ConversationID, seq int64) (event.ConversationSavedData, error) {
	es, err := r.Events(ctx, string(project), seq-1, 1)
	if err != nil {
		return event.ConversationSavedData{}, fmt.Errorf("read event %d: %w", seq, err)
	}
	var s event.ConversationSavedData
	if len(es) != 1 || es[0].Seq != seq || es[0].Type != event.ConversationSaved || es[0].Actor != actor ||
		json.Unmarshal(es[0].Data, &s) != nil || s.Conversation != id {
		return event.ConversationSavedData{}, contract.Errorf(contract.CodeInvalidArgument, "event %d is not a save of conversation %s; send prev as the seq of its last save, or 0 to start it anew", seq, id)
	}
	return s, nil
}

// conversationOf returns the conversation e belongs to when it is one of actor's
// conversation events (any actor when actor is empty).
func conversationOf(e store.Event, actor string) (contract.ConversationID, bool) {
	if e.Type != event.ConversationSaved && e.Type != event.ConversationBudgetExhausted && e.Type != event.ConversationCompacted || (actor != "" && e.Actor != actor) {
		return "", false
	}
	p, err := event.Decode(e.Type, e.Data)
	if err != nil {
		return "", false // data that does not decode names no conversation
	}
	var id contract.ConversationID
	switch d := p.(type) {
	case event.ConversationSavedData:
		id = d.Conversation
	case event.ConversationBudgetExhaustedData:
		id = d.Conversation
	case event.ConversationCompactedData:
		id = d.Conversation
	}
	return id, id != ""
}

// RecordBudgetExhausted records that a budget stopped a run of conversation id of the
// calling Agent.
func (a *Keeper) RecordBudgetExhausted(ctx context.Context, c identity.Caller, id contract.ConversationID, b contract.BudgetExhausted) error {
	project, err := agentOnly(c)
	if err != nil {
		return err
	}
	if _, err := contract.ParseConversationID(string(id)); err != nil {
		return err
	}
	if (b.Scope != "run" && b.Scope != "conversation") || (b.Kind != "turns" && b.Kind != "tokens" && b.Kind != "usd") {
		return contract.Errorf(contract.CodeInvalidArgument, "budget scope %q or kind %q is unknown; scope is run or conversation, kind is turns, tokens or usd", b.Scope, b.Kind)
	}
	// Appended without the index's write sequence: the event records what the runtime
	// did, which no rule of the index decides on and no other event makes untrue, so it
	// needs neither the index's lock nor the log's head; the index applies it at its next
	// catch-up, from memory (docs/architecture.md, "The project state and its driver").
	// Through the sequence it would wait behind the project's saves and lock the head.
	err = a.store.Update(ctx, func(tx store.Tx) error {
		return eventlog.Append(ctx, tx, project, c.Principal(), a.nowUTC(), event.ConversationBudgetExhaustedData{Conversation: id, BudgetExhausted: b})
	})
	if err != nil {
		return fmt.Errorf("record budget of conversation %s: %w", id, eventlog.Refuse(err, "conversation "+string(id)))
	}
	return nil
}

// OwnConversation returns conversation id of the calling Agent. An unknown id is
// [contract.CodeNotFound].
func (a *Keeper) OwnConversation(ctx context.Context, c identity.Caller, id contract.ConversationID) (contract.Conversation, error) {
	project, err := agentOnly(c)
	if err != nil {
		return contract.Conversation{}, err
	}
	return a.loadConversation(ctx, project, contract.AgentID(c.ID), id)
}

// Conversation returns conversation id of agent (an id or a name) in project, for a
// member of project.
func (a *Keeper) Conversation(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID) (contract.Conversation, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Conversation{}, err
	}
	ag, err := identity.FindAgent(ctx, a.store, project, agent)
	if err != nil {
		return contract.Conversation{}, fmt.Errorf("load conversation %s: %w", id, eventlog.Refuse(err, "agent "+agent))
	}
	return a.loadConversation(ctx, project, contract.AgentID(ag.ID), id)
}

func (a *Keeper) loadConversation(ctx context.Context, project contract.ProjectID, agent contract.AgentID, id contract.ConversationID) (contract.Conversation, error) {
	if _, err := contract.ParseConversationID(string(id)); err != nil {
		return contract.Conversation{}, err
	}
	actor := string(contract.NewPrincipal(contract.PrincipalAgent, string(agent)))
	var seqs []int64
	err := a.indexes.Read(ctx, project, func(x *index) error {
		if c := x.convs[conversationKey{actor, id}]; c != nil && c.seq > 0 {
			seqs = mergeSeqs(mergeSeqs(c.saves, c.budgets), c.compactions)
		}
		return nil
	})
	if err != nil {
		return contract.Conversation{}, fmt.Errorf("load conversation %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	if len(seqs) == 0 {
		return contract.Conversation{}, contract.Errorf(contract.CodeNotFound, "agent %s has no conversation %s; list the project's conversations to see the ids in use.", agent, id)
	}
	conv := contract.Conversation{ID: id, Project: project, Agent: agent, Messages: []json.RawMessage{}}
	err = readSeqs(ctx, a.store, project, seqs, func(e store.Event) error {
		// The index named these events; the checks only guard against a log that does
		// not match it.
		if e.Actor != actor {
			return fmt.Errorf("event %d is not of agent %s", e.Seq, agent)
		}
		switch e.Type {
		case event.ConversationSaved:
			var s event.ConversationSavedData
			if err := json.Unmarshal(e.Data, &s); err != nil {
				return fmt.Errorf("decode event %d: %w", e.Seq, err)
			}
			if s.Conversation != id {
				return fmt.Errorf("event %d is not of conversation %s", e.Seq, id)
			}
			conv.Messages = append(conv.Messages[:min(s.From, len(conv.Messages))], s.Messages...)
			conv.State, conv.Seq, conv.UpdatedAt = s.State, e.Seq, e.At
		case event.ConversationBudgetExhausted:
			var b event.ConversationBudgetExhaustedData
			if err := json.Unmarshal(e.Data, &b); err != nil {
				return fmt.Errorf("decode event %d: %w", e.Seq, err)
			}
			if b.Conversation != id {
				return fmt.Errorf("event %d is not of conversation %s", e.Seq, id)
			}
			conv.Budgets = append(conv.Budgets, b.BudgetExhausted)
		case event.ConversationCompacted:
			cp, of, err := compactedOf(e)
			if err != nil {
				return err
			}
			if of != id {
				return fmt.Errorf("event %d is not of conversation %s", e.Seq, id)
			}
			conv.Compactions = append(conv.Compactions, cp)
		default:
			return fmt.Errorf("event %d of type %s is not a conversation's", e.Seq, e.Type)
		}
		return nil
	})
	if err != nil {
		return contract.Conversation{}, fmt.Errorf("load conversation %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return conv, nil
}

// mergeSeqs returns the ascending seqs of a and b, each ascending, in a new slice.
func mergeSeqs(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// Conversations lists the conversations of project's Agents for a member of project,
// by agent then id; agent (an id or a name) narrows it to one Agent when not empty.
func (a *Keeper) Conversations(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.ConversationSummary, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	actor := ""
	if agent != "" {
		ag, err := identity.FindAgent(ctx, a.store, project, agent)
		if err != nil {
			return nil, fmt.Errorf("list conversations: %w", eventlog.Refuse(err, "agent "+agent))
		}
		actor = string(contract.NewPrincipal(contract.PrincipalAgent, ag.ID))
	}
	var out []contract.ConversationSummary
	err := a.indexes.Read(ctx, project, func(x *index) error {
		out = make([]contract.ConversationSummary, 0, len(x.convs))
		for k, c := range x.convs {
			agentID, isAgent := strings.CutPrefix(k.actor, string(contract.PrincipalAgent)+":")
			if !isAgent || (actor != "" && k.actor != actor) {
				continue
			}
			out = append(out, contract.ConversationSummary{ID: k.id, Agent: contract.AgentID(agentID),
				Seq: c.seq, UpdatedAt: c.at, Messages: c.count, Budgets: len(c.budgets)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", eventlog.Refuse(err, "project "+string(project)))
	}
	slices.SortFunc(out, func(a, b contract.ConversationSummary) int {
		if c := strings.Compare(string(a.Agent), string(b.Agent)); c != 0 {
			return c
		}
		return strings.Compare(string(a.ID), string(b.ID))
	})
	return out, nil
}

// index knows which events of one project's log are whose conversation, so a load reads
// only the conversation's own events and a list reads none. It is the State the Keeper's
// [eventlog.Driver] keeps of the log, caught up before each use (docs/architecture.md,
// "The project state and its driver"), so several instances over one store agree.
type index struct {
	convs  map[conversationKey]*conversationEntry
	recent map[string][]saveMark // by actor, its saves of the last hour of the log, oldest first
}

var _ eventlog.State = (*index)(nil)

// newIndex returns the index of an empty log.
func newIndex() *index {
	return &index{convs: map[conversationKey]*conversationEntry{}, recent: map[string][]saveMark{}}
}

// conversationKey names a conversation: the actor that writes it and its id.
type conversationKey struct {
	actor string
	id    contract.ConversationID
}

// conversationEntry is what the index keeps of one conversation: enough to list it, and
// the seqs a load must read.
type conversationEntry struct {
	saves   []int64 // the saves since the last one with prev 0, which drops what came before
	budgets []int64 // every budget event
	// compactions are its conversation.compacted events, every one: what a summary
	// replaced stays readable after later saves.
	compactions []int64
	seq         int64 // the last save; 0 while there is none
	at          time.Time
	count       int // messages after the last save
}

// Apply steps the index by e, the next event of its project's log ([eventlog.State]).
func (x *index) Apply(e store.Event) error {
	id, ok := conversationOf(e, "")
	if !ok {
		return nil
	}
	k := conversationKey{e.Actor, id}
	c := x.convs[k]
	if c == nil {
		c = &conversationEntry{}
		x.convs[k] = c
	}
	switch e.Type {
	case event.ConversationSaved:
		var s event.ConversationSavedData
		if err := json.Unmarshal(e.Data, &s); err != nil {
			return fmt.Errorf("decode event %d: %w", e.Seq, err)
		}
		x.mark(e.Actor, saveMark{at: e.At, bytes: len(e.Data), fresh: c.seq == 0})
		if s.Prev == 0 {
			c.saves = c.saves[:0]
		}
		c.saves = append(c.saves, e.Seq)
		c.seq, c.at, c.count = e.Seq, e.At, s.Count
	case event.ConversationBudgetExhausted:
		c.budgets = append(c.budgets, e.Seq)
	case event.ConversationCompacted:
		c.compactions = append(c.compactions, e.Seq)
	}
	return nil
}

// eventGap is the most unwanted events [readSeqs] reads to save a query: wanted events
// closer than this are read as one range.
const eventGap = 8

// readSeqs calls fn for the events of project at seqs, which are in ascending order,
// reading runs of nearby events in one call and the rest one by one.
func readSeqs(ctx context.Context, r store.Reader, project contract.ProjectID, seqs []int64, fn func(store.Event) error) error {
	for i := 0; i < len(seqs); {
		j := i + 1
		for j < len(seqs) && seqs[j]-seqs[j-1] <= eventGap && seqs[j]-seqs[i] < eventlog.MaxEventPage {
			j++
		}
		first, last := seqs[i], seqs[j-1]
		es, err := r.Events(ctx, string(project), first-1, int(last-first+1))
		if err != nil {
			return fmt.Errorf("read events %d to %d of %s: %w", first, last, project, err)
		}
		want := seqs[i:j]
		for _, e := range es {
			if len(want) == 0 || e.Seq > want[len(want)-1] {
				break
			}
			if e.Seq != want[0] {
				continue
			}
			if err := fn(e); err != nil {
				return err
			}
			want = want[1:]
		}
		if len(want) > 0 {
			return fmt.Errorf("event %d of %s is missing from the log", want[0], project)
		}
		i = j
	}
	return nil
}
