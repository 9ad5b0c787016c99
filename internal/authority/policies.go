package authority

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
)

// PublishPolicy publishes a member's policy document as the next version of its kind in
// project; see [policy.Book.Publish].
func (a *Authority) PublishPolicy(ctx context.Context, c Caller, project contract.ProjectID, req contract.PublishPolicyRequest) (contract.PolicyVersion, error) {
	return a.policies.Publish(ctx, c, project, req)
}

// Policies lists every version of every policy kind of project, without their text.
func (a *Authority) Policies(ctx context.Context, c Caller, project contract.ProjectID) ([]contract.PolicyVersion, error) {
	return a.policies.List(ctx, c, project)
}

// Policy returns version n of kind in project with its text; n == 0 is the one in force.
func (a *Authority) Policy(ctx context.Context, c Caller, project contract.ProjectID, kind contract.PolicyKind, n int64) (contract.PolicyVersion, error) {
	return a.policies.Show(ctx, c, project, kind, n)
}

// PolicyDiff returns the line difference between two versions of kind in project.
func (a *Authority) PolicyDiff(ctx context.Context, c Caller, project contract.ProjectID, kind contract.PolicyKind, from, to int64) (contract.PolicyDiff, error) {
	return a.policies.Diff(ctx, c, project, kind, from, to)
}
