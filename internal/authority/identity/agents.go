package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// CreateAgent creates an Agent in project and returns its token, which is shown this once:
// the store keeps only its digest.
func (a *Directory) CreateAgent(ctx context.Context, c Caller, project contract.ProjectID, req contract.CreateAgentRequest) (contract.AgentToken, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.AgentToken{}, err
	}
	name, err := contract.ParseName(req.Name)
	if err != nil {
		return contract.AgentToken{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	kind, err := contract.ParseAgentKind(req.Kind)
	if err != nil {
		return contract.AgentToken{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	prefix := contract.PrefixAgent
	if req.Hook {
		if kind != contract.AgentKindAgent {
			return contract.AgentToken{}, contract.Errorf(contract.CodeInvalidArgument, "a coding agent's hook records calls and decides none: its Agent is of kind agent, not %s.", kind)
		}
		prefix = contract.PrefixHook
	}
	id, err := NewID(a.rand, "agt_")
	if err != nil {
		return contract.AgentToken{}, fmt.Errorf("create agent: %w", err)
	}
	tok, err := a.newToken(prefix)
	if err != nil {
		return contract.AgentToken{}, fmt.Errorf("create agent: %w", err)
	}
	now := a.nowUTC()
	ag := contract.Agent{ID: contract.AgentID(id), Project: project, Name: name, Kind: kind, CreatedAt: now}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if _, err := FindAgent(ctx, tx, project, name); err == nil {
			return contract.Errorf(contract.CodeAlreadyExists, "project %q already has an agent named %q; choose another name or use docket agent token to replace its token.", project, name)
		}
		err := tx.CreateAgent(ctx, store.Agent{ID: id, Project: string(project), Name: name, Kind: string(kind), TokenDigest: tok.digest(), CreatedAt: now})
		if err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.AgentCreatedData{Agent: ag})
	})
	if err != nil {
		return contract.AgentToken{}, fmt.Errorf("create agent %s: %w", name, eventlog.Refuse(err, "agent "+name))
	}
	a.log.InfoContext(ctx, "agent created", logProject, project, logActor, c.Principal(), logToken, tok)
	return contract.AgentToken{Agent: ag, Token: tok.String()}, nil
}

// RotateAgentToken gives an Agent a new token; the old one stops working at once.
func (a *Directory) RotateAgentToken(ctx context.Context, c Caller, project contract.ProjectID, agent string) (contract.AgentToken, error) {
	return a.rotateAgentToken(ctx, c, project, agent, contract.PrefixAgent)
}

// ReplaceHookToken gives an Agent of kind agent a new hook token (contract.PrefixHook),
// which reaches only the hook routes; its old token, of either kind, stops working at once.
func (a *Directory) ReplaceHookToken(ctx context.Context, c Caller, project contract.ProjectID, agent string) (contract.AgentToken, error) {
	return a.rotateAgentToken(ctx, c, project, agent, contract.PrefixHook)
}

func (a *Directory) rotateAgentToken(ctx context.Context, c Caller, project contract.ProjectID, agent, prefix string) (contract.AgentToken, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.AgentToken{}, err
	}
	tok, err := a.newToken(prefix)
	if err != nil {
		return contract.AgentToken{}, fmt.Errorf("rotate agent token: %w", err)
	}
	now := a.nowUTC()
	var ag store.Agent
	err = a.store.Update(ctx, func(tx store.Tx) error {
		ag, err = FindAgent(ctx, tx, project, agent)
		if err != nil {
			return err
		}
		if ag.RevokedAt != nil {
			return contract.Errorf(contract.CodeCredentialRevoked, "agent %q is revoked; create a new agent instead.", agent)
		}
		if prefix == contract.PrefixHook && ag.Kind != string(contract.AgentKindAgent) {
			return contract.Errorf(contract.CodeInvalidArgument, "agent %q is of kind %s; a coding agent's hook records calls and decides none, so give it an Agent of kind agent.", agent, ag.Kind)
		}
		if err := tx.SetAgentToken(ctx, ag.ID, tok.digest()); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.AgentTokenReplacedData{ID: ag.ID})
	})
	if err != nil {
		return contract.AgentToken{}, fmt.Errorf("rotate token of agent %s: %w", agent, eventlog.Refuse(err, "agent "+agent))
	}
	a.revoked()
	a.log.InfoContext(ctx, "agent token replaced", logProject, project, logActor, c.Principal(), logToken, tok)
	return contract.AgentToken{Agent: agentWire(ag), Token: tok.String()}, nil
}

// RevokeAgent revokes an Agent; its token stops working at once.
func (a *Directory) RevokeAgent(ctx context.Context, c Caller, project contract.ProjectID, agent string) (contract.Agent, error) {
	ag, err := revoke(ctx, a, c, project, agent, revocable[store.Agent]{
		noun: "agent", event: func(id string) event.Payload { return event.AgentRevokedData{ID: id} }, find: FindAgent,
		id: func(ag store.Agent) string { return ag.ID },
		revoke: func(ctx context.Context, tx store.Tx, id string, at time.Time) error {
			return tx.RevokeAgent(ctx, id, at)
		},
		get: func(ctx context.Context, r store.Reader, id string) (store.Agent, error) { return r.Agent(ctx, id) },
	})
	if err != nil {
		return contract.Agent{}, err
	}
	return agentWire(ag), nil
}

// Agents lists project's Agents, revoked ones included.
func (a *Directory) Agents(ctx context.Context, c Caller, project contract.ProjectID) ([]contract.Agent, error) {
	return listed(ctx, c, project, "agents", a.store.Agents, agentWire)
}

// FindAgent finds an Agent of project by id or by name.
func FindAgent(ctx context.Context, r store.Reader, project contract.ProjectID, ref string) (store.Agent, error) {
	return findByRef(ctx, project, ref, "agent", r.Agents, func(ag store.Agent) (string, string) { return ag.ID, ag.Name })
}

func agentWire(ag store.Agent) contract.Agent {
	return contract.Agent{ID: contract.AgentID(ag.ID), Project: contract.ProjectID(ag.Project), Name: ag.Name,
		Kind: contract.AgentKind(ag.Kind), CreatedAt: ag.CreatedAt, RevokedAt: ag.RevokedAt}
}
