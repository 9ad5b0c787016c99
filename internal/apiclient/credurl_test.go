package apiclient_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// nonLoopbackIP returns an address of this machine that is not loopback, or skips.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	t.Skip("this machine has no address other than loopback to listen on")
	return nil
}

// credentialServer is a server on ip that counts the calls carrying a credential.
func credentialServer(t *testing.T, ip net.IP, tls bool, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			got.Add(1)
		}
		if h != nil {
			h.ServeHTTP(w, r)
			return
		}
		w.Write([]byte(`{}`))
	}))
	srv.Listener.Close()
	srv.Listener = ln
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &got
}

// TestClient_CredentialOnlyToHTTPSOrLoopback: a client holding a token sends it only to
// https or to a loopback address; plain http to another host is refused before any
// connection, and so is a redirect from a loopback server to one. Without a token the
// client calls anywhere.
func TestClient_CredentialOnlyToHTTPSOrLoopback(t *testing.T) {
	ip := nonLoopbackIP(t)
	plain, plainGot := credentialServer(t, ip, false, nil)
	secure, secureGot := credentialServer(t, ip, true, nil)
	local, localGot := credentialServer(t, net.IPv4(127, 0, 0, 1), false, nil)
	// httptest's certificate names 127.0.0.1 and example.com, not this address.
	secureClient := secure.Client()
	secureClient.Transport.(*http.Transport).TLSClientConfig.ServerName = "example.com"
	redirect, _ := credentialServer(t, net.IPv4(127, 0, 0, 1), false, http.RedirectHandler(plain.URL+"/api/v1/whoami", http.StatusTemporaryRedirect))
	tests := []struct {
		name    string
		url     string
		hc      *http.Client
		refused bool
		got     *atomic.Int64 // the server that must have the credential, when not refused
	}{
		{"plain http to another host", plain.URL, nil, true, nil},
		{"https to another host", secure.URL, secureClient, false, secureGot},
		{"plain http to loopback", local.URL, nil, false, localGot},
		{"a loopback redirect to plain http elsewhere", redirect.URL, nil, true, nil},
		{"no scheme", "127.0.0.1:7777", nil, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := int64(0)
			if tt.got != nil {
				before = tt.got.Load()
			}
			err := (&apiclient.Client{URL: tt.url, Token: "dkt_dlg_secret", HTTP: tt.hc}).Do(t.Context(), http.MethodGet, "/api/v1/whoami", nil, nil)
			switch {
			case tt.refused && contract.CodeOf(err) != contract.CodeInsecureURL:
				t.Errorf("Do = %v, want insecure_url", err)
			case !tt.refused && err != nil:
				t.Errorf("Do = %v, want it sent", err)
			case !tt.refused && tt.got.Load() != before+1:
				t.Errorf("the server got %d calls with the credential, want 1", tt.got.Load()-before)
			}
		})
	}
	if n := plainGot.Load(); n != 0 {
		t.Errorf("the plain http server elsewhere got the credential %d times", n)
	}
	if err := (&apiclient.Client{URL: plain.URL}).Do(t.Context(), http.MethodGet, "/api/v1/health", nil, nil); err != nil {
		t.Errorf("a call with no credential to plain http elsewhere = %v, want it sent", err)
	}
}
