package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// An Agent asks another Agent of its project for work through the built-in Action
// contract.ActionAsk (docs/agents.md). The call is an Operation of the asking Agent, passed
// through the write gate like any Action: its request vector is the Action with the asked
// Agent's name, the task's text, the asking task ("from") and the depth the asked task
// would have. A class of the delegation policy in force that covers the vector (action
// docket.ask, agent naming the asked Agent) starts it without a person; otherwise it
// waits for a member's decision on a request. Once it runs, the asked Agent's task is
// posted in the same transaction, its parent naming the asking task and this Operation,
// and the Operation stays running at stage asked until that task reports a final state:
// the task keeper then settles it with the report (package task, ask.go).

// askShape teaches the params of ActionAsk.
const askShape = `apply docket.ask with params {"agent": "<the asked Agent's name>", "task": "<what it should do>"} and no caseId`

// askPlan is a docket.ask that passed its checks: the task it posts once it runs.
type askPlan struct {
	agent contract.AgentID
	text  string
	from  contract.TaskID // the asking task; "" outside a task's conversation
	depth int             // the asked task's depth
}

// asking reports whether op is a docket.ask whose asked task runs: it stands outside the
// write gate's one-at-a-time rule, so an Agent asks several Agents in parallel.
func asking(op *operation) bool {
	return op.state == contract.OpRunning && op.stage == contract.StageAsked
}

// askParams reads the params of an ActionAsk call, each a string.
func askParams(in *contract.ApplyActionInput) (agent, text string, err error) {
	if in.CaseID != "" {
		return "", "", contract.Errorf(contract.CodeInvalidArgument, "docket.ask takes no caseId; %s", askShape)
	}
	for name, v := range in.Params {
		if name != "agent" && name != "task" || v.Kind() != contract.ValueString {
			return "", "", contract.Errorf(contract.CodeInvalidArgument, "docket.ask has no string param %.40q; %s", name, askShape)
		}
	}
	agent, text = in.Params["agent"].Str(), strings.TrimSpace(in.Params["task"].Str())
	if agent == "" || text == "" || len(text) > contract.MaxTaskText {
		return "", "", contract.Errorf(contract.CodeInvalidArgument, "docket.ask needs agent and a task of 1 to %d bytes; %s", contract.MaxTaskText, askShape)
	}
	return agent, text, nil
}

// runAsk runs c's ApplyAction of ActionAsk from the task origin names.
// l is the project's ledger, which the admission holds.
func (o *Operations) runAsk(ctx context.Context, l *ledger, c identity.Caller, origin contract.AskOrigin, in *contract.ApplyActionInput, now time.Time, r toolRun) toolRun {
	name, text, err := askParams(in)
	if err != nil {
		return settleRun(r, nil, err)
	}
	project := c.Projects[0]
	ag, err := o.askable(ctx, c, project, name)
	if err != nil {
		return settleRun(r, nil, err)
	}
	r.op.Label = "ApplyAction docket.ask " + ag.Name
	depth := origin.Depth + 1
	switch {
	case depth > contract.MaxAskDepth:
		return settleRun(r, nil, contract.Errorf(contract.CodeAskTooDeep,
			"task %s is already %d asks deep, and asks nest at most %d deep; do this part of the work yourself, or report what is left", origin.Task, origin.Depth, contract.MaxAskDepth))
	case origin.OpenAsks >= contract.MaxAskFanOut:
		return settleRun(r, nil, contract.Errorf(contract.CodeAskFanOut,
			"task %s already has %d asked tasks open, the most one task may; wait for one to report (its Operation's outcome), then ask again", origin.Task, origin.OpenAsks))
	}
	r.ask = &askPlan{agent: contract.AgentID(ag.ID), text: text, from: origin.Task, depth: depth}
	vec := askVector(ag.Name, text, origin.Task, depth)
	if r.person {
		return o.requestRun(c, vec, now, r)
	}
	_, pol, err := o.inForce(ctx, l, project, contract.PolicyDelegation)
	if err != nil {
		return settleRun(r, nil, err)
	}
	if _, ok := pol.Delegation.Covering(vec); !ok {
		return o.requestRun(c, vec, now, r)
	}
	r.op.State, r.op.Stage = contract.OpRunning, contract.StageAsked
	return r
}

