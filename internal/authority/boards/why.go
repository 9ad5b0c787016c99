package boards

import (
	"context"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// Why returns the derivation tree of node id on project's Board; see [board.Board.Why].
func (a *Cache) Why(ctx context.Context, c identity.Caller, project contract.ProjectID, id string, lim board.WhyLimits) (contract.Why, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Why{}, err
	}
	var out contract.Why
	err := a.View(ctx, project, func(b *board.Board) error {
		var err error
		out, err = b.Why(id, lim)
		return err
	})
	return out, err
}

// Evidence returns the Case id of project with what it rests on; see
// [board.Board.Evidence].
func (a *Cache) Evidence(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, lim board.WhyLimits) (contract.Case, board.Evidence, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Case{}, board.Evidence{}, err
	}
	var cs contract.Case
	var ev board.Evidence
	err := a.View(ctx, project, func(b *board.Board) error {
		var ok bool
		if cs, ok = b.Case(id); !ok {
			return contract.Errorf(contract.CodeCaseNotFound, "project %q has no Case %q; list them with docket case list.", project, id)
		}
		var err error
		ev, err = b.Evidence(id, lim)
		return err
	})
	return cs, ev, err
}
