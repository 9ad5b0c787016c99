package task

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// A task posted by a docket.ask names its parent (contract.TaskParent): the asking task and
// the asking Agent's Operation (docs/agents.md). When the asked task ends — completed,
// failed, or cancelled — the Keeper settles that Operation with the report, in the same
// transaction, so the asking call's hold, and the asking conversation waiting on it, wake
// as for any Operation's outcome. Cancelling a task cancels the open tasks it asked for,
// and theirs.

// Ask outcome codes, on the asking Operation when the asked task did not complete.
const (
	codeAskedFailed    contract.Code = "asked_task_failed"
	codeAskedCancelled contract.Code = "asked_task_cancelled"
)

// askReport is the result of a docket.ask Operation: the asked task's report.
type askReport struct {
	Task        contract.TaskID       `json:"task"`
	Agent       contract.AgentID      `json:"agent"`
	State       contract.TaskState    `json:"state"`
	Final       string                `json:"final,omitempty"`
	ErrorCode   contract.Code         `json:"errorCode,omitempty"`
	Teaching    string                `json:"teaching,omitempty"`
	ClosedCases []contract.ClosedCase `json:"closedCases"`
}

// settleAsk appends, in tx, the outcome of the docket.ask that posted t, which now ends
// with state and res: nothing when no ask posted t, or its Operation already settled.
// l is caught up to tx.
func settleAsk(ctx context.Context, tx store.Tx, l *ledger, t *contract.Task, state contract.TaskState, res contract.TaskResult, by contract.Principal, now time.Time) error {
	p := t.Parent
	if p == nil || !state.Finished() {
		return nil
	}
	if s := l.ops[p.Agent][p.Ordinal]; s.state != contract.OpRunning {
		return nil
	}
	closed := res.ClosedCases
	if closed == nil {
		closed = []contract.ClosedCase{}
	}
	raw, err := json.Marshal(askReport{Task: t.ID, Agent: t.Agent, State: state, Final: res.Final, ErrorCode: res.ErrorCode, Teaching: res.Teaching, ClosedCases: closed})
	if err != nil {
		return fmt.Errorf("encode the report of task %s: %w", t.ID, err)
	}
	ev := event.Operation{Agent: string(p.Agent), Ordinal: p.Ordinal, State: contract.OpDone, Result: raw}
	switch state {
	case contract.TaskFailed:
		ev.State, ev.ErrorCode, ev.Reason = contract.OpFailed, codeAskedFailed, fmt.Sprintf("the asked task %s failed; its report is in result", t.ID)
	case contract.TaskCancelled:
		ev.State, ev.ErrorCode, ev.Reason = contract.OpFailed, codeAskedCancelled, fmt.Sprintf("the asked task %s was cancelled; its report is in result", t.ID)
	}
	return eventlog.Append(ctx, tx, t.Project, by, now, event.OpChangedData(ev))
}

