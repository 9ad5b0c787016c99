package boards

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// HoldCase places a member's hold on Case id of project, which pauses it until every hold
// is released (docs/console.md#pausing-a-case). Only a member's session places one; a
// policy's hold is placed by the authority acting under that policy ([Cache.PolicyHold]).
func (a *Cache) HoldCase(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, reason string) (contract.Case, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Case{}, err
	}
	return a.hold(ctx, project, id, contract.CaseHold{Owner: contract.HoldMember, By: c.Principal(), Reason: reason})
}

// ResumeCase releases the member's holds on Case id of project: the hold holdID, or every
// member's hold when holdID is empty. A policy's hold is left for its policy; the Case
// runs again only when none is left. Only a member's session releases a member's hold.
func (a *Cache) ResumeCase(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, holdID string) (contract.Case, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Case{}, err
	}
	return a.release(ctx, project, id, holdID, contract.HoldMember, "", c.Principal())
}

// PolicyHold places a hold owned by policy (a policy kind, such as recovery) on Case id
// for subject, what the hold waits for, acting as by; [Cache.PolicyRelease] under the same
// policy is the only release of it. A policy holds a Case once per subject
// (already_exists).
func (a *Cache) PolicyHold(ctx context.Context, project contract.ProjectID, id contract.CaseID, policy, subject string, by contract.Principal, reason string) (contract.Case, error) {
	return a.hold(ctx, project, id, contract.CaseHold{Owner: contract.HoldPolicy, Policy: policy, Subject: subject, By: by, Reason: reason})
}

// PolicyRelease releases policy's hold holdID on Case id (every hold of policy when
// holdID is empty), acting as by.
func (a *Cache) PolicyRelease(ctx context.Context, project contract.ProjectID, id contract.CaseID, holdID, policy string, by contract.Principal) (contract.Case, error) {
	return a.release(ctx, project, id, holdID, contract.HoldPolicy, policy, by)
}

func (a *Cache) hold(ctx context.Context, project contract.ProjectID, id contract.CaseID, h contract.CaseHold) (contract.Case, error) {
	var out contract.Case
	err := a.Write(ctx, project, "hold Case "+string(id), func(w *Write) error {
		now := a.nowUTC()
		h.At = now
		cs, placed, err := w.Board().HoldCase(id, h)
		if err != nil {
			return err
		}
		ch := &Change{Cases: []contract.Case{cs}, Event: event.CaseHeldData{CaseID: id, Hold: placed}}
		if err := w.Commit(ctx, ch, h.By, now, "project "+string(project), nil, nil); err != nil {
			return err
		}
		out = cs
		return nil
	})
	if err != nil {
		return contract.Case{}, err
	}
	a.log.InfoContext(ctx, "case held", logProject, project, logActor, h.By, logCase, id)
	return out, nil
}

func (a *Cache) release(ctx context.Context, project contract.ProjectID, id contract.CaseID, holdID string, owner contract.HoldOwner, policy string, by contract.Principal) (contract.Case, error) {
	var out contract.Case
	err := a.Write(ctx, project, "release a hold of Case "+string(id), func(w *Write) error {
		b := w.Board()
		cur, ok := b.Case(id)
		if !ok {
			return contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the Case id", id)
		}
		ids := []string{holdID}
		if holdID == "" {
			ids = ids[:0]
			for _, h := range cur.Holds {
				if h.Owner == owner && h.Policy == policy {
					ids = append(ids, h.ID)
				}
			}
			if len(ids) == 0 {
				return contract.Errorf(contract.CodeHoldNotFound, "Case %s has no %s hold to release (%s)", id, ownerNoun(owner, policy), heldBy(cur))
			}
		}
		now := a.nowUTC()
		// Each hold released is its own event, with the Case record as it stands after
		// it, so that the log says who released which hold.
		for _, hid := range ids {
			cs, h, err := b.ReleaseHold(id, hid, owner, policy)
			if err != nil {
				return err
			}
			ch := &Change{Cases: []contract.Case{cs}, Event: event.CaseReleasedData{CaseID: id, Hold: h, By: by, Running: cs.Status == contract.CaseRunning}}
			if err := w.Commit(ctx, ch, by, now, "project "+string(project), nil, nil); err != nil {
				return err
			}
			out = cs
		}
		return nil
	})
	if err != nil {
		return contract.Case{}, err
	}
	a.log.InfoContext(ctx, "case released", logProject, project, logActor, by, logCase, id)
	return out, nil
}

func ownerNoun(owner contract.HoldOwner, policy string) string {
	if owner == contract.HoldPolicy {
		return "the " + policy + " policy's"
	}
	return "member's"
}

// heldBy says what holds Case c, for a refusal that found nothing to release.
func heldBy(c contract.Case) string {
	if len(c.Holds) == 0 {
		return "it is " + string(c.Status) + " with no hold"
	}
	s := ""
	for i, h := range c.Holds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s is the %s hold", h.ID, ownerNoun(h.Owner, h.Policy))
	}
	return s
}
