package workbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/localpath/localpathtest"
	"github.com/docketrun/docket/internal/secheaders"
)

// TestRunGate_ServeHTTP: every route behind docket start's URL needs the per-run key,
// from the printed URL (traded for a cookie), the cookie or the header, and only the
// loopback names of the gate's own port reach it.
func TestRunGate_ServeHTTP(t *testing.T) {
	serve := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(runKeyHeader) != "" {
			t.Errorf("the run key reached serve")
		}
		path, ok := strings.CutPrefix(r.URL.Path, "/k/SERVEKEY")
		if !ok {
			t.Errorf("the gate sent %s, without serve's path key", r.URL.Path)
		}
		w.Write([]byte("served " + path))
	}))
	defer serve.Close()
	target, _ := url.Parse(serve.URL + "/k/SERVEKEY")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	const key = "RUNKEYRUNKEYRUNKEYRUNKEY22"
	gate := httptest.NewUnstartedServer(newRunGate(key, port, target))
	gate.Listener.Close()
	gate.Listener = ln
	gate.Start()
	defer gate.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	tests := []struct {
		name       string
		path       string
		host       string
		header     string
		cookie     string
		navigate   bool // sent as a browser opening a page (Sec-Fetch-Mode: navigate)
		wantStatus int
		wantPage   bool // the HTML page that says where the URL with the key is
		wantForget bool // the stale cookie is expired
		wantCode   contract.Code
		wantBody   string
		wantTo     string
	}{
		{name: "no key", path: "/api/v1/health", wantStatus: 401, wantCode: contract.CodeRunKeyRequired},
		{name: "the page itself without a key", path: "/", wantStatus: 401, wantCode: contract.CodeRunKeyRequired},
		{name: "wrong key in the URL", path: "/?key=WRONG", wantStatus: 401, wantCode: contract.CodeRunKeyRequired},
		{name: "wrong cookie", path: "/api/v1/health", cookie: "WRONG", wantStatus: 401, wantCode: contract.CodeRunKeyRequired, wantForget: true},
		{name: "a browser without a key is told where the URL is", path: "/", navigate: true, wantStatus: 401, wantPage: true},
		{name: "a bookmark after --rotate-key", path: "/projects/default/needs", cookie: "OLDKEY", navigate: true, wantStatus: 401, wantPage: true, wantForget: true},
		{name: "a browser with a wrong key in the URL", path: "/?key=WRONG", navigate: true, wantStatus: 401, wantPage: true},
		{name: "key in the URL becomes a cookie", path: "/?key=" + key + "&x=1", wantStatus: 303, wantTo: "/?x=1"},
		{name: "cookie", path: "/api/v1/health", cookie: key, wantStatus: 200, wantBody: "served /api/v1/health"},
		{name: "header", path: "/api/v1/health", header: key, wantStatus: 200, wantBody: "served /api/v1/health"},
		{name: "localhost at the gate's port", path: "/x", host: "localhost:" + port, header: key, wantStatus: 200, wantBody: "served /x"},
		{name: "rebinding name", path: "/api/v1/health", host: "evil.example:" + port, header: key, wantStatus: 403, wantCode: contract.CodeHostNotAllowed},
		{name: "another port", path: "/api/v1/health", host: "127.0.0.1:1", header: key, wantStatus: 403, wantCode: contract.CodeHostNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, gate.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.header != "" {
				req.Header.Set(runKeyHeader, tt.header)
			}
			if tt.cookie != "" {
				req.AddCookie(&http.Cookie{Name: runKeyCookie, Value: tt.cookie})
			}
			if tt.navigate {
				req.Header.Set("Sec-Fetch-Mode", "navigate")
				req.Header.Set("Accept", "text/html,application/xhtml+xml")
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("GET %s = %d, want %d", tt.path, resp.StatusCode, tt.wantStatus)
			}
			// Every answer carries serve's security headers, once: the gate's own
			// refusals and redirect as well as what it passes on.
			for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options", "Cache-Control"} {
				if got := resp.Header.Values(h); len(got) != 1 || got[0] == "" {
					t.Errorf("GET %s: %s = %q, want one value", tt.path, h, got)
				}
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != secheaders.ContentSecurityPolicy {
				t.Errorf("GET %s: Content-Security-Policy = %q, want serve's", tt.path, got)
			}
			var body bytes.Buffer
			if _, err := body.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if tt.wantCode != "" {
				var ce contract.Error
				if err := json.Unmarshal(body.Bytes(), &ce); err != nil || ce.Code != tt.wantCode || ce.Teaching == "" {
					t.Errorf("GET %s answered %s, want code %s with a teaching", tt.path, body.String(), tt.wantCode)
				}
			}
			if isPage := strings.Contains(body.String(), "<h1>Open the URL docket start printed</h1>") && strings.Contains(body.String(), "docket open"); isPage != tt.wantPage {
				t.Errorf("GET %s answered %s; want the page that says where the URL is: %v", tt.path, body.String(), tt.wantPage)
			}
			if tt.wantPage && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("GET %s: Content-Type %q, want text/html", tt.path, resp.Header.Get("Content-Type"))
			}
			if forgot := len(resp.Cookies()) == 1 && resp.Cookies()[0].MaxAge < 0; forgot != tt.wantForget {
				t.Errorf("GET %s: cookies %+v; want the stale run key expired: %v", tt.path, resp.Cookies(), tt.wantForget)
			}
			if tt.wantBody != "" && body.String() != tt.wantBody {
				t.Errorf("GET %s = %q, want %q", tt.path, body.String(), tt.wantBody)
			}
			if tt.wantTo != "" {
				if got := resp.Header.Get("Location"); got != tt.wantTo {
					t.Errorf("Location = %q, want %q", got, tt.wantTo)
				}
				c := resp.Cookies()
				if len(c) != 1 || c[0].Name != runKeyCookie || c[0].Value != key || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
					t.Errorf("cookies = %+v, want one HttpOnly, SameSite=Strict %s", c, runKeyCookie)
				}
				// The cookie outlives the browser session: a bookmark still works tomorrow.
				if len(c) == 1 && c[0].MaxAge < 30*24*60*60 {
					t.Errorf("the run-key cookie lasts %ds, want days past the browser session", c[0].MaxAge)
				}
			}
		})
	}
}

