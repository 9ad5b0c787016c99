package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/localpath"
)

// signInBody is what the sign-in page shows: the name typed, where to go next, and why
// the last try was refused.
type signInBody struct {
	Name  string
	Next  string
	Error string
}

// pageSignIn shows the sign-in form.
func (s *Server) pageSignIn(w http.ResponseWriter, r *http.Request) {
	s.showSignIn(w, r, http.StatusOK, signInBody{Next: localPath(r.URL.Query().Get("next"))})
}

func (s *Server) showSignIn(w http.ResponseWriter, r *http.Request, status int, b signInBody) {
	if err := s.writePage(w, status, "signin", pageData{Body: b}); err != nil {
		s.renderError(w, r, err)
	}
}

// pageSignInPost opens a session with a member's passphrase and sends the browser on with
// it in the session cookie. A refused passphrase shows the form again with the refusal.
func (s *Server) pageSignInPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		s.renderError(w, r, &contract.Error{Code: contract.CodeInvalidArgument, Err: err,
			Teaching: "the sign-in form could not be read; send it from the sign-in page."})
		return
	}
	b := signInBody{Name: strings.TrimSpace(r.PostFormValue("name")), Next: localPath(r.PostFormValue("next"))}
	// The page's sign-in is a login like the API's, under the same rate limit.
	err := s.logins.allow(w, b.Name)
	var sess identity.Session
	if err == nil {
		sess, err = s.ids.Login(r.Context(), b.Name, r.PostFormValue("passphrase"), 0)
	}
	if err != nil {
		ce, ok := errors.AsType[*contract.Error](err)
		if !ok {
			s.renderError(w, r, err)
			return
		}
		b.Error = ce.Teaching
		s.showSignIn(w, r, httpStatus(ce.Code), b)
		return
	}
	s.setSessionCookie(w, r, sess)
	next := b.Next
	if next == "" {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// pageSignOut ends the session in the store, closes its open event streams and clears
// the cookie.
func (s *Server) pageSignOut(w http.ResponseWriter, r *http.Request) {
	v, err := s.visitor(w, r)
	if httpStatus(contract.CodeOf(err)) == http.StatusUnauthorized {
		clearSessionCookie(w)
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if err := s.signOut(r, v.token); err != nil {
		s.renderError(w, r, err)
		return
	}
	clearSessionCookie(w)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// signOut ends session tok in the store; the authority then ends every stream it holds
// open, as for any credential that stops proving its caller.
func (s *Server) signOut(r *http.Request, tok identity.Token) error {
	return s.ids.Logout(r.Context(), tok)
}

// setSessionCookie gives a browser its session: HttpOnly so that script cannot read it,
// SameSite=Strict so that other sites cannot send it.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, sess identity.Session) {
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    sess.Token.String(),
		Path:     "/",
		Expires:  sess.Expires,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   s.door.secure(r),
	})
}

func clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// localPath returns p when it is a path on this listener, else "": a sign-in link must
// not send the browser to another site, however the browser reads it (localpath.Parse).
func localPath(p string) string {
	lp, ok := localpath.Parse(p)
	if !ok {
		return ""
	}
	return lp
}
