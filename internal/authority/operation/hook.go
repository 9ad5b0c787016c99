package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// A coding agent's tool call, reported by its hook (docs/coding-agents.md), is an
// Operation of the Agent the hook holds the token of: tool "hook", its input the
// hookRecord below. Its mode comes from the [hook_policy] in force: a free call is
// admitted done, a refused one refused, and one to decide waits for a decision on a
// Request whose vector names contract.ActionHook, the tool, its canonical input and the
// path or command a [delegation_policy] class reads — so the decision is bound to
// sha256 of (tool, canonical input, resolved path), and a member or an orchestrator
// decides it exactly as any other. Hook Operations stand outside the write gate of the
// six tools: they neither wait for nor hold up the Agent's Board calls, and several
// may be pending at once (a coding agent runs tool calls in parallel).

// hookTool is the tool of every hook Operation.
const hookTool = "hook"

// hookRecord is a hook Operation's recorded input.
type hookRecord struct {
	CLI     string          `json:"cli"`
	Session string          `json:"session,omitempty"`
	CallID  string          `json:"callId"`
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"` // canonical (RFC 8785)
	Path    string          `json:"path,omitempty"`
	Command string          `json:"command,omitempty"`
	// NeedsMember and Protected are what the hook found where the path lands
	// (contract.HookCall): why only a member decides it, or why it is refused.
	NeedsMember string `json:"pathNeedsMember,omitempty"`
	Protected   string `json:"protected,omitempty"`
	Mode        string `json:"mode"`
	Policy      int64  `json:"hookPolicy"` // the version of the hook policy in force that gave the mode
	Digest      string `json:"digest"`
}

// maxHookName bounds a tool name, a call id and a session id.
const maxHookName = 200

// maxHookFinding bounds a sentence of what the hook found where a path lands.
const maxHookFinding = 1000

// hookCaller refuses any caller but an Agent proven by its hook token: not a member, a
// delegate, nor an Agent's or orchestrator's own token, which reach /mcp and must not
// also speak for a coding agent's hook (docs/coding-agents.md).
func hookCaller(c identity.Caller) error {
	if c.Kind != contract.PrincipalAgent || !c.Hook || len(c.Projects) != 1 || c.Delegate != "" {
		return contract.Errorf(contract.CodeForbidden, "only a coding agent's hook reports its tool calls, with the hook token docket hook install wrote; an Agent's own token is refused here (docket hook install --replace-token gives the hook one).")
	}
	return nil
}

// hookVector returns the request vector of call, with its input canonical.
func hookVector(call contract.HookCall) (contract.RequestVector, json.RawMessage, error) {
	canon, err := jcs.Transform(call.Input)
	if err != nil {
		return contract.RequestVector{}, nil, contract.Errorf(contract.CodeInvalidArgument, "the tool input is not JSON the authority can put in canonical form; send the input as the coding agent gave it")
	}
	args := contract.Args{"input": contract.StringValue(string(canon))}
	if call.Path != "" {
		args["path"] = contract.StringValue(call.Path)
	}
	if call.Command != "" {
		args["command"] = contract.StringValue(call.Command)
	}
	return contract.RequestVector{Action: contract.ActionHook, Tool: call.Tool, Args: args}, canon, nil
}

