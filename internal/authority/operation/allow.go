package operation

import (
	"context"
	"encoding/json"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// An Agent's profile may name the Case Types and Actions it may use (docs/agents.md,
// "What a profile allows"). The authority holds it, not the runtime: the ledger follows
// each agent.profile_set, the View lists what the allow-list refuses blocked with
// not_in_profile, and admission refuses it, both through [contract.AllowList.Refusal].

// applyProfileLocked keeps the allow-list of a profile_set event's Agent. The project's
// ledger must be locked.
func (l *ledgerState) applyProfileLocked(e store.Event) error {
	var d event.ProfileSetData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return err
	}
	l.allowTouched = true
	if d.Allow.Empty() {
		delete(l.allow, string(d.Agent))
		return nil
	}
	l.allow[string(d.Agent)] = d.Allow
	return nil
}

// agentSetupLocked is setupLocked with agent's allow-list. The project's ledger must be
// locked.
func (l *ledgerState) agentSetupLocked(agent string) board.Setup {
	s := l.setupLocked()
	s.Allow = l.allow[agent]
	return s
}

// profileRefusal refuses a write its caller's allow-list does not allow: opening a Case
// of a Case Type it does not name, applying an Action it does not name, or writing to,
// acting in or closing a Case of a Case Type it does not name. It is checked at
// admission, on the Board the call would run on, before the call becomes an Operation.
func profileRefusal(b *board.Board, allow *contract.AllowList, input any) *contract.Error {
	if allow.Empty() {
		return nil
	}
	caseType := func(id contract.CaseID) string {
		if cs, ok := b.Case(id); ok && id != "" {
			return cs.CaseType
		}
		return "" // no Case, or one the Board refuses itself
	}
	why := ""
	switch in := input.(type) {
	case *contract.OpenCaseInput:
		why = allow.Refusal("", in.CaseType)
	case *contract.ApplyActionInput:
		why = allow.Refusal(in.Action, caseType(in.CaseID))
	case *contract.CloseCaseInput:
		why = allow.Refusal("", caseType(in.CaseID))
	case *contract.Batch:
		for _, op := range in.Operations {
			if why = allow.Refusal("", caseType(op.CaseID)); why != "" {
				break
			}
		}
	}
	if why == "" {
		return nil
	}
	return contract.Errorf(contract.CodeNotInProfile, "%s. The call was not run", why)
}

// builtinRefusal refuses c's call of a built-in Action the authority answers at once
// (docket.decide, docket.retry) when c's allow-list does not name it.
func (o *Operations) builtinRefusal(ctx context.Context, c identity.Caller, action string) (*contract.Error, error) {
	project := c.Projects[0]
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return nil, err
	}
	if why := l.allow[c.ID].Refusal(action, ""); why != "" {
		return contract.Errorf(contract.CodeNotInProfile, "%s. The call was not run", why), nil
	}
	return nil, nil
}

// blockBuiltins lists blocked the built-in Actions the authority added to a View (the
// Board lists its own) that allow refuses.
func blockBuiltins(v *contract.View, allow *contract.AllowList) {
	for i, a := range v.Actions.Items {
		if why := allow.Refusal(a.Name, ""); a.State == contract.ActionReady && why != "" {
			v.Actions.Items[i].State, v.Actions.Items[i].Reason, v.Actions.Items[i].Detail, v.Actions.Items[i].Waits = contract.ActionBlocked, contract.BlockNotInProfile, why, nil
		}
	}
}
