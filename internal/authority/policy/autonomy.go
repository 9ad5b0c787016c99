package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
	"github.com/docketrun/docket/internal/store"
)

// An Agent's autonomy is read from the log like the policies: a new Agent
// starts at the default level of the autonomy policy in force when it was created; a
// member sets its level (raising it to unattended, under a policy that requires it, only
// with the stated risk acknowledged) and opens its run windows. Admit reads the level and
// the windows at each admission.

// MaxWindow is the longest run window a member opens at once.
const MaxWindow = 24 * time.Hour

// agentAutonomy is one Agent's level and windows.
type agentAutonomy struct {
	level   string
	windows []contract.RunWindow
	ack     string // the digest of the stated risk a member last acknowledged for it, or ""
}

// applyAutonomy applies the events that move an Agent's autonomy.
func (s *state) applyAutonomy(e store.Event) error {
	switch e.Type {
	case event.AgentCreated:
		var a event.AgentCreatedData
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		s.agents[a.ID] = &agentAutonomy{level: s.defaultLevel()}
	case event.LevelSet:
		var l event.LevelSetData
		if err := json.Unmarshal(e.Data, &l); err != nil {
			return err
		}
		s.agent(l.Agent).level = l.Level
	case event.RiskAcknowledged:
		var a event.RiskAcknowledgedData
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		s.agent(a.Agent).ack = a.Digest
	case event.RunWindowOpened:
		var w event.RunWindowOpenedData
		if err := json.Unmarshal(e.Data, &w); err != nil {
			return err
		}
		a := s.agent(w.Agent)
		a.windows = append(a.windows, w.RunWindow)
	}
	return nil
}

// agent returns the autonomy of id for Apply to change, added unattended when the log
// has no creation of it (an Agent created before autonomy was kept in the log).
func (s *state) agent(id contract.AgentID) *agentAutonomy {
	a := s.agents[id]
	if a == nil {
		a = &agentAutonomy{level: policydoc.LevelUnattended}
		s.agents[id] = a
	}
	return a
}

// lookup returns the autonomy of id as [state.agent] would, without adding it: a read
// leaves the state as the log made it.
func (s *state) lookup(id contract.AgentID) agentAutonomy {
	if a := s.agents[id]; a != nil {
		return *a
	}
	return agentAutonomy{level: policydoc.LevelUnattended}
}

// autonomy returns the autonomy policy in force.
func (s *state) autonomy() policydoc.Autonomy {
	if len(s.versions[contract.PolicyAutonomy]) > 0 {
		return s.autonomyDoc
	}
	return *policydoc.Builtin(contract.PolicyAutonomy).Autonomy
}

// defaultLevel is the default level of the autonomy policy as far as the state applied
// the log.
func (s *state) defaultLevel() string { return s.autonomy().DefaultLevel }

// autonomyAt returns agent's autonomy at now: its level and the windows not yet over.
func (s *state) autonomyAt(agent contract.AgentID, now time.Time) contract.Autonomy {
	a := s.lookup(agent)
	out := contract.Autonomy{Agent: agent, Level: a.level, Windows: []contract.RunWindow{}, Policy: s.latest(contract.PolicyAutonomy).Version}
	pol := s.autonomy()
	if pol.RequireAcknowledgement {
		out.Acknowledgement = pol.Acknowledgement
	}
	if staleAck(a, pol) {
		out.Level = policydoc.LevelAttended
		out.Because = fmt.Sprintf("the stated risk of the autonomy policy (version %d) changed since a member acknowledged it for this Agent; it is attended until a member acknowledges the new text", out.Policy)
	}
	for _, w := range a.windows {
		if now.Before(w.Until) {
			out.Windows = append(out.Windows, w)
		}
	}
	return out
}

// staleAck reports whether a, set unattended with a stated risk acknowledged, holds an
// acknowledgement of another text than the one pol requires now: a member acknowledged a
// risk that is no longer the one stated, so the Agent is attended again until a member
// acknowledges the new text (docs/policies.md).
func staleAck(a agentAutonomy, pol policydoc.Autonomy) bool {
	return a.level == policydoc.LevelUnattended && pol.RequireAcknowledgement && a.ack != "" &&
		a.ack != contract.Sum([]byte(pol.Acknowledgement)).String()
}

// Autonomy returns agent's level and open run windows, for a member.
func (b *Book) Autonomy(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID) (contract.Autonomy, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Autonomy{}, err
	}
	var out contract.Autonomy
	err := b.read(ctx, project, func(s *state) { out = s.autonomyAt(agent, b.nowUTC()) })
	return out, err
}

