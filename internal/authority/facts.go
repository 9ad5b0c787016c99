package authority

import (
	"context"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// MaxFactMatches bounds the facts one [Authority.Facts] returns: a person searching the
// Board reads a page of them, and narrows the pattern to see past it.
const MaxFactMatches = 200

// Facts returns the facts of project's Board, base and derived, that pattern matches, at
// most limit of them (0 or more than MaxFactMatches means MaxFactMatches), in the
// engine's order, each with its tier and who asserted it; "?x" arguments are variables.
// An empty predicate matches every fact; a pattern with a predicate leaves out the facts
// local to an exploration Case. Errors: forbidden for a caller who is not a member of
// project, invalid_argument for a pattern the Board cannot match.
func (a *Authority) Facts(ctx context.Context, c identity.Caller, project contract.ProjectID, pattern contract.Atom, limit int) (contract.Bounded[contract.Node], error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Bounded[contract.Node]{}, err
	}
	if limit <= 0 || limit > MaxFactMatches {
		limit = MaxFactMatches
	}
	var out contract.Bounded[contract.Node]
	err := a.boards.View(ctx, project, func(b *board.Board) error {
		if pattern.Predicate == "" {
			out = b.Facts(limit)
			return nil
		}
		var err error
		out, err = b.Query(pattern, "", limit)
		return err
	})
	return out, err
}