// checkHookCall refuses a call whose fields are missing, too long or not text.
func checkHookCall(call contract.HookCall) error {
	for _, f := range []struct{ name, v string }{{"cli", call.CLI}, {"callId", call.CallID}, {"tool", call.Tool}} {
		if f.v == "" {
			return contract.Errorf(contract.CodeInvalidArgument, "the hook call has no %s; send cli, callId, tool and input as the hook read them", f.name)
		}
	}
	for _, f := range []struct{ name, v string }{{"cli", call.CLI}, {"callId", call.CallID}, {"tool", call.Tool}, {"session", call.Session}} {
		if len(f.v) > maxHookName || !utf8.ValidString(f.v) || strings.ContainsAny(f.v, "\x00\n") {
			return contract.Errorf(contract.CodeInvalidArgument, "the hook call's %s is over %d bytes or not one line of text; send it as the coding agent gave it", f.name, maxHookName)
		}
	}
	if len(call.Input) == 0 || len(call.Input) > contract.MaxHookInput {
		return contract.Errorf(contract.CodeInvalidArgument, "the hook call's input is empty or over %d bytes; send the tool input as the coding agent gave it", contract.MaxHookInput)
	}
	for _, f := range []struct{ name, v string }{{"pathNeedsMember", call.PathNeedsMember}, {"protected", call.Protected}} {
		if f.v != "" && call.Path == "" {
			return contract.Errorf(contract.CodeInvalidArgument, "the hook call has a %s but no path; send what the hook found only with the path it found it on", f.name)
		}
		if len(f.v) > maxHookFinding || !utf8.ValidString(f.v) {
			return contract.Errorf(contract.CodeInvalidArgument, "the hook call's %s is over %d bytes or not text; send the hook's sentence as it wrote it", f.name, maxHookFinding)
		}
	}
	if call.WaitMillis < 0 || time.Duration(call.WaitMillis)*time.Millisecond > contract.MaxHookWait {
		return contract.Errorf(contract.CodeInvalidArgument, "waitMs is %d; wait 0 to %d milliseconds for a decision", call.WaitMillis, contract.MaxHookWait.Milliseconds())
	}
	return nil
}

// Hook records the coding agent's tool call of the Agent c as an Operation and answers
// whether it may run. A call to decide waits for a decision up to call.WaitMillis; one
// still pending then is withdrawn — its Request expires and its Operation is refused —
// and denied with hook_undecided, so an approval that comes later runs nothing. When ctx
// ends while it waits, the call is withdrawn the same way.
func (o *Operations) Hook(ctx context.Context, c identity.Caller, call contract.HookCall) (contract.HookVerdict, error) {
	if err := hookCaller(c); err != nil {
		return contract.HookVerdict{}, err
	}
	if err := checkHookCall(call); err != nil {
		return contract.HookVerdict{}, err
	}
	project := c.Projects[0]
	vec, canon, err := hookVector(call)
	if err != nil {
		return contract.HookVerdict{}, err
	}
	digest, err := RequestDigest(vec)
	if err != nil {
		return contract.HookVerdict{}, err
	}
	hv, hp, err := o.inForce(ctx, nil, project, contract.PolicyHook)
	if err != nil {
		return contract.HookVerdict{}, err
	}
	mode := hp.Hook.Mode(c.Name, call.Tool)
	switch {
	case call.Protected != "":
		// The hook's fence holds for every tool, free or decided, as the worker's does.
		mode = contract.HookRefuse
	case call.PathNeedsMember != "" && mode == contract.HookFree:
		// A free tool is free only inside the repository: elsewhere a member decides it.
		mode = contract.HookDecide
	}
	rec := hookRecord{CLI: call.CLI, Session: call.Session, CallID: call.CallID, Tool: call.Tool, Input: canon,
		Path: call.Path, Command: call.Command, NeedsMember: call.PathNeedsMember, Protected: call.Protected, Mode: mode, Policy: hv, Digest: digest}
	verdict := contract.HookVerdict{Mode: mode, Digest: digest}
	wait := time.Duration(call.WaitMillis) * time.Millisecond
	ordinal, req, err := o.admitHook(ctx, c, rec, vec, hv, wait)
	if err != nil {
		return contract.HookVerdict{}, err
	}
	verdict.Ordinal = ordinal
	switch mode {
	case contract.HookFree:
		verdict.Allow = true
		return verdict, nil
	case contract.HookRefuse:
		if call.Protected != "" {
			verdict.ErrorCode = contract.CodeHookProtected
			verdict.Reason = fmt.Sprintf("Docket's hook never lets a tool touch this path: %s; do not try it another way", call.Protected)
			return verdict, nil
		}
		verdict.ErrorCode = contract.CodeHookProfileRefuses
		verdict.Reason = fmt.Sprintf("Docket's hook policy (version %d) refuses %s to this agent; do not try it another way — ask a member to change the policy if the call is needed", hv, call.Tool)
		return verdict, nil
	}
	verdict.Request = req
	return o.awaitHook(ctx, project, c.ID, ordinal, req, wait, verdict)
}

