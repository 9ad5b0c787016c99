package worker

import (
	"fmt"

	"github.com/docketrun/docket/internal/contract"
)

// WorkspaceAccess is the worker's local ceiling on the built-in workspace Tools it offers
// (--workspace-tools): whatever the authority locks, a Tool above it is never advertised
// nor run.
type WorkspaceAccess string

// Workspace ceilings.
const (
	WorkspaceOff       WorkspaceAccess = "off"        // no workspace Tool
	WorkspaceRead      WorkspaceAccess = "read"       // list, count, search, read and hash
	WorkspaceReadWrite WorkspaceAccess = "read-write" // the above, and write_text and write_json
)

// ParseWorkspaceAccess parses a ceiling; "" is WorkspaceRead.
func ParseWorkspaceAccess(s string) (WorkspaceAccess, error) {
	switch w := WorkspaceAccess(s); w {
	case "":
		return WorkspaceRead, nil
	case WorkspaceOff, WorkspaceRead, WorkspaceReadWrite:
		return w, nil
	}
	return "", fmt.Errorf("workspace tools %.20q: use off, read or read-write", s)
}

// Offers reports whether the ceiling lets the worker offer Tool t.
func (w WorkspaceAccess) Offers(t Tool) bool {
	if t.Adapter != AdapterWorkspace {
		return true
	}
	switch w {
	case WorkspaceOff:
		return false
	case WorkspaceReadWrite:
		return true
	}
	return t.Kind == contract.ToolKindRead
}