// TestRunGate_SlowBodyRefused: a request refused at the gate does not keep its connection
// waiting for a body its sender dribbles in.
func TestRunGate_SlowBodyRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	target, _ := url.Parse("http://127.0.0.1:1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- serveGate(ctx, ln, newRunGate("RUNKEY", port, target)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: 100000\r\n\r\n{", port)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("the refused request still holds its connection; read %q", b)
	}
	if !strings.HasPrefix(string(b), "HTTP/1.1 401") {
		t.Errorf("answer %q, want 401", b)
	}
}

// TestRunGate_RedirectStaysOnOrigin: trading the key in the printed URL for a cookie
// answers a redirect on the gate's own origin only, whatever path the request names: with
// a second listener standing for another site, no hostile path leads a browser there
// (docs/security.md, "Redirects"). The request is written as it arrives on the wire.
func TestRunGate_RedirectStaysOnOrigin(t *testing.T) {
	var visits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { visits.Add(1) }))
	defer evil.Close()
	evilURL, err := url.Parse(evil.URL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	const key = "RUNKEYRUNKEYRUNKEYRUNKEY22"
	target, _ := url.Parse("http://127.0.0.1:1")
	gate := httptest.NewUnstartedServer(newRunGate(key, port, target))
	gate.Listener.Close()
	gate.Listener = ln
	gate.Start()
	defer gate.Close()
	base, err := url.Parse(gate.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range localpathtest.Hostile(evilURL.Host) {
		t.Run(tc.Name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := fmt.Fprintf(c, "GET %s?key=%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n", tc.Value, key, port); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				return // refused or not a request at all: nothing to follow
			}
			localpathtest.StaysOn(t, base, fmt.Sprintf("GET %q", tc.Value), resp.Header.Get("Location"), noRedirect, &visits)
		})
	}
}