// admitHook records the hook Operation rec of c in its first state, and for a call to
// decide the Request for vec; it returns the ordinal and the Request's id. It decides in
// the project's write sequence ([ledger.updateLocked]): the ordinal, the hook's bounds
// and the Request are decided on the ledger caught up inside the transaction, under the
// head lock, so no other instance takes the ordinal before the commit.
func (o *Operations) admitHook(ctx context.Context, c identity.Caller, rec hookRecord, vec contract.RequestVector, version int64, wait time.Duration) (int64, contract.RequestID, error) {
	project := c.Projects[0]
	input, err := json.Marshal(rec)
	if err != nil {
		return 0, "", fmt.Errorf("encode the hook call of %s: %w", c.ID, err)
	}
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	var ordinal int64
	var req *contract.Request
	err = l.updateLocked(ctx, func(tx store.Tx) error {
		now := o.nowUTC()
		if err := l.checkHookBoundsLocked(c.ID, c.Name, rec.Mode, now, o.hookWaiting, o.hookPerMinute); err != nil {
			return err
		}
		ordinal, req = int64(len(l.ops[c.ID]))+1, nil
		ev := event.Operation{Agent: c.ID, Ordinal: ordinal, Tool: hookTool, Label: hookLabel(rec), Input: input}
		switch rec.Mode {
		case contract.HookFree:
			ev.State, ev.Decision = contract.OpDone, contract.HookFree
			ev.Result = json.RawMessage(`{"allowed":true,"by":"hook policy"}`)
		case contract.HookRefuse:
			ev.State, ev.Decision, ev.ErrorCode = contract.OpRefused, contract.HookRefuse, contract.CodeHookProfileRefuses
			ev.Reason = fmt.Sprintf("the hook policy in force (version %d) refuses %s", version, rec.Tool)
			if rec.Protected != "" {
				ev.ErrorCode, ev.Reason = contract.CodeHookProtected, "the hook protects the path: "+rec.Protected
			}
		default:
			var err error
			if req, err = o.newRequest(project, c.Principal(), vec, now); err != nil {
				return err
			}
			if rec.NeedsMember != "" {
				// The member is shown what the hook found and where the path resolves.
				req.MemberOnly = "the hook found that the path does not land plainly inside the repository: " + rec.NeedsMember
			}
			req.Ordinal, req.Deadline = ordinal, now.Add(wait) // the sweep withdraws it should this hook never come back
			ev.State, ev.Decision = contract.OpWaitingForDecision, string(req.ID)
		}
		if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.OpAdmittedData(ev)); err != nil {
			return err
		}
		if req != nil {
			return raise(ctx, tx, req)
		}
		return nil
	})
	if err != nil {
		return 0, "", eventlog.RefuseWrite(err, "admit hook call of "+c.ID, "operation")
	}
	if req == nil {
		return ordinal, "", nil
	}
	return ordinal, req.ID, nil
}

// hookLabel is the label of a hook Operation: the tool and what it lands on.
func hookLabel(rec hookRecord) string {
	what := rec.Path
	if what == "" {
		what = rec.Command
	}
	if len(what) > 80 {
		what = what[:77] + "..."
	}
	return strings.TrimSpace(rec.Tool + " " + what)
}

