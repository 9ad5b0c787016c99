package tables

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/store"
)

// verifyPage is how many events Verify reads at a time.
const verifyPage = 1000

// Verify implements [store.Store.Verify] over r, which should read one snapshot (a
// read-only transaction) so that appends made meanwhile do not look like a broken head.
func Verify(ctx context.Context, r Reader, project string) (store.Head, error) {
	chain := store.NewChain(project)
	for {
		evs, err := r.Events(ctx, project, chain.Head().Seq, verifyPage)
		if err != nil {
			return store.Head{}, fmt.Errorf("verify %s: %w", project, err)
		}
		for _, e := range evs {
			if err := chain.Next(e); err != nil {
				return chain.Head(), err
			}
		}
		if len(evs) < verifyPage {
			break
		}
	}
	stored, err := r.Head(ctx, project)
	if err != nil {
		return store.Head{}, fmt.Errorf("verify %s: %w", project, err)
	}
	if err := chain.End(stored); err != nil {
		return chain.Head(), err
	}
	return chain.Head(), nil
}
