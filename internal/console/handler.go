package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// handlerFunc is an API handler: it decodes, calls the authority, encodes, and returns
// any error for [Server.writeError] to map, once.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// access says which credential a route needs.
type access int

const (
	public     access = iota // none
	authed                   // any but a coding agent's hook token
	hookAuthed               // a coding agent's hook token, and nothing else
)

// handle registers h under pattern, wrapped once with authentication and error mapping.
func (s *Server) handle(pattern string, h handlerFunc, a access) {
	s.handlers[pattern] = h
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if a != public {
			c, tok, err := s.authenticate(r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			// Every authenticated request runs under its credential: a stream or
			// long-poll ends when the credential is revoked or expires
			// (docs/security.md, "Credentials and streams").
			ctx, release := s.ids.Hold(withCaller(r.Context(), c, tok), tok)
			defer release()
			r = r.WithContext(ctx)
			if done, err := s.delegateGate(w, r, pattern); done {
				if err != nil {
					s.writeError(w, r, err)
				}
				return
			}
			// A hook token reaches the hook routes only, and they take nothing else
			// (docs/coding-agents.md); the authority checks the second again.
			if c.Hook != (a == hookAuthed) {
				s.writeError(w, r, errHookRoutes(c.Hook))
				return
			}
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// errHookRoutes refuses a hook token off the hook routes (hook), or another credential
// on them.
func errHookRoutes(hook bool) error {
	if hook {
		return contract.Errorf(contract.CodeForbidden, "this is a coding agent's hook token, which reaches only the hook routes (/api/v1/hook/...); use a member's or an Agent's own token here.")
	}
	return contract.Errorf(contract.CodeForbidden, "the hook routes take only the hook token docket hook install wrote, not a member's, a delegate's or an Agent's own token.")
}

// writeError sends err as {"errorCode", "teaching"}. An error without a code is the
// authority's own failure: its cause is logged and never sent.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ce := s.publicError(r, err)
	status := httpStatus(ce.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="docket"`)
	}
	if err := writeJSON(w, status, contract.Error{Code: ce.Code, Teaching: ce.Teaching}); err != nil {
		s.log.ErrorContext(r.Context(), "refusal not sent", logMethod, r.Method, logPath, r.URL.Path, logErr, err)
		http.Error(w, `{"errorCode":"internal"}`, http.StatusInternalServerError)
	}
}

// publicError returns what may be sent of err, logging the rest: an error without a
// code is the authority's own failure, whose cause is logged and never sent.
func (s *Server) publicError(r *http.Request, err error) *contract.Error {
	ce, ok := errors.AsType[*contract.Error](err)
	if !ok {
		s.log.ErrorContext(r.Context(), "request failed", logMethod, r.Method, logPath, r.URL.Path, logErr, err)
		return contract.Errorf(contract.CodeInternal, "the authority failed to handle this request; its log has the cause.")
	}
	if ce.Err != nil {
		s.log.DebugContext(r.Context(), "request refused", logMethod, r.Method, logPath, r.URL.Path, logCode, ce.Code, logErr, ce.Err)
	}
	return ce
}

// writeJSON sends v as JSON with status. v is encoded first, so an encoding error is
// returned while the status can still say so. It returns nil when the write fails: the
// status is sent by then, so the only cause is a client that went away, and there is
// nobody left to tell.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
	return nil
}

// handleNoRoute answers paths under /api/ that name no route.
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) error {
	return contract.Errorf(contract.CodeNotFound, "no API route %s %s; see the routes in docket's console documentation.", r.Method, r.URL.Path)
}
