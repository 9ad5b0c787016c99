package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// toolBackend is the part of the authority the Tools routes need beyond the lock
// (connections.go): a Connection's inventory, what its worker advertises beside its locks
// (docs/workers.md, "Direct Actions").
type toolBackend interface {
	ToolInventory(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string) (contract.ConnectionTools, error)
}

// toolApprover is the part of the identity directory that unlocks a Tool and changes its
// approval.
type toolApprover interface {
	UnlockTool(ctx context.Context, c identity.Caller, project contract.ProjectID, conn, tool string) (contract.ToolLock, error)
	SetToolApproval(ctx context.Context, c identity.Caller, project contract.ProjectID, conn, tool, approval string) (contract.ToolLock, error)
}

// handleToolInventory lists every Tool a Connection's worker advertises or that is locked
// on it, and its Sources with whether the worker's vault holds each.
func (s *Server) handleToolInventory(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.auth.ToolInventory(r.Context(), caller(r), project(r), r.PathValue("connection"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, inv)
}

// handleUnlockTool takes the lock of the Tool named in the path off the Connection and
// answers the lock as it was.
func (s *Server) handleUnlockTool(w http.ResponseWriter, r *http.Request) error {
	l, err := s.ids.UnlockTool(r.Context(), caller(r), project(r), r.PathValue("connection"), r.PathValue("tool"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l)
}

// handleToolApproval sets what the direct Action of the Tool named in the path needs.
func (s *Server) handleToolApproval(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.ToolApprovalRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	l, err := s.ids.SetToolApproval(r.Context(), caller(r), project(r), r.PathValue("connection"), r.PathValue("tool"), in.Approval)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l)
}
