package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
)

// An orchestrator decides through the six tools: the requests a class of the
// delegation policy in force lets it decide are listed in its View, and ApplyAction of the
// built-in Action contract.ActionDecide decides one, naming the request and the digest
// it read. It never decides its own request. A decision is not an Operation of the
// orchestrator: it answers at once, with the request's new state or the refusal.

// maxDecidable bounds the requests an orchestrator's View lists.
const maxDecidable = 20

// authorizer checks that a decider may decide req under the delegation policy in force
// (version, d), under the decision's locks, and returns the class the decision rests on.
type authorizer func(req *contract.Request, version int64, d policydoc.Document) (*contract.DelegatedBy, error)

// decideParams are the params of ActionDecide, each a string.
var decideParams = []string{"request", "digest", "verdict", "reason"}

// decideShape teaches the params of ActionDecide.
const decideShape = `apply docket.decide with params {"request": "req_…", "digest": "sha256:…", "verdict": "approve"|"deny", "reason": "…"}, copying request and digest from view.decisions`

// decideCall answers an orchestrator's ApplyAction of ActionDecide: the request's new
// state, or the refusal with requestExecuted false, with the strip and the View.
func (o *Operations) decideCall(ctx context.Context, c identity.Caller, call Call, in *contract.ApplyActionInput) (Answer, error) {
	if err := o.acknowledge(ctx, c, call.Delivered); err != nil {
		return Answer{}, err
	}
	req, err := o.orchestratorDecide(ctx, c, in)
	if ce, ok := errors.AsType[*contract.Error](err); ok {
		return o.answer(ctx, c, call.Focus, refusal(ce), 0, nil, nil)
	}
	if err != nil {
		return Answer{}, err
	}
	extra, err := json.Marshal(map[string]any{"request": req.ID, "state": req.State, "policyVersion": req.Policy})
	if err != nil {
		return Answer{}, fmt.Errorf("encode decision: %w", err)
	}
	return o.answer(ctx, c, call.Focus, contract.ToolResult{}, 0, extra, nil)
}

// orchestratorDecide records orchestrator c's decision that in names.
func (o *Operations) orchestratorDecide(ctx context.Context, c identity.Caller, in *contract.ApplyActionInput) (contract.Request, error) {
	if c.AgentKind != contract.AgentKindOrchestrator {
		return contract.Request{}, contract.Errorf(contract.CodeForbidden,
			"only an orchestrator Agent decides requests, and only those the delegation policy lets it; a member decides the rest")
	}
	if in.CaseID != "" {
		return contract.Request{}, contract.Errorf(contract.CodeInvalidArgument, "docket.decide takes no caseId; %s", decideShape)
	}
	p := map[string]string{}
	for name, v := range in.Params {
		if !slices.Contains(decideParams, name) || v.Kind() != contract.ValueString {
			return contract.Request{}, contract.Errorf(contract.CodeInvalidArgument, "docket.decide has no string param %.40q; %s", name, decideShape)
		}
		p[name] = v.Str()
	}
	d := contract.Decision{Digest: p["digest"], Verdict: contract.Verdict(p["verdict"]), Reason: p["reason"]}
	if p["request"] == "" || d.Digest == "" || d.Verdict != contract.VerdictApprove && d.Verdict != contract.VerdictDeny {
		return contract.Request{}, contract.Errorf(contract.CodeInvalidArgument, "docket.decide needs request, digest and verdict; %s", decideShape)
	}
	by := c.Principal()
	return o.decide(ctx, by, c.Projects[0], contract.RequestID(p["request"]), d, checks{digest: true}, delegated(by))
}

// delegated authorizes by — an orchestrator, or a member's delegate — to decide a request
// only when a class of the delegation policy in force covers it, never a recovery or
// member-only request, never its own.
func delegated(by contract.Principal) authorizer {
	return func(req *contract.Request, version int64, pol policydoc.Document) (*contract.DelegatedBy, error) {
		if req.Recovery {
			return nil, contract.Errorf(contract.CodeForbidden, "%s is a recovery request, which only a member decides", req.ID)
		}
		if req.MemberOnly != "" {
			return nil, contract.Errorf(contract.CodeForbidden, "only a member decides %s: %s", req.ID, req.MemberOnly)
		}
		if req.RequestedBy == by {
			return nil, contract.Errorf(contract.CodeSelfDecision, "no principal decides its own request; a member decides %s", req.ID)
		}
		class, ok := pol.Delegation.Covering(req.Vector)
		if !ok {
			return nil, contract.Errorf(contract.CodeNotDelegated,
				"no class of the delegation policy in force (version %d) covers request %s; a member decides it", version, req.ID)
		}
		return &contract.DelegatedBy{Class: class.Name, Path: class.Path}, nil
	}
}

// decidable lists the pending requests of s that orchestrator c may decide at now under
// the delegation policy in force, oldest first, bounded.
func (s *ledgerSnap) decidable(c identity.Caller, now time.Time, version int64, pol policydoc.Document) *contract.Bounded[contract.DecidableRequest] {
	out := &contract.Bounded[contract.DecidableRequest]{Items: []contract.DecidableRequest{}}
	for e := range s.requests.all() {
		r := e.r
		if r.State != contract.RequestPending || r.Recovery || r.MemberOnly != "" || expiryOf(r, e.ended, now) != "" || r.RequestedBy == c.Principal() {
			continue
		}
		class, ok := pol.Delegation.Covering(r.Vector)
		if !ok {
			continue
		}
		if len(out.Items) == maxDecidable {
			out.Truncated = true
			break
		}
		out.Items = append(out.Items, contract.DecidableRequest{ID: r.ID, RequestedBy: r.RequestedBy, Vector: r.Vector, TaskBy: r.TaskBy,
			Digest: r.Digest, Deadline: r.Deadline, Class: class.Name, Policy: version})
	}
	return out
}

// decideEntry is ActionDecide as an orchestrator's View lists it.
var decideEntry = contract.ActionEntry{Name: contract.ActionDecide, State: contract.ActionReady, Bound: []string{},
	Params: []contract.ParamEntry{
		{Name: "request", Type: "string", Description: "the id of a request in view.decisions"},
		{Name: "digest", Type: "string", Description: "its digest, as view.decisions shows it"},
		{Name: "verdict", Type: "string", Description: "approve or deny"},
		{Name: "reason", Type: "string", Optional: true, Description: "why; a denial's reason reaches the requester"},
	}}

// orchestratorView adds to an orchestrator's View the requests it may decide, as s holds
// them, and, while there are any, the Action that decides one.
// held is the project's ledger when the caller holds it ([Operations.inForce]).
func (o *Operations) orchestratorView(ctx context.Context, held *ledger, s *ledgerSnap, c identity.Caller, v *contract.View) error {
	if c.AgentKind != contract.AgentKindOrchestrator {
		return nil
	}
	version, pol, err := o.inForce(ctx, held, c.Projects[0], contract.PolicyDelegation)
	if err != nil {
		return err
	}
	v.Decisions = s.decidable(c, o.nowUTC(), version, pol)
	if len(v.Decisions.Items) > 0 {
		v.Actions.Items = append(v.Actions.Items, decideEntry)
	}
	return nil
}
