package operation

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
)

// DecideAs records decision d by the principal by (an Agent, too), as Decide does for a
// member; with checkSelf false it skips the domain's self-decision check, so a test can
// show the store's constraint alone refuses a principal deciding its own request.
func (o *Operations) DecideAs(ctx context.Context, by contract.Principal, project contract.ProjectID, id contract.RequestID, d contract.Decision, checkSelf bool) (contract.Request, error) {
	if checkSelf {
		if err := o.refuseSelf(ctx, by, project, id); err != nil {
			return contract.Request{}, err
		}
	}
	return o.decide(ctx, by, project, id, d)
}
