package operation

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
)

// inForce returns the version of kind in force in project and its document; without a
// Book, the built-in version 1.
func (o *Operations) inForce(ctx context.Context, project contract.ProjectID, kind contract.PolicyKind) (int64, policydoc.Document, error) {
	if o.policies == nil {
		return 1, policydoc.Builtin(kind), nil
	}
	v, d, err := o.policies.InForce(ctx, project, kind)
	return v.Version, d, err
}
