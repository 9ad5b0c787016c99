package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// authenticator is the part of the authority that proves a request's credential and
// ends what the request holds open once the credential no longer proves its caller.
type authenticator interface {
	Authenticate(ctx context.Context, tok identity.Token) (identity.Caller, error)
	Hold(ctx context.Context, tok identity.Token) (context.Context, func())
}

// loopbackNames are the Host names a loopback listener answers to, at its own port.
var loopbackNames = []string{"localhost", "127.0.0.1", "[::1]"}

// checkHost refuses a Host header that is not this listener: a DNS-rebinding page reaches
// 127.0.0.1 under its own name, and the Host header is what gives it away.
// The port must be the port of the connection's local address, so that another local
// service's page cannot borrow this one.
func (s *Server) checkHost(r *http.Request) error {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return errHost(r.Host)
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return errHost(r.Host)
	}
	host := strings.ToLower(r.Host)
	// A name given without a port (docket serve --host docket.example.com) is answered
	// as the browser sends it at the default port, through a proxy, and at this
	// listener's own port; one given with a port only at that port.
	if slices.Contains(s.hosts, host) || slices.Contains(s.hosts, strings.TrimSuffix(host, ":"+port)) {
		return nil
	}
	for _, name := range loopbackNames {
		if host == name+":"+port {
			return nil
		}
	}
	return errHost(r.Host)
}

// hostNames are the extra Host names as checkHost compares them: lower case, an IPv6
// address in brackets.
func hostNames(hosts []string) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
			h = "[" + h + "]"
		}
		out[i] = h
	}
	return out
}

func errHost(host string) error {
	return contract.Errorf(contract.CodeHostNotAllowed,
		"Host %q is not this listener; use http://127.0.0.1:<port> or http://localhost:<port>, or add the name with docket serve --host.", host)
}

func errCrossOrigin(err error) error {
	return &contract.Error{Code: contract.CodeCrossOrigin,
		Teaching: "a state-changing request from another origin is refused; send it from the console's own pages or with a bearer token.", Err: err}
}

// sessionCookie is the browser's session cookie: HttpOnly so that script cannot read it,
// SameSite=Strict so that other sites cannot send it.
const sessionCookie = "docket_session"

// csrfHeader carries the CSRF token on state-changing cookie-authenticated requests.
const csrfHeader = "X-CSRF-Token"

// csrfToken derives a session's CSRF token from its session token. It is a one-way
// function, so showing it to page script reveals nothing of the HttpOnly cookie, and it
// needs no server state. A page of another origin can neither read the cookie nor the
// token, so it cannot forge the header.
func csrfToken(session identity.Token) string {
	sum := sha256.Sum256([]byte("docket.csrf.v1\x00" + session.String()))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// credential returns the request's session or agent token: a bearer token from the
// Authorization header, else the session cookie. fromCookie says which, because only
// cookies are sent by browsers on their own and so only they need a CSRF token.
func credential(r *http.Request) (tok identity.Token, fromCookie bool, err error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || t == "" {
			return "", false, contract.Errorf(contract.CodeUnauthenticated, "the Authorization header must be \"Bearer <token>\"; use the token printed by docket init.")
		}
		return identity.Token(strings.TrimSpace(t)), false, nil
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		return identity.Token(c.Value), true, nil
	}
	return "", false, contract.Errorf(contract.CodeUnauthenticated, "this route needs a credential; send Authorization: Bearer <token> (docket init prints one) or log in.")
}

// authenticate returns the caller of r. A cookie-authenticated request that may change
// state must carry the session's CSRF token.
func (s *Server) authenticate(r *http.Request) (identity.Caller, identity.Token, error) {
	tok, fromCookie, err := credential(r)
	if err != nil {
		return identity.Caller{}, "", err
	}
	if fromCookie && !safeMethod(r.Method) {
		got := r.Header.Get(csrfHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(csrfToken(tok))) != 1 {
			return identity.Caller{}, "", contract.Errorf(contract.CodeCSRF,
				"a state-changing request with the session cookie needs the %s header from the login response.", csrfHeader)
		}
	}
	c, err := s.ids.Authenticate(r.Context(), tok)
	if err != nil {
		return identity.Caller{}, "", err
	}
	return c, tok, nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// callerKey is the context key of the authenticated caller of a request.
type callerKey struct{}

// tokenKey is the context key of the token that authenticated a request.
type tokenKey struct{}

func withCaller(ctx context.Context, c identity.Caller, tok identity.Token) context.Context {
	return context.WithValue(context.WithValue(ctx, callerKey{}, c), tokenKey{}, tok)
}

// caller returns the authenticated caller; handlers on authed routes always have one.
func caller(r *http.Request) identity.Caller { return callerFrom(r.Context()) }

func callerFrom(ctx context.Context) identity.Caller {
	c, _ := ctx.Value(callerKey{}).(identity.Caller)
	return c
}

func requestToken(r *http.Request) identity.Token {
	t, _ := r.Context().Value(tokenKey{}).(identity.Token)
	return t
}

// PathKeyPrefix begins the path of every request to a serve with a path key.
const PathKeyPrefix = "/k/"

// stripPathKey reports whether r's path begins /k/<the path key>, compared in constant
// time, and strips it.
func (s *Server) stripPathKey(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, PathKeyPrefix)
	if !ok {
		return false
	}
	key, tail, _ := strings.Cut(rest, "/")
	if subtle.ConstantTimeCompare([]byte(key), []byte(s.pathKey)) != 1 {
		return false
	}
	r.URL.Path, r.URL.RawPath = "/"+tail, ""
	return true
}
