package operation

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
)

// DecideAs records decision d by the principal by (an Agent, a Tool, anyone), as Decide
// does for a member but without asking who by is; with check false it also skips the
// domain's self-decision and digest checks, so a test can show the store's checks alone
// refuse a decision.
func (o *Operations) DecideAs(ctx context.Context, by contract.Principal, project contract.ProjectID, id contract.RequestID, d contract.Decision, check bool) (contract.Request, error) {
	return o.decide(ctx, by, project, id, d, checks{self: check, digest: check}, nil)
}
