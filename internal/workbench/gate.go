package workbench

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/localpath"
	"github.com/docketrun/docket/internal/secheaders"
)

// runKeyCookie carries docket start's per-run key in the browser once the printed URL
// was opened.
const runKeyCookie = "docket_run_key"

// byHeaderKey marks, in a request's context, a request that carried the run key in its
// header rather than in the browser's cookie.
type byHeaderKey struct{}

// keyInHeader reports whether r carried the run key in its header.
func keyInHeader(r *http.Request) bool { v, _ := r.Context().Value(byHeaderKey{}).(bool); return v }

// runKeyHeader carries the per-run key for clients that are not browsers.
const runKeyHeader = "X-Docket-Run-Key"

// runKeyCookieAge is how long a browser keeps the run key once it opened the printed URL:
// past the browser session, so that a bookmark or a browser opened again finds the
// console. A new key (--rotate-key) ends it at once: the old cookie no longer matches.
const runKeyCookieAge = 90 * 24 * time.Hour

//go:embed web/key.html
var keyPageHTML []byte

// runGate is docket start's front door: every route, the page itself included, needs
// this run's key, and only the loopback names of its own port may be used to reach it,
// because any web page the person visits can send requests to a loopback port. Past the gate, requests go to the supervised docket serve unchanged.
// It is safe for concurrent use.
type runGate struct {
	key   string
	port  string // the gate's own port, for the Host check
	proxy *httputil.ReverseProxy
	// local serves docket start's own pages (under /start/), which never reach serve;
	// nil: none. firstVisit, when set, says whether the browser's first visit goes to
	// the first-use form rather than where the printed URL points.
	local      http.Handler
	firstVisit func(r *http.Request) bool
}

// newRunKey returns a fresh per-run key.
func newRunKey() string { return rand.Text() }

// newRunGate returns the gate of key at port in front of serve, whose URL carries serve's
// own path key. Every answer carries serve's security headers, the gate's own refusals
// included.
func newRunGate(key, port string, serve *url.URL) *runGate {
	return &runGate{key: key, port: port, proxy: &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(serve) },
		ModifyResponse: func(res *http.Response) error {
			secheaders.Set(res.Header)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			writeGateError(w, http.StatusBadGateway, contract.Errorf(contract.CodeUnavailable,
				"docket serve is not answering; docket start restarts it, try again in a moment."))
		},
		ErrorLog: log.New(discardWriter{}, "", 0), // serve restarting is reported by the supervisor
	}}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

func (g *runGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		writeGateError(w, http.StatusForbidden, contract.Errorf(contract.CodeHostNotAllowed,
			"Host %q is not this listener; use the URL docket start printed.", r.Host))
		return
	}
	if k := r.URL.Query().Get("key"); k != "" {
		if !g.matches(k) {
			if navigation(r) {
				writeKeyPage(w)
				return
			}
			writeGateError(w, http.StatusUnauthorized, g.refusal())
			return
		}
		// Trade the key in the URL for a cookie and drop it from the address bar, so it
		// is not kept in history or sent on as a Referer.
		secheaders.Set(w.Header())
		http.SetCookie(w, &http.Cookie{Name: runKeyCookie, Value: k, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
			MaxAge: int(runKeyCookieAge / time.Second)})
		q := r.URL.Query()
		q.Del("key")
		to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		if g.firstVisit != nil && g.firstVisit(r) {
			to = url.URL{Path: ModelPath}
		}
		// The gate answers only a redirect on its own origin: a request for
		// //evil.example/?key=… would otherwise be sent to evil.example, and a path
		// no browser reads as this origin's goes to the page (docs/security.md,
		// "Redirects").
		next, ok := localpath.Parse(to.String())
		if !ok {
			next = "/"
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	k := r.Header.Get(runKeyHeader)
	fromCookie := false
	if c, err := r.Cookie(runKeyCookie); k == "" && err == nil {
		k, fromCookie = c.Value, true
	}
	if !g.matches(k) {
		if fromCookie {
			// A key of an earlier run (before --rotate-key) is forgotten by the browser.
			http.SetCookie(w, &http.Cookie{Name: runKeyCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
		}
		if navigation(r) {
			writeKeyPage(w)
			return
		}
		writeGateError(w, http.StatusUnauthorized, g.refusal())
		return
	}
	r.Header.Del(runKeyHeader)
	if !fromCookie {
		// A program that sent the key in its header, which no page of another origin
		// can set: docket start's own routes need no form token from it.
		r = r.WithContext(context.WithValue(r.Context(), byHeaderKey{}, true))
	}
	if g.local != nil && strings.HasPrefix(r.URL.Path, "/start/") {
		g.local.ServeHTTP(w, r)
		return
	}
	g.proxy.ServeHTTP(w, r)
}

// navigation reports whether r is a browser opening a page (a bookmark, a typed
// address), which is answered with a page a person can read rather than JSON.
func navigation(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if m := r.Header.Get("Sec-Fetch-Mode"); m != "" {
		return m == "navigate"
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// writeKeyPage tells a browser without the run key where the URL with it is.
func writeKeyPage(w http.ResponseWriter) {
	secheaders.Set(w.Header())
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	// The status is sent; a browser that went away has nothing to learn.
	w.Write(keyPageHTML)
}

func (g *runGate) matches(k string) bool {
	return k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(g.key)) == 1
}

func (g *runGate) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	for _, name := range []string{"localhost", "127.0.0.1", "[::1]"} {
		if host == name+":"+g.port {
			return true
		}
	}
	return false
}

func (g *runGate) refusal() *contract.Error {
	return contract.Errorf(contract.CodeRunKeyRequired,
		"this docket start needs its per-run key; open the URL it printed (…/?key=…; docket open prints it again) or send the key in the %s header.", runKeyHeader)
}

func writeGateError(w http.ResponseWriter, status int, err *contract.Error) {
	secheaders.Set(w.Header())
	// A refused request's body is never read: end the connection after the answer
	// rather than wait for a body its sender may dribble in forever. The deadline can
	// only fail where there is no connection (a test's recorder); Connection: close
	// still ends the connection then, once the body is in.
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	w.Header().Set("Content-Type", "application/json")
	body, merr := json.Marshal(err)
	if merr != nil {
		// A refusal is two strings; should it ever fail to encode, the status still says why.
		status, body = http.StatusInternalServerError, []byte(`{"errorCode":"internal"}`)
	}
	w.WriteHeader(status)
	// The status is sent; a client that hangs up before the body has nothing to learn.
	w.Write(append(body, '\n'))
}

// serveGate runs g on ln until ctx ends, then shuts it down within a bound.
func serveGate(ctx context.Context, ln net.Listener, g *runGate) error {
	hs := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1) // written once by the serving goroutine
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve the run gate: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// Event streams never end on their own; Close ends them after the grace.
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the run gate: %w", err)
	}
	return nil
}

// freeLoopbackPort returns a loopback port nothing listens on now, for a child that
// must keep one address across restarts.
func freeLoopbackPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}
