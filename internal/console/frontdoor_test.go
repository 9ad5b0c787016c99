package console_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/secheaders"
)

func TestCheckListen(t *testing.T) {
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}
	for _, tt := range []struct {
		name    string
		addr    string
		tls     bool
		proxies []netip.Prefix
		refused bool
	}{
		{name: "loopback v4", addr: "127.0.0.1:7420"},
		{name: "loopback v6", addr: "[::1]:7420"},
		{name: "localhost", addr: "localhost:7420"},
		{name: "another loopback address", addr: "127.0.0.2:0"},
		{name: "loopback, v4 in v6", addr: "[::ffff:127.0.0.1]:7420"},
		{name: "every interface", addr: "0.0.0.0:7420", refused: true},
		{name: "every interface, no host", addr: ":7420", refused: true},
		{name: "every interface v6", addr: "[::]:7420", refused: true},
		{name: "a LAN address", addr: "10.0.0.5:7420", refused: true},
		{name: "every interface over TLS", addr: "0.0.0.0:7420", tls: true},
		{name: "every interface behind a proxy", addr: "0.0.0.0:7420", proxies: proxy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := console.CheckListen(t.Context(), tt.addr, tt.tls, tt.proxies)
			if tt.refused != (err != nil) {
				t.Fatalf("CheckListen(%q) = %v, want refused %v", tt.addr, err, tt.refused)
			}
			if tt.refused && (contract.CodeOf(err) != contract.CodeListenInsecure || !strings.Contains(err.Error(), "--tls-cert") || !strings.Contains(err.Error(), "--behind-proxy")) {
				t.Errorf("refusal %v, want listen_insecure naming --tls-cert and --behind-proxy", err)
			}
		})
	}
}

func TestParseProxies(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   []string
		want []string // "": refused
	}{
		{name: "one address", in: []string{"10.0.0.1"}, want: []string{"10.0.0.1/32"}},
		{name: "a range, masked", in: []string{"10.0.0.7/24"}, want: []string{"10.0.0.0/24"}},
		{name: "v6 and a v4-mapped address", in: []string{"fd00::1", "::ffff:10.0.0.1"}, want: []string{"fd00::1/128", "10.0.0.1/32"}},
		{name: "blanks skipped", in: []string{" 127.0.0.1 ", ""}, want: []string{"127.0.0.1/32"}},
		{name: "a name", in: []string{"proxy.example"}},
		{name: "every address", in: []string{"0.0.0.0/0"}},
		{name: "every v6 address", in: []string{"::/0"}},
		{name: "a zone", in: []string{"fe80::1%eth0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := console.ParseProxies(tt.in)
			if tt.want == nil {
				if contract.CodeOf(err) != contract.CodeListenInsecure {
					t.Fatalf("ParseProxies(%q) = %v, %v; want listen_insecure", tt.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if strings.Join(s, " ") != strings.Join(tt.want, " ") {
				t.Errorf("ParseProxies(%q) = %v, want %v", tt.in, s, tt.want)
			}
		})
	}
}

// TestServer_BehindProxy: the forwarded proto of a named proxy makes answers carry HSTS
// and session cookies Secure; the same headers from another peer are ignored; and a peer
// that is neither a named proxy nor loopback is refused proxy_required.
func TestServer_BehindProxy(t *testing.T) {
	login := `{"name":"ada","passphrase":"` + testPassphrase + `"}`
	loopbackProxy := newTestServer(t, console.Config{Proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	otherProxy := newTestServer(t, console.Config{Proxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	for _, tt := range []struct {
		name   string
		srv    *testServer
		header map[string]string
		secure bool
	}{
		{name: "proxy says https", srv: loopbackProxy, header: map[string]string{"X-Forwarded-Proto": "https"}, secure: true},
		{name: "proxy says http", srv: loopbackProxy, header: map[string]string{"X-Forwarded-Proto": "http"}},
		{name: "proxy says nothing", srv: loopbackProxy},
		{name: "the nearest proxy's proto counts", srv: loopbackProxy, header: map[string]string{"X-Forwarded-Proto": "https, http"}},
		{name: "Forwarded proto", srv: loopbackProxy, header: map[string]string{"Forwarded": `for=192.0.2.60;proto=https;by=203.0.113.43`}, secure: true},
		{name: "Forwarded quoted, last element", srv: loopbackProxy, header: map[string]string{"Forwarded": `proto=http, for="[2001:db8::1]";proto="https"`}, secure: true},
		{name: "Forwarded wins over X-Forwarded-Proto", srv: loopbackProxy, header: map[string]string{"Forwarded": "proto=http", "X-Forwarded-Proto": "https"}},
		{name: "not a named proxy: ignored", srv: otherProxy, header: map[string]string{"X-Forwarded-Proto": "https", "Forwarded": "proto=https"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := tt.srv.do(t, request{method: "POST", path: "/api/v1/sessions/cookie", body: login, header: tt.header})
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("login: %s", resp.Status)
			}
			hsts := resp.Header.Get("Strict-Transport-Security")
			if tt.secure != (hsts == secheaders.StrictTransportSecurity) {
				t.Errorf("Strict-Transport-Security = %q, want it: %v", hsts, tt.secure)
			}
			cs := resp.Cookies()
			if len(cs) != 1 || cs[0].Secure != tt.secure {
				t.Errorf("cookies %+v, want one with Secure %v", cs, tt.secure)
			}
		})
	}

	h := otherProxy.Config.Handler
	for _, tt := range []struct {
		name, peer string
		want       int
	}{
		{name: "a named proxy", peer: "192.0.2.7:4242", want: http.StatusOK},
		{name: "loopback", peer: "127.0.0.1:4242", want: http.StatusOK},
		{name: "straight from the network", peer: "203.0.113.9:4242", want: http.StatusForbidden},
		{name: "straight, v6", peer: "[2001:db8::9]:4242", want: http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(context.WithValue(t.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 7420}),
				http.MethodGet, "/api/v1/health", nil)
			req.Host, req.RemoteAddr = "127.0.0.1:7420", tt.peer
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("GET /api/v1/health from %s: %d %s, want %d", tt.peer, rec.Code, rec.Body, tt.want)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), string(contract.CodeProxyRequired)) {
				t.Errorf("refusal %s, want %s", rec.Body, contract.CodeProxyRequired)
			}
		})
	}
}

// FuzzForwardedProto: any Forwarded header is read without a panic, and a proto it
// reports is never empty.
func FuzzForwardedProto(f *testing.F) {
	for _, s := range []string{
		`for=192.0.2.60;proto=http;by=203.0.113.43`,
		`proto=http, for="[2001:db8::1]";proto="https"`,
		`for="_gazonk"`, `proto="`, `proto=""`, `"a,b";proto=x`, `proto="a\"b"`, `,`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		p, ok := console.ForwardedProto([]string{h})
		if ok && p == "" {
			t.Fatalf("ForwardedProto(%q) = %q, true; want a proto", h, p)
		}
	})
}