// askable returns the Agent of project that c may ask, named by its name or id.
func (o *Operations) askable(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (store.Agent, error) {
	ag, err := identity.FindAgent(ctx, o.store, project, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.Agent{}, contract.Errorf(contract.CodeAskRefused, "project %s has no Agent %.60q; ask one a member made (docket agent list names them)", project, name)
	}
	if err != nil {
		return store.Agent{}, fmt.Errorf("find agent %.60q: %w", name, err)
	}
	switch {
	case ag.ID == c.ID:
		return store.Agent{}, contract.Errorf(contract.CodeAskRefused, "an Agent does not ask itself; do the work, or ask another Agent")
	case ag.RevokedAt != nil:
		return store.Agent{}, contract.Errorf(contract.CodeAskRefused, "Agent %s is revoked and takes no tasks; ask a live Agent", ag.Name)
	}
	return ag, nil
}

// askVector is the request vector of a docket.ask: what a class covers (agent) and what a
// member decides.
func askVector(agent, text string, from contract.TaskID, depth int) contract.RequestVector {
	d, _ := contract.IntValue(int64(depth)) // a depth is small
	args := contract.Args{"agent": contract.StringValue(agent), "task": contract.StringValue(text), "depth": d}
	if from != "" {
		args["from"] = contract.StringValue(string(from))
	}
	return contract.RequestVector{Action: contract.ActionAsk, Args: args}
}

// approvedAsk runs an approved docket.ask request: the asked Agent must still take tasks,
// and the asking task must still be open with room for one more ask (checked again in
// the transaction that posts it; see postAsked).
// It returns the plan to post and the Operation's new state.
// l is the project's ledger, which the decision holds: the asking task is read through it.
func (o *Operations) approvedAsk(ctx context.Context, l *ledger, req *contract.Request, ev event.Operation) (*askPlan, event.Operation) {
	a := req.Vector.Args
	ag, err := identity.FindAgent(ctx, o.store, req.Project, a["agent"].Str())
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = contract.Errorf(contract.CodeAskRefused, "the asked Agent %.60q is gone; ask another", a["agent"].Str())
	case err == nil && ag.RevokedAt != nil:
		err = contract.Errorf(contract.CodeAskRefused, "Agent %s was revoked after the ask; ask a live Agent", ag.Name)
	}
	if from := contract.TaskID(a["from"].Str()); err == nil && from != "" && o.askOpen != nil {
		err = o.askOpen(ctx, l.held, o.store, req.Project, from)
	}
	if err != nil {
		// A refusal voids the approval; any other error fails the Operation as internal.
		if errors.As(err, new(*contract.Error)) {
			req.State = contract.RequestVoid
		} else {
			o.log.ErrorContext(ctx, "approved docket.ask not run", "request", req.ID, "error", err)
		}
		ev.State = contract.OpRefused
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(err)
		return nil, ev
	}
	ev.State, ev.Stage = contract.OpRunning, contract.StageAsked
	return &askPlan{agent: contract.AgentID(ag.ID), text: a["task"].Str(), from: contract.TaskID(a["from"].Str()), depth: int(a["depth"].Int())}, ev
}

// postAsked posts, in tx, the task ask plans, on behalf of the asking Agent by, whose
// docket.ask is Operation ordinal. l is the project's ledger, which the write holds,
// caught up inside tx.
func (o *Operations) postAsked(ctx context.Context, l *ledger, tx store.Tx, project contract.ProjectID, by contract.Principal, p askPlan, ordinal int64, now time.Time) error {
	// A cancel of the asking task, or another ask of it, committed since the ask was
	// checked is seen here, under the transaction's head lock: the task ledger is read
	// through the operation ledger held, caught up inside tx (one lock, one cursor: no
	// wait and no retry, docs/architecture.md "The lock order"), and nothing is posted
	// then.
	if p.from != "" && o.askOpen != nil {
		if err := o.askOpen(ctx, l.held, tx, project, p.from); err != nil {
			return err
		}
	}
	id, err := identity.NewID(o.rand, "t-")
	if err != nil {
		return fmt.Errorf("mint a task id: %w", err)
	}
	conv, err := identity.NewID(o.rand, "c-")
	if err != nil {
		return fmt.Errorf("mint a conversation id: %w", err)
	}
	t := contract.Task{ID: contract.TaskID(id), Project: project, Agent: p.agent, Kind: contract.TaskKindTask, Text: p.text,
		Conversation: contract.ConversationID(conv), PostedBy: by, PostedAt: now, State: contract.TaskQueued, UpdatedAt: now,
		Parent: &contract.TaskParent{Task: p.from, Agent: contract.AgentID(by.ID()), Ordinal: ordinal, Depth: p.depth}}
	return eventlog.Append(ctx, tx, project, by, now, event.TaskPostedData{Task: t})
}

// askEntry is ActionAsk as a View lists it.
var askEntry = contract.ActionEntry{Name: contract.ActionAsk, State: contract.ActionReady, Bound: []string{},
	Params: []contract.ParamEntry{
		{Name: "agent", Type: "string", Description: "the name of the Agent asked for the work"},
		{Name: "task", Type: "string", Description: "what it should do; its report (outcome, closed Cases, final text) is this call's result"},
	}}

// askView lists ActionAsk in c's View while the delegation policy in force names it.
// held is the project's ledger when the caller holds it ([Operations.inForce]).
func (o *Operations) askView(ctx context.Context, held *ledger, c identity.Caller, v *contract.View) error {
	if o.policies == nil {
		return nil
	}
	var has bool
	var err error
	if held != nil {
		has, err = o.policies.DelegationNamesAlong(held.held, contract.ActionAsk)
	} else {
		has, err = o.policies.DelegationNames(ctx, c.Projects[0], contract.ActionAsk)
	}
	if err != nil {
		return err
	}
	if has {
		v.Actions.Items = append(v.Actions.Items, askEntry)
	}
	return nil
}
