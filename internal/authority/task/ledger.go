package task

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// ledger is the task ledger of one project: the State the Keeper's [eventlog.Driver]
// keeps of its log, caught up before each use (docs/architecture.md, "The project state
// and its driver"), so several instances over one store agree. Besides the task events it
// follows the Agents' Operation states, which decide when a waiting task wakes, and which
// conversations exist. It is pure: whether a budget has room is not in the log, so it is
// read at each call that needs it and handed to [ledger.next] and [ledger.reported].
type ledger struct {
	tasks       map[contract.TaskID]*contract.Task
	order       []contract.TaskID // by post
	wake        map[contract.TaskID]bool
	byClientKey map[clientKey]contract.TaskID
	known       map[convKey]bool // conversations posted to or saved
	pins        map[convKey]contract.CasePin
	authors     map[convKey][]contract.Principal // who posted each conversation's tasks, first posts first
	ops         map[contract.AgentID]map[int64]opState
	// pinned is the pins and authors as last published ([ledger.publish]); nil once a
	// post changed either since.
	pinned *pinView
}

// pinView is what a conversation's tasks hold its work to, and who posted them, as the
// ledger published it for reads made without the project's lock ([Keeper.Pin]): nothing
// changes it once published.
type pinView struct {
	pins    map[convKey]contract.CasePin
	authors map[convKey][]contract.Principal
}

// publish returns the ledger's pins and authors as a value nothing changes
// ([eventlog.Driver.Publish]), copied again only when a post changed them since the last.
func (l *ledger) publish() *pinView {
	if l.pinned == nil {
		v := &pinView{pins: maps.Clone(l.pins), authors: make(map[convKey][]contract.Principal, len(l.authors))}
		for k, by := range l.authors {
			v.authors[k] = slices.Clip(by) // Apply appends past the copy's length, never within it
		}
		l.pinned = v
	}
	return l.pinned
}

type clientKey struct {
	agent contract.AgentID
	key   string
}

type convKey struct {
	agent contract.AgentID
	id    contract.ConversationID
}

// opState is what the ledger keeps of one Operation.
type opState struct {
	tool  string
	state contract.OperationState
}

// rooms says which budgets that tasks wait on had room when read ([Keeper.readRooms]); a
// budget not in it has none.
type rooms map[string]bool

var _ eventlog.State = (*ledger)(nil)

// newLedger returns the ledger of an empty log.
func newLedger() *ledger {
	return &ledger{tasks: map[contract.TaskID]*contract.Task{}, wake: map[contract.TaskID]bool{},
		byClientKey: map[clientKey]contract.TaskID{}, known: map[convKey]bool{}, pins: map[convKey]contract.CasePin{},
		authors: map[convKey][]contract.Principal{}, ops: map[contract.AgentID]map[int64]opState{}}
}

