package authority

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// LogHead returns the sequence number of project's last event, 0 for an empty log: the
// cursor a reader that shows the log as it stands now follows the stream from.
func (a *Authority) LogHead(ctx context.Context, c identity.Caller, project contract.ProjectID) (int64, error) {
	if err := c.RequireMember(project); err != nil {
		return 0, err
	}
	h, err := a.store.Head(ctx, string(project))
	if err != nil {
		return 0, fmt.Errorf("read the head of %s: %w", project, eventlog.Refuse(err, "project "+string(project)))
	}
	return h.Seq, nil
}
