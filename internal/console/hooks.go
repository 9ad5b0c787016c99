package console

import (
	"context"
	"net/http"
	"strconv"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// hookBackend is the part of the Operations the hook routes need (docs/coding-agents.md).
// It must be the Operations that decide Requests, so that a decision wakes the hook
// that waits for it.
type hookBackend interface {
	Hook(ctx context.Context, c identity.Caller, call contract.HookCall) (contract.HookVerdict, error)
	HookOutcome(ctx context.Context, c identity.Caller, out contract.HookOutcome) (int64, error)
	HookCalls(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID) ([]contract.HookCallEntry, error)
}

// maxHookBody bounds a hook call: the tool input and room for the envelope around it.
const maxHookBody = contract.MaxHookInput + 16<<10

// hookRoutes serves a coding agent's hook: the call before it runs (held until it is
// decided or its bound passes), the outcome after, and a member's listing of an Agent's
// calls. The hook sends its hook token, which reaches only these two routes; the authority
// refuses any other caller too.
func (s *Server) hookRoutes() {
	if s.hooks == nil {
		return
	}
	s.handle("POST /api/v1/hook/calls", s.handleHookCall, hookAuthed)
	s.handle("POST /api/v1/hook/outcomes", s.handleHookOutcome, hookAuthed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/hook-calls", s.handleHookCalls, authed)
}

// handleHookCall records a coding agent's tool call and answers whether it may run,
// once decided or at the call's bound.
func (s *Server) handleHookCall(w http.ResponseWriter, r *http.Request) error {
	call, err := decodeJSON[contract.HookCall](w, r, maxHookBody)
	if err != nil {
		return err
	}
	v, err := s.hooks.Hook(r.Context(), caller(r), call)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// handleHookOutcome records what a coding agent's call came to once it ran.
func (s *Server) handleHookOutcome(w http.ResponseWriter, r *http.Request) error {
	out, err := decodeJSON[contract.HookOutcome](w, r, s.maxBody)
	if err != nil {
		return err
	}
	ordinal, err := s.hooks.HookOutcome(r.Context(), caller(r), out)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]int64{"ordinal": ordinal})
}

// handleHookCalls lists a coding-agent Agent's calls with their decisions, for a member.
func (s *Server) handleHookCalls(w http.ResponseWriter, r *http.Request) error {
	calls, err := s.hooks.HookCalls(r.Context(), caller(r), project(r), contract.AgentID(r.PathValue("agent")))
	if err != nil {
		return err
	}
	page, err := paginate(r, calls, func(c contract.HookCallEntry) string { return strconv.FormatInt(c.Ordinal, 10) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}