// Origin returns what a docket.ask call of Agent c in conversation conv comes from: the
// conversation's claimed task, its depth and its open asked tasks. Outside a task's
// conversation it is the zero origin.
func (k *Keeper) Origin(ctx context.Context, c identity.Caller, conv contract.ConversationID) (contract.AskOrigin, error) {
	project, err := agentOnly(c)
	if err != nil || conv == "" {
		return contract.AskOrigin{}, err
	}
	var out contract.AskOrigin
	err = k.ledgers.Read(ctx, project, func(l *ledger) error {
		for _, id := range l.order {
			t := l.tasks[id]
			if string(t.Agent) == c.ID && t.Conversation == conv && t.Kind == contract.TaskKindTask && t.State == contract.TaskClaimed {
				out.Task = t.ID
				if t.Parent != nil {
					out.Depth = t.Parent.Depth
				}
			}
		}
		if out.Task == "" {
			return nil
		}
		for _, id := range l.order {
			if t := l.tasks[id]; t.Parent != nil && t.Parent.Task == out.Task && !t.State.Finished() {
				out.OpenAsks++
			}
		}
		return nil
	})
	if err != nil {
		return contract.AskOrigin{}, fmt.Errorf("read the task of conversation %s: %w", conv, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, nil
}

// cascade asks, in tx, that the open tasks task id asked for, and theirs, end, as the
// cancel of id by cancel does. l is caught up to tx.
func (k *Keeper) cascade(ctx context.Context, tx store.Tx, l *ledger, id contract.TaskID, cancel contract.TaskCancel) error {
	for _, cid := range l.order {
		t := l.tasks[cid]
		if t.Parent == nil || t.Parent.Task != id || t.State.Finished() || t.Cancel != nil {
			continue
		}
		if err := k.cancelOne(ctx, tx, l, t, cancel); err != nil {
			return err
		}
		if err := k.cascade(ctx, tx, l, cid, cancel); err != nil {
			return err
		}
	}
	return nil
}

// Tree returns the tree of task id of project for a member: its root (the task no ask
// posted, or whose asking task is gone), and every task asked for under it.
func (k *Keeper) Tree(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.TaskNode, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.TaskNode{}, err
	}
	var out contract.TaskNode
	var treeErr error // the tree's own, which comes back as it is
	err := k.ledgers.Read(ctx, project, func(l *ledger) error {
		out, treeErr = k.tree(ctx, l, project, id)
		return nil
	})
	if err != nil {
		return contract.TaskNode{}, fmt.Errorf("read task %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, treeErr
}

// tree is [Keeper.Tree] on l.
func (k *Keeper) tree(ctx context.Context, l *ledger, project contract.ProjectID, id contract.TaskID) (contract.TaskNode, error) {
	t, ok := l.tasks[id]
	if !ok {
		return contract.TaskNode{}, contract.Errorf(contract.CodeNotFound, "project %s has no task %s; docket task list shows its tasks", project, id)
	}
	for seen := 0; t.Parent != nil && t.Parent.Task != "" && seen <= contract.MaxAskDepth; seen++ {
		up, ok := l.tasks[t.Parent.Task]
		if !ok {
			break
		}
		t = up
	}
	names := map[contract.AgentID]string{}
	name := func(a contract.AgentID) (string, error) {
		if n, ok := names[a]; ok {
			return n, nil
		}
		ag, err := identity.FindAgent(ctx, k.store, project, string(a))
		if err != nil {
			return "", fmt.Errorf("read agent %s: %w", a, eventlog.Refuse(err, "agent "+string(a)))
		}
		names[a] = ag.Name
		return ag.Name, nil
	}
	var build func(t *contract.Task, depth int) (contract.TaskNode, error)
	build = func(t *contract.Task, depth int) (contract.TaskNode, error) {
		n, err := name(t.Agent)
		if err != nil {
			return contract.TaskNode{}, err
		}
		node := contract.TaskNode{Task: k.view(t), AgentName: n, Children: []contract.TaskNode{}}
		if depth > contract.MaxAskDepth {
			return node, nil
		}
		for _, cid := range l.order {
			ch := l.tasks[cid]
			if ch.Parent == nil || ch.Parent.Task != t.ID {
				continue
			}
			sub, err := build(ch, depth+1)
			if err != nil {
				return contract.TaskNode{}, err
			}
			node.Children = append(node.Children, sub)
		}
		return node, nil
	}
	return build(t, 0)
}

// Lineage returns the Agents whose tasks asked for task id of agent in project, through
// docket.ask, nearest first, and the task at the top of its tree (id itself when no ask
// posted it): the asked task's model requests count against the askers' Agent budgets and
// against the budgets of the schedule whose fire posted the top task. A task of another
// Agent is refused not_found, as [Keeper.Task] refuses it.
func (k *Keeper) Lineage(ctx context.Context, project contract.ProjectID, agent string, id contract.TaskID) (askers []string, root contract.Task, err error) {
	err = k.ledgers.Read(ctx, project, func(l *ledger) error {
		t := l.tasks[id]
		if t == nil || string(t.Agent) != agent {
			return contract.Errorf(contract.CodeNotFound, "project %s has no task %s of yours; a model request counts against the task the runtime claimed", project, id)
		}
		for seen := 0; t.Parent != nil && seen <= contract.MaxAskDepth; seen++ {
			if a := string(t.Parent.Agent); a != string(t.Agent) && !slices.Contains(askers, a) {
				askers = append(askers, a)
			}
			up := l.tasks[t.Parent.Task]
			if t.Parent.Task == "" || up == nil {
				break
			}
			t = up
		}
		root = *t
		return nil
	})
	if err != nil {
		return nil, contract.Task{}, readErr(err, "read task "+string(id), project)
	}
	return askers, root, nil
}

// askOpenWait bounds how long [Keeper.AskOpen] waits for the task ledger inside another
// writer's transaction: long enough for a read of the ledger (a head read and a catch-up)
// on a loaded machine, short enough that a task write waiting for that transaction's head
// is freed soon, by the transaction ending and running again.
const askOpenWait = 100 * time.Millisecond

// AskOpen refuses a docket.ask from task id of project as it is about to be posted once
// that task ended or was asked to be cancelled (ask_refused), or already has
// [contract.MaxAskFanOut] asked tasks open (ask_fan_out): an approval that comes after
// either posts nothing. The limits checked when the ask was made are checked again here,
// because other asks may have been posted while this one waited for a member.
//
// held is the project's log when the caller holds it through another part of the Log the
// ledger joined (the operation ledger, in the authority: an approved ask's decision, and
// the transaction that posts the asked task, under its head lock): the ledger is then read
// through it ([eventlog.Along]), as far as the holder caught the log up (inside that
// transaction, to the head it locked, so a cancel committed since the first check is seen
// before the post), with no lock taken and no wait (docs/architecture.md, "The lock
// order"). Nil: the caller holds nothing, and the ledger is locked and caught up through r,
// the store or a transaction. In a transaction it then waits for the ledger at most
// [askOpenWait]: a task write holding the ledger may be waiting for that transaction's
// head, so a ledger held past it refuses the check with [eventlog.ErrBusy], and the
// caller's write runs again once the head is free.
func (k *Keeper) AskOpen(ctx context.Context, held eventlog.Holding, r store.Reader, project contract.ProjectID, id contract.TaskID) error {
	if held != nil {
		return askOpen(eventlog.Along(held, k.ledgers).State(), id)
	}
	var h *eventlog.Held[*ledger]
	if _, inTx := r.(store.Tx); inTx {
		var ok bool
		if h, ok = k.ledgers.LockWithin(ctx, project, askOpenWait); !ok {
			return fmt.Errorf("check the asking task %s: %w", id, eventlog.ErrBusy)
		}
	} else {
		h = k.ledgers.Lock(project)
	}
	defer h.Unlock()
	l, err := h.CatchUp(ctx, r)
	if err != nil {
		return fmt.Errorf("read task %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return askOpen(l, id)
}

// askOpen is [Keeper.AskOpen] on l.
func askOpen(l *ledger, id contract.TaskID) error {
	t, ok := l.tasks[id]
	switch {
	case !ok:
		return contract.Errorf(contract.CodeAskRefused, "the asking task %s is gone; post the work as a new task", id)
	case t.Cancel != nil || t.State.Finished():
		return contract.Errorf(contract.CodeAskRefused, "the asking task %s ended (%s) or was cancelled before the ask was approved; nothing was posted", id, t.State)
	}
	open := 0
	for _, cid := range l.order {
		if c := l.tasks[cid]; c.Parent != nil && c.Parent.Task == id && !c.State.Finished() {
			open++
		}
	}
	if open >= contract.MaxAskFanOut {
		return contract.Errorf(contract.CodeAskFanOut,
			"task %s has %d asked tasks open, the most one task may, so this approved ask posted nothing; the Agent asks again once one reports", id, open)
	}
	return nil
}
