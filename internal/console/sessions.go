package console

import (
	"context"
	"net/http"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// sessionBackend is the part of the identity directory the session routes need.
type sessionBackend interface {
	Login(ctx context.Context, name, passphrase string, ttl time.Duration) (identity.Session, error)
	Logout(ctx context.Context, tok identity.Token) error
}

// pinger is the part of the authority the health check needs: whether its store answers.
type pinger interface {
	Ping(ctx context.Context) error
}

// handleLogin opens a session for a CLI or script: the token is in the body.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.LoginRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	if err := s.logins.allow(w, req.Name); err != nil {
		return err
	}
	sess, err := s.ids.Login(r.Context(), req.Name, req.Passphrase, 0)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, contract.SessionCreated{Token: sess.Token.String(),
		CSRFToken: csrfToken(sess.Token), ExpiresAt: sess.Expires, Member: sess.Member})
}

// handleLoginCookie opens a session for a browser: the token goes only into an HttpOnly,
// SameSite=Strict cookie, and the body carries the CSRF token that page script sends back
// on writes.
func (s *Server) handleLoginCookie(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.LoginRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	if err := s.logins.allow(w, req.Name); err != nil {
		return err
	}
	sess, err := s.ids.Login(r.Context(), req.Name, req.Passphrase, 0)
	if err != nil {
		return err
	}
	s.setSessionCookie(w, r, sess)
	return writeJSON(w, http.StatusCreated, contract.SessionCreated{CSRFToken: csrfToken(sess.Token),
		ExpiresAt: sess.Expires, Member: sess.Member})
}

// handleLogout revokes the session that made the request, ends its event streams and
// clears the cookie.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if caller(r).Kind != contract.PrincipalMember {
		return contract.Errorf(contract.CodeForbidden, "only a member's session can log out; revoke agents with docket agent revoke.")
	}
	if err := s.signOut(r, requestToken(r)); err != nil {
		return err
	}
	clearSessionCookie(w)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleWhoami describes the caller.
func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, caller(r).Whoami())
}

// handleHealth answers doctor without a credential; it names no project.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	h := contract.Health{Version: s.version, Store: "ok"}
	if err := s.auth.Ping(r.Context()); err != nil {
		h.Store = "unavailable"
		return writeJSON(w, http.StatusServiceUnavailable, h)
	}
	return writeJSON(w, http.StatusOK, h)
}