// Apply steps the ledger by e, the next event of its project's log ([eventlog.State]).
func (l *ledger) Apply(e store.Event) error {
	switch e.Type {
	case event.TaskPosted:
		var d event.TaskPostedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode event %d: %w", e.Seq, err)
		}
		t := d.Task
		l.tasks[t.ID] = &t
		l.order = append(l.order, t.ID)
		if t.ClientKey != "" {
			l.byClientKey[clientKey{t.Agent, t.ClientKey}] = t.ID
		}
		k := convKey{t.Agent, t.Conversation}
		l.known[k] = true
		l.pinned = nil
		if !slices.Contains(l.authors[k], t.PostedBy) {
			l.authors[k] = append(l.authors[k], t.PostedBy)
		}
		if t.CaseType != "" || t.CaseID != "" {
			pin := l.pins[k]
			if t.CaseType != "" {
				pin.CaseType, pin.BusinessKey = t.CaseType, t.BusinessKey
			}
			if t.CaseID != "" {
				pin.CaseID = t.CaseID
			}
			l.pins[k] = pin
		}
	case event.TaskClaimed:
		var d event.TaskClaimedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode event %d: %w", e.Seq, err)
		}
		t, ok := l.tasks[d.Task]
		if !ok {
			return fmt.Errorf("event %d claims task %s, which was never posted", e.Seq, d.Task)
		}
		lease := d.LeaseUntil
		t.State, t.Attempt, t.LeaseUntil, t.RunWait, t.UpdatedAt = contract.TaskClaimed, d.Attempt, &lease, d.Wait, e.At
		l.wake[d.Task] = d.Wake
	case event.TaskReported:
		var d event.TaskReportedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode event %d: %w", e.Seq, err)
		}
		t, ok := l.tasks[d.Task]
		if !ok {
			return fmt.Errorf("event %d reports task %s, which was never posted", e.Seq, d.Task)
		}
		res := d.TaskResult
		t.State, t.Waiting, t.Result, t.LeaseUntil, t.RunWait, t.UpdatedAt = d.State, d.Waiting, &res, nil, nil, e.At
	case event.TaskCancelRequested:
		var d event.TaskCancelRequestedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode event %d: %w", e.Seq, err)
		}
		return l.applyCancel(e, d)
	case event.OpAdmitted, event.OpChanged:
		var d event.Operation
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode event %d: %w", e.Seq, err)
		}
		agent := contract.AgentID(d.Agent)
		ops := l.ops[agent]
		if ops == nil {
			ops = map[int64]opState{}
			l.ops[agent] = ops
		}
		s := ops[d.Ordinal]
		if d.Tool != "" {
			s.tool = d.Tool
		}
		if d.State != "" {
			s.state = d.State
		}
		ops[d.Ordinal] = s
	case event.ConversationSaved:
		var d event.ConversationSavedData
		agent, isAgent := strings.CutPrefix(e.Actor, string(contract.PrincipalAgent)+":")
		if isAgent && json.Unmarshal(e.Data, &d) == nil && d.Conversation != "" {
			l.known[convKey{contract.AgentID(agent), d.Conversation}] = true
		}
	}
	return nil
}

// reported reports whether every Operation of agent in ws has an outcome the model can
// be shown: settled, or needing a person; and every budget in ws has room in rs.
func (l *ledger) reported(agent contract.AgentID, ws []contract.TaskWait, rs rooms) bool {
	ops := l.ops[agent]
	for _, w := range ws {
		if w.Budget != "" {
			if !rs[w.Budget] {
				return false
			}
			continue
		}
		var s opState
		found := false
		if w.Ordinal > 0 {
			s, found = ops[w.Ordinal]
		} else {
			// The newest Operation of the tool after the one before the call.
			var newest int64
			for o, x := range ops {
				if o > w.After && x.tool == w.Tool && o > newest {
					newest, s, found = o, x, true
				}
			}
		}
		if !found || !(s.state.Settled() || s.state == contract.OpNeedsPerson) {
			return false
		}
	}
	return true
}

// next finds agent's next task a runtime may take at now (only task, when not empty):
// the oldest that is queued, whose claim ran out, or that waits on Operations that all
// have an outcome and budgets that have room in rs — never one whose conversation another
// live claim holds (a task that waits holds none: a message may come meanwhile). It also
// returns when the next live claim of agent runs out (zero when none), since that may
// free a task.
func (l *ledger) next(agent contract.AgentID, only contract.TaskID, now time.Time, rs rooms) (*contract.Task, bool, time.Time) {
	busy := map[contract.ConversationID]bool{}
	var expiry time.Time
	for _, id := range l.order {
		t := l.tasks[id]
		if t.Agent == agent && t.State == contract.TaskClaimed && t.LeaseUntil != nil && now.Before(*t.LeaseUntil) {
			busy[t.Conversation] = true
			if expiry.IsZero() || t.LeaseUntil.Before(expiry) {
				expiry = *t.LeaseUntil
			}
		}
	}
	for _, id := range l.order {
		t := l.tasks[id]
		if t.Agent != agent || (only != "" && id != only) || busy[t.Conversation] {
			continue
		}
		switch {
		case t.State == contract.TaskQueued:
			return t, false, expiry
		case t.State == contract.TaskClaimed && t.LeaseUntil != nil && !now.Before(*t.LeaseUntil):
			return t, l.wake[id], expiry
		case t.State == contract.TaskWaiting && l.reported(agent, t.Waiting, rs):
			return t, true, expiry
		}
	}
	return nil, false, expiry
}
