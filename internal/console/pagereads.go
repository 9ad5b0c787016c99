package console

import (
	"context"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// pageBackend is the part of the authority only the pages read: the log's head, where a
// page's live updates start, and what the installed releases declare.
type pageBackend interface {
	LogHead(ctx context.Context, c identity.Caller, project contract.ProjectID) (int64, error)
	Capabilities(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.CapabilityContent, error)
	ActionDescriptions(ctx context.Context, c identity.Caller, project contract.ProjectID) (map[string]string, error)
}
