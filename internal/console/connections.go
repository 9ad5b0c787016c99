package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// connectionBackend is the part of the identity directory the connection routes need:
// connections, their sources and their tool locks.
type connectionBackend interface {
	Connections(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Connection, error)
	CreateConnection(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.CreateConnectionRequest) (contract.ConnectionKey, error)
	RevokeConnection(ctx context.Context, c identity.Caller, project contract.ProjectID, ref string) (contract.Connection, error)
	Sources(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string) ([]contract.Source, error)
	BindSource(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string, src contract.Source) (contract.Source, error)
	ToolLocks(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string) ([]contract.ToolLock, error)
}

// toolLocker is the part of the authority that locks a Tool: it checks the lock against
// what the Connection's live worker advertises before the directory keeps it
// (docs/workers.md, "Direct Actions").
type toolLocker interface {
	LockTool(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string, l contract.ToolLock) (contract.ToolLock, error)
}

func (s *Server) handleConnections(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.ids.Connections(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, cs, func(c contract.Connection) string { return string(c.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleCreateConnection(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.CreateConnectionRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	ck, err := s.ids.CreateConnection(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, ck)
}

func (s *Server) handleRevokeConnection(w http.ResponseWriter, r *http.Request) error {
	c, err := s.ids.RevokeConnection(r.Context(), caller(r), project(r), r.PathValue("connection"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleSources(w http.ResponseWriter, r *http.Request) error {
	ss, err := s.ids.Sources(r.Context(), caller(r), project(r), r.PathValue("connection"))
	if err != nil {
		return err
	}
	page, err := paginate(r, ss, func(s contract.Source) string { return s.Name })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleBindSource binds the source named in the path; a name in the body must match it.
func (s *Server) handleBindSource(w http.ResponseWriter, r *http.Request) error {
	src, err := decodeJSON[contract.Source](w, r, s.maxBody)
	if err != nil {
		return err
	}
	name := r.PathValue("source")
	if src.Name != "" && src.Name != name {
		return contract.Errorf(contract.CodeInvalidArgument, "the body names source %q but the path names %q; make them agree.", src.Name, name)
	}
	src.Name = name
	if src.Connection != "" || src.Digest != "" {
		return contract.Errorf(contract.CodeInvalidArgument, "connection and digest are set by the authority; leave them out of the body.")
	}
	out, err := s.ids.BindSource(r.Context(), caller(r), project(r), r.PathValue("connection"), src)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleToolLocks(w http.ResponseWriter, r *http.Request) error {
	ls, err := s.ids.ToolLocks(r.Context(), caller(r), project(r), r.PathValue("connection"))
	if err != nil {
		return err
	}
	page, err := paginate(r, ls, func(l contract.ToolLock) string { return l.Tool })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleLockTool locks the tool named in the path; a tool in the body must match it.
func (s *Server) handleLockTool(w http.ResponseWriter, r *http.Request) error {
	l, err := decodeJSON[contract.ToolLock](w, r, s.maxBody)
	if err != nil {
		return err
	}
	tool := r.PathValue("tool")
	if l.Tool != "" && l.Tool != tool {
		return contract.Errorf(contract.CodeInvalidArgument, "the body names tool %q but the path names %q; make them agree.", l.Tool, tool)
	}
	l.Tool = tool
	if l.Connection != "" {
		return contract.Errorf(contract.CodeInvalidArgument, "connection is taken from the path; leave it out of the body.")
	}
	out, err := s.auth.LockTool(r.Context(), caller(r), project(r), r.PathValue("connection"), l)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}