// awaitHook waits until the hook Operation ordinal of agent is decided or wait passes,
// and completes v with its outcome. It finds a decision through the store, so one made
// on another instance ends the wait too.
func (o *Operations) awaitHook(ctx context.Context, project contract.ProjectID, agent string, ordinal int64, req contract.RequestID, wait time.Duration, v contract.HookVerdict) (contract.HookVerdict, error) {
	bound, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	l := o.ledger(project)
	read := func(ctx context.Context) (operation, *contract.Request, int64, error) {
		l.lock()
		defer l.unlock()
		err := l.catchUpLocked(ctx, o.store)
		var op operation
		if p := l.opLocked(agent, ordinal); p != nil {
			op = *p
		}
		return op, l.requests[req], l.seq(), err
	}
	for bound.Err() == nil {
		op, r, cursor, err := read(bound)
		if err != nil && bound.Err() == nil {
			return v, err
		}
		if err == nil && op.state != contract.OpWaitingForDecision {
			return hookSettled(v, op, r), nil
		}
		_, err = o.store.Wait(bound, string(project), cursor)
		if err != nil && bound.Err() == nil {
			return v, fmt.Errorf("wait for the decision on %s: %w", req, err)
		}
	}
	// The bound passed, or the hook went away: withdraw the call so that a later approval
	// runs nothing, then answer as it now stands (a decision may have come first).
	wctx := context.WithoutCancel(ctx)
	why := fmt.Sprintf("no decision came within the hook's bound of %s", wait.Round(time.Second))
	if ctx.Err() != nil {
		why = "the hook stopped waiting before a decision"
	}
	if _, err := o.expireRequest(wctx, project, req, why); err != nil {
		return v, err
	}
	op, r, _, err := read(wctx)
	if err != nil {
		return v, err
	}
	return hookSettled(v, op, r), nil
}

// hookSettled completes v from the decided Operation op and its Request r.
func hookSettled(v contract.HookVerdict, op operation, r *contract.Request) contract.HookVerdict {
	if r != nil {
		v.DecidedBy = r.DecidedBy
	}
	switch {
	case op.state == contract.OpDone:
		v.Allow = true
	case r != nil && r.State == contract.RequestExpired:
		v.ErrorCode = contract.CodeHookUndecided
		v.Reason = fmt.Sprintf("Docket holds this call for a decision and none came (%s); request %s was withdrawn. Tell the user the call waits for a member's approval in Docket (docket requests), and do not try it another way", r.Reason, r.ID)
	default:
		v.ErrorCode = contract.CodeHookDenied
		id, why := contract.RequestID(op.decision), ""
		if r != nil {
			id = r.ID
			if r.Reason != "" {
				why = ": " + r.Reason
			}
		}
		v.Reason = fmt.Sprintf("Docket denied this call (request %s, decided by %s%s); do not try it another way", id, v.DecidedBy, why)
	}
	return v
}

// HookOutcome records what the hook call out names came to once it ran, as the Agent c's
// hook reports it (PostToolUse): a call the authority never admitted is refused
// hook_unknown_call, and a call reported twice keeps its first outcome.
func (o *Operations) HookOutcome(ctx context.Context, c identity.Caller, out contract.HookOutcome) (int64, error) {
	if err := hookCaller(c); err != nil {
		return 0, err
	}
	ran := strings.HasPrefix(out.OutputDigest, "sha256:") && len(out.OutputDigest) == len("sha256:")+64
	withdrawn := out.Withdrawn != "" && !out.OK && out.OutputDigest == "" && out.OutputBytes == 0 && out.ExitCode == nil &&
		len(out.Withdrawn) <= maxHookFinding && utf8.ValidString(out.Withdrawn)
	if out.CallID == "" || len(out.CallID) > maxHookName || len(out.Tool) > maxHookName || out.OutputBytes < 0 || ran == (out.Withdrawn != "") || out.Withdrawn != "" && !withdrawn {
		return 0, contract.Errorf(contract.CodeInvalidArgument, `send {"callId", "tool", "ok", "outputDigest": "sha256:<64 hex>", "outputBytes"} for a call the hook reported before it ran, or {"callId", "tool", "withdrawn": "why"} for one it did not run`)
	}
	project := c.Projects[0]
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	// Decided on the ledger caught up inside the write's transaction, under the head
	// lock: a second report of the call, on any instance, finds the first there.
	var ordinal int64
	err := l.updateLocked(ctx, func(tx store.Tx) error {
		op := l.hookCallLocked(c.ID, out.CallID)
		if op == nil {
			return contract.Errorf(contract.CodeHookUnknownCall,
				"no call %.60q of this agent was reported before it ran; the PreToolUse hook must run for every tool the PostToolUse hook reports (docket hook install writes both)", out.CallID)
		}
		ordinal = op.ordinal
		if op.outcome != nil {
			return nil
		}
		now := o.nowUTC()
		if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.HookReportedData{Agent: c.ID, Ordinal: op.ordinal, Outcome: out}); err != nil {
			return err
		}
		if out.Withdrawn == "" || op.state != contract.OpDone {
			return nil
		}
		// Allowed, and then not run because its path moved: the Operation says refused,
		// not done, so the log never shows as done a call that did not run.
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.OpChangedData{Agent: c.ID, Ordinal: op.ordinal,
			State: contract.OpRefused, Decision: op.decision, ErrorCode: contract.CodeCallChanged, Reason: "the hook did not run the allowed call: " + out.Withdrawn})
	})
	if err != nil {
		return 0, eventlog.RefuseWrite(err, fmt.Sprintf("record the outcome of call %.60q of %s", out.CallID, c.ID), "operation")
	}
	return ordinal, nil
}