// SetLevel sets agent's level, for a member. Raising it to unattended under an autonomy
// policy that requires an acknowledgement takes req.Acknowledgement equal to the policy's
// text, and records that the member read it (agent.risk_acknowledged) before the level.
func (b *Book) SetLevel(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, req contract.SetLevelRequest) (contract.Autonomy, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Autonomy{}, err
	}
	switch req.Level {
	case policydoc.LevelManual, policydoc.LevelAttended, policydoc.LevelUnattended:
	default:
		return contract.Autonomy{}, contract.Errorf(contract.CodeInvalidArgument, "%.40q is not a level; use manual, attended or unattended.", req.Level)
	}
	return b.act(ctx, project, agent, func(tx store.Tx, s *state, now time.Time) error {
		cur := s.latest(contract.PolicyAutonomy)
		pol := s.autonomy()
		a := s.lookup(agent)
		if req.Level == policydoc.LevelUnattended && pol.RequireAcknowledgement && (a.level != policydoc.LevelUnattended || staleAck(a, pol)) {
			if strings.TrimSpace(req.Acknowledgement) != strings.TrimSpace(pol.Acknowledgement) {
				return contract.Errorf(contract.CodeAcknowledgementMissing,
					"autonomy policy version %d requires a member to acknowledge this risk before an Agent is raised to unattended: %q; send it as the acknowledgement (docket agent level %s unattended --acknowledge TEXT).",
					cur.Version, pol.Acknowledgement, agent)
			}
			ack := event.RiskAcknowledgedData{Agent: agent, Text: pol.Acknowledgement, Digest: contract.Sum([]byte(pol.Acknowledgement)).String(), Policy: cur.Version}
			if err := eventlog.Append(ctx, tx, project, c.Principal(), now, ack); err != nil {
				return err
			}
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.LevelSetData{Agent: agent, Level: req.Level, Policy: cur.Version})
	})
}

// OpenWindow opens a run window of agent for a member: from now, for req.Minutes.
func (b *Book) OpenWindow(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, req contract.OpenWindowRequest) (contract.Autonomy, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Autonomy{}, err
	}
	d := time.Duration(req.Minutes) * time.Minute
	if req.Minutes < 1 || d > MaxWindow {
		return contract.Autonomy{}, contract.Errorf(contract.CodeInvalidArgument, "a run window lasts 1 to %d minutes; send minutes in that range.", int64(MaxWindow/time.Minute))
	}
	return b.act(ctx, project, agent, func(tx store.Tx, _ *state, now time.Time) error {
		w := event.RunWindowOpenedData{Agent: agent, RunWindow: contract.RunWindow{From: now, Until: now.Add(d), OpenedBy: c.Principal()}}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, w)
	})
}

// act runs a member's act on agent's autonomy in the write sequence of project's log
// ([eventlog.Held.Update]), and returns the Agent's autonomy after it, under the same
// lock.
func (b *Book) act(ctx context.Context, project contract.ProjectID, agent contract.AgentID, decide func(tx store.Tx, s *state, now time.Time) error) (contract.Autonomy, error) {
	h := b.log.Lock(project)
	defer h.Unlock()
	now := b.nowUTC()
	if err := h.Update(ctx, func(tx store.Tx, s *state) error { return decide(tx, s, now) }); err != nil {
		return contract.Autonomy{}, eventlog.RefuseWrite(err, "change autonomy of "+string(agent), "agent "+string(agent))
	}
	return h.State().autonomyAt(agent, now), nil
}

// Admit refuses a write of agent at now that its autonomy does not admit: below
// unattended one past the policy's writes per day (daily_bound), counted by today, the
// writes admitted this UTC day; a manual Agent's (autonomy_manual: the caller turns the
// write into a request for a member's decision); an attended Agent's outside
// an open run window (outside_run_window). nil admits it.
func (b *Book) Admit(ctx context.Context, project contract.ProjectID, agent contract.AgentID, now time.Time, today int64) (*contract.Error, error) {
	var ce *contract.Error
	err := b.read(ctx, project, func(s *state) { ce = s.admit(agent, now, today) })
	return ce, err
}

// AdmitAlong is [Book.Admit] for a call holding the project's log through another part
// (h): an admission, which holds the operation ledger.
func (b *Book) AdmitAlong(h eventlog.Holding, agent contract.AgentID, now time.Time, today int64) *contract.Error {
	return b.along(h).admit(agent, now, today)
}

// admit is [Book.Admit] on s.
func (s *state) admit(agent contract.AgentID, now time.Time, today int64) *contract.Error {
	a, pol := s.autonomyAt(agent, now), s.autonomy()
	refuse := func(code contract.Code, format string, args ...any) *contract.Error {
		return &contract.Error{Code: code, Teaching: fmt.Sprintf(format, args...) + fmt.Sprintf(" (autonomy policy version %d)", a.Policy)}
	}
	switch {
	case a.Level == policydoc.LevelUnattended:
		return nil
	case pol.MaxOperationsPerDay > 0 && today >= pol.MaxOperationsPerDay:
		return refuse(contract.CodeDailyBound, "this Agent made its %d writes for today (UTC); the count starts again at midnight UTC", pol.MaxOperationsPerDay)
	case a.Level == policydoc.LevelManual:
		return refuse(contract.CodeAutonomyManual, "this Agent is at level manual: every write waits for a member's decision")
	case len(a.Windows) == 0 || now.Before(a.Windows[0].From):
		return refuse(contract.CodeOutsideRunWindow, "this Agent is attended and no run window is open now; a member opens one (docket agent window), then send the call again")
	}
	return nil
}

func (b *Book) nowUTC() time.Time { return b.now().UTC().Round(0) }
