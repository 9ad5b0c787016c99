package tables

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/store"
)

// RecordDecision implements [store.Tx]. The decisions table's CHECK and key
// enforce its rules.
func (t *Tx) RecordDecision(ctx context.Context, d store.Decision) error {
	if err := required("decision", "a project", d.Project, "a request", d.Request, "a digest", d.Digest,
		"a requester", d.RequestedBy, "a decider", d.DecidedBy, "a verdict", d.Verdict); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO decisions (project, request, digest, requested_by, decided_by, verdict, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		d.Project, d.Request, d.Digest, d.RequestedBy, d.DecidedBy, d.Verdict, nanos(d.At)); err != nil {
		return fmt.Errorf("record decision on %s: %w", d.Request, err)
	}
	return nil
}
