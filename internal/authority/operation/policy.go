package operation

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
)

// inForce returns the version of kind in force in project and its document; without a
// Book, the built-in version 1. held is project's ledger when the caller holds it: the
// policies are then read through it, at the ledger's cursor, since the Book's state is
// under the same lock ([eventlog.Along], docs/architecture.md "The lock order"); nil
// when the caller holds nothing, and the Book reads at the head ctx carries.
func (o *Operations) inForce(ctx context.Context, held *ledger, project contract.ProjectID, kind contract.PolicyKind) (int64, policydoc.Document, error) {
	if o.policies == nil {
		return 1, policydoc.Builtin(kind), nil
	}
	if held != nil {
		v, d, err := o.policies.InForceAlong(held.held, kind)
		return v.Version, d, err
	}
	v, d, err := o.policies.InForce(ctx, project, kind)
	return v.Version, d, err
}

// retention is how long an artifact kept now in project can be read: the retention_days
// of the [artifact_policy] in force, else the server's [Config.ArtifactRetention]
// (docs/mcp.md, "Artifacts"). It is read when the artifact is kept, and its expiry is
// recorded then, so a later policy does not change it.
// held is project's ledger when the caller holds it ([Operations.inForce]).
func (o *Operations) retention(ctx context.Context, held *ledger, project contract.ProjectID) (time.Duration, error) {
	_, d, err := o.inForce(ctx, held, project, contract.PolicyArtifact)
	if err != nil {
		return 0, fmt.Errorf("read the artifact policy of %s: %w", project, err)
	}
	return d.Artifact.Retention(o.artifactRetention), nil
}

// autonomyRefusal returns the refusal of the agent's write call at now that its autonomy
// level, run windows and the autonomy policy in force do not admit, or nil; they are
// read at each admission. person says the agent is manual: its call, an Action or a Board
// act alike, then waits for a member's decision. The project's ledger must be locked.
func (o *Operations) autonomyRefusal(ctx context.Context, l *ledger, project contract.ProjectID, agent string, now time.Time, call Call) (r *contract.ToolResult, person bool, err error) {
	if o.policies == nil {
		return nil, false, nil
	}
	day := now.UTC().Truncate(24 * time.Hour)
	var today int64
	for _, op := range l.ops[agent] {
		if !op.at.Before(day) {
			today++
		}
	}
	ce := o.policies.AdmitAlong(l.held, contract.AgentID(agent), now, today)
	if ce == nil {
		return nil, false, nil
	}
	if ce.Code == contract.CodeAutonomyManual {
		return nil, true, nil
	}
	res := refusal(ce)
	return &res, false, nil
}
