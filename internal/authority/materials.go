package authority

import (
	"context"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/materials"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// materialAgent resolves an Agent by name or id for a member, or for the Agent itself.
func (a *Authority) materialAgent(ctx context.Context, c identity.Caller, project contract.ProjectID, ref string) (contract.AgentID, error) {
	if c.Kind == contract.PrincipalAgent && (ref == c.ID || ref == c.Name) {
		return contract.AgentID(c.ID), nil
	}
	if err := c.RequireMember(project); err != nil {
		return "", err
	}
	ag, err := identity.FindAgent(ctx, a.store, project, ref)
	if err != nil {
		return "", eventlog.Refuse(err, "agent "+ref)
	}
	return contract.AgentID(ag.ID), nil
}

// Materials lists an Agent's materials (every Agent's when agent is ""); see
// [materials.Keeper.List].
func (a *Authority) Materials(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Material, error) {
	var id contract.AgentID
	if agent != "" {
		var err error
		if id, err = a.materialAgent(ctx, c, project, agent); err != nil {
			return nil, err
		}
	}
	return a.materials.List(ctx, c, project, id)
}

// Material returns one of an Agent's materials, for a member or the Agent itself.
func (a *Authority) Material(ctx context.Context, c identity.Caller, project contract.ProjectID, agent, sha256 string) (contract.Material, error) {
	id, err := a.materialAgent(ctx, c, project, agent)
	if err != nil {
		return contract.Material{}, err
	}
	return a.materials.Get(ctx, c, project, id, sha256)
}

// AddMaterial records the fact of a file added for an Agent; the bytes stay on the
// machine that added them (docs/materials.md).
func (a *Authority) AddMaterial(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, in contract.MaterialAdd) (contract.Material, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.Material{}, err
	}
	if err := c.RequireInPerson(project); err != nil {
		return contract.Material{}, err
	}
	if err := materials.Validate(in); err != nil {
		return contract.Material{}, err
	}
	batch, err := materials.Fact(id, in)
	if err != nil {
		return contract.Material{}, err
	}
	// The event and the Board fact the Agent sees in its View land in one transaction
	// (docs/materials.md): the member asserts the fact, so it is tier asserted, as the
	// digest is.
	// The Board write takes the project's lock, and the materials' State, a part of the
	// same project log, is read through the hold it gives (docs/architecture.md, "The
	// lock order").
	now := a.now().UTC().Round(0)
	var added contract.Material
	err = a.boards.Write(ctx, project, "add a material for Agent "+agent, func(w *boards.Write) error {
		br, err := w.Board().ApplyBatch(board.Author{Principal: c.Principal()}, batch)
		if err != nil {
			return err
		}
		var ch *boards.Change
		if len(br.Changes) > 0 { // the same file added again by the same member: its fact is there
			ch = &boards.Change{Nodes: br.Changes, Event: event.BatchAppliedData{NodeIDs: br.NodeIDs, Changes: br.Changes}}
		}
		added, err = a.materials.Add(ctx, w.Held(), c, project, id, in, now, func(addIn func(tx store.Tx) error) error {
			return w.Commit(ctx, ch, c.Principal(), now, "agent "+agent, addIn, nil)
		})
		return err
	})
	if err != nil {
		return contract.Material{}, err
	}
	return added, nil
}

// SetMaterialDisclosure sets whether a material's content may go to the Agent's model
// provider.
func (a *Authority) SetMaterialDisclosure(ctx context.Context, c identity.Caller, project contract.ProjectID, agent, sha256 string, allowed bool) (contract.Material, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.Material{}, err
	}
	return a.materials.SetDisclosure(ctx, c, project, id, sha256, allowed)
}