// hookCallLocked returns the agent's latest hook Operation for the coding agent's call
// id, or nil. The project's ledger must be locked.
func (l *ledgerState) hookCallLocked(agent, callID string) *operation {
	ops := l.ops[agent]
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].tool != hookTool {
			continue
		}
		var rec hookRecord
		if json.Unmarshal(ops[i].input, &rec) == nil && rec.CallID == callID {
			return ops[i]
		}
	}
	return nil
}

// HookCalls lists the hook Operations of agent in project, oldest first, for a member:
// each call's tool, what it lands on, its mode, its decision and decider, its outcome.
func (o *Operations) HookCalls(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID) ([]contract.HookCallEntry, error) {
	l, unlock, err := o.memberRead(ctx, c, project)
	if err != nil {
		return nil, err
	}
	defer unlock()
	now := o.nowUTC()
	out := []contract.HookCallEntry{}
	for _, op := range l.ops[string(agent)] {
		if op.tool != hookTool {
			continue
		}
		var rec hookRecord
		if err := json.Unmarshal(op.input, &rec); err != nil {
			return nil, fmt.Errorf("read hook call %d of %s: %w", op.ordinal, agent, err)
		}
		e := contract.HookCallEntry{Ordinal: op.ordinal, At: op.at, Tool: rec.Tool, Path: rec.Path, Command: rec.Command,
			Mode: rec.Mode, HookPolicy: rec.Policy, State: op.state, Digest: rec.Digest, Reason: op.reason, Outcome: op.outcome,
			ErrorCode: op.errorCode, PathNeedsMember: rec.NeedsMember, Protected: rec.Protected}
		switch rec.Mode {
		case contract.HookFree, contract.HookRefuse:
			e.Decision = map[string]string{contract.HookFree: "free", contract.HookRefuse: "refused"}[rec.Mode]
		default:
			e.Decision = "pending"
			if r := l.hookRequestLocked(string(agent), op.ordinal); r != nil {
				e.Request, e.DecidedBy = r.ID, r.DecidedBy
				switch st := r.State; {
				case st == contract.RequestPending && l.expiryLocked(r, now) != "":
					e.Decision = "expired"
				case st != contract.RequestPending:
					e.Decision = string(st)
				}
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// hookRequestLocked returns the Request of the agent's Operation ordinal, or nil.
func (l *ledgerState) hookRequestLocked(agent string, ordinal int64) *contract.Request {
	p := contract.NewPrincipal(contract.PrincipalAgent, agent)
	i := slices.IndexFunc(l.order, func(id contract.RequestID) bool {
		r := l.requests[id]
		return r.RequestedBy == p && r.Ordinal == ordinal
	})
	if i < 0 {
		return nil
	}
	return l.requests[l.order[i]]
}
