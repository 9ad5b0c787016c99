package policy

import (
	"context"

	"fmt"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"slices"

	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
)

// DelegationNames reports whether a class of the delegation policy in force in project
// names action, without parsing the policy again for a version it already read.
func (b *Book) DelegationNames(ctx context.Context, project contract.ProjectID, action string) (bool, error) {
	var v contract.PolicyVersion
	if err := b.read(ctx, project, func(s *state) { v = s.latest(contract.PolicyDelegation) }); err != nil {
		return false, err
	}
	return b.names(v, action)
}

// DelegationNamesAlong is [Book.DelegationNames] for a call holding the project's log
// through another part (h): a View built under the operation ledger's lock.
func (b *Book) DelegationNamesAlong(h eventlog.Holding, action string) (bool, error) {
	return b.names(b.along(h).latest(contract.PolicyDelegation), action)
}

// names reports whether a class of v, a delegation policy's version, names action.
func (b *Book) names(v contract.PolicyVersion, action string) (bool, error) {
	if v.Builtin {
		return false, nil // version 1 delegates nothing
	}
	key := v.Digest + " " + action
	if has, ok := b.named.Load(key); ok {
		return has.(bool), nil
	}
	d, err := policydoc.Parse(v.File, []byte(v.Text))
	if err != nil {
		return false, fmt.Errorf("delegation policy version %d in the log does not parse: %w", v.Version, err)
	}
	has := d.Delegation != nil && slices.ContainsFunc(d.Delegation.Classes, func(c policydoc.Class) bool { return c.Action == action })
	b.named.Store(key, has)
	return has, nil
}
