package certs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/slowtest"
)

var now = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

func issue(t *testing.T, dir string, hosts ...string) certs.Issued {
	t.Helper()
	out, err := certs.Issue(certs.Request{Dir: dir, Hosts: hosts, Rand: rand.Reader, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pool(t *testing.T, caFile string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	return p
}

// TestIssue: the server certificate verifies under the CA for every name given and the
// loopback names, for server authentication only; keys are 0600; a second Issue signs
// with the same CA.
func TestIssue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	out := issue(t, dir, "docket.example.com", "10.0.0.5", "fd00::5")
	if !out.NewCA {
		t.Error("the first Issue did not make a CA")
	}
	kp, err := certs.LoadKeypair(out.Server, out.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf := kp.Leaf()
	roots := pool(t, out.CA)
	for _, name := range []string{"docket.example.com", "DOCKET.example.com", "10.0.0.5", "fd00::5", "localhost", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now}); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.example.com", Roots: roots, CurrentTime: now}); err == nil {
		t.Error("the certificate verifies for a name it was not made for")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the server certificate verifies for client authentication")
	}
	if got := leaf.NotAfter.Sub(now); got != certs.ServerLifetime {
		t.Errorf("lifetime %v, want %v", got, certs.ServerLifetime)
	}
	for path, want := range map[string]os.FileMode{out.CAKey: 0o600, out.ServerKey: 0o600, out.CA: 0o644, out.Server: 0o644} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}

	caBefore, err := os.ReadFile(out.CA)
	if err != nil {
		t.Fatal(err)
	}
	again := issue(t, dir, "new.example.com")
	caAfter, err := os.ReadFile(out.CA)
	if err != nil {
		t.Fatal(err)
	}
	if again.NewCA || !bytes.Equal(caBefore, caAfter) {
		t.Errorf("a second Issue made a new CA (NewCA %v)", again.NewCA)
	}
	if err := kp.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := kp.Leaf().Verify(x509.VerifyOptions{DNSName: "new.example.com", Roots: roots, CurrentTime: now}); err != nil {
		t.Errorf("the re-issued certificate does not verify under the first CA: %v", err)
	}
}

func TestCheckHost(t *testing.T) {
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"docket.example.com", true}, {"10.0.0.5", true}, {"fd00::5", true}, {"docket", true}, {"a-b.c", true},
		{"", false}, {"https://docket.example.com", false}, {"docket.example.com:7420", false}, {"*.example.com", false},
		{"docket..example", false}, {"-docket.example", false}, {"docket.example.", false}, {"fe80::1%eth0", false},
		{"docket example", false}, {strings.Repeat("a", 64) + ".example", false},
	} {
		if err := certs.CheckHost(tt.host); (err == nil) != tt.ok {
			t.Errorf("CheckHost(%q) = %v, want ok %v", tt.host, err, tt.ok)
		}
	}
	if _, err := certs.Issue(certs.Request{Dir: t.TempDir(), Hosts: []string{"https://x"}, Rand: rand.Reader, Now: now}); err == nil {
		t.Error("Issue took a host that is a URL")
	}
}

// TestIssue_HalfACA: a CA certificate without its key is not replaced silently.
func TestIssue_HalfACA(t *testing.T) {
	dir := t.TempDir()
	out := issue(t, dir, "docket.example.com")
	if err := os.Remove(out.CAKey); err != nil {
		t.Fatal(err)
	}
	_, err := certs.Issue(certs.Request{Dir: dir, Hosts: []string{"docket.example.com"}, Rand: rand.Reader, Now: now})
	if err == nil || !strings.Contains(err.Error(), certs.CAKeyFile) {
		t.Fatalf("Issue with the CA's key missing = %v, want an error naming it", err)
	}
}

// TestKeypair_Reload: a pair that does not load leaves the one in use.
func TestKeypair_Reload(t *testing.T) {
	dir := t.TempDir()
	out := issue(t, dir, "docket.example.com")
	kp, err := certs.LoadKeypair(out.Server, out.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	first := kp.Leaf().SerialNumber
	issue(t, dir, "docket.example.com")
	if err := kp.Reload(); err != nil {
		t.Fatal(err)
	}
	second := kp.Leaf().SerialNumber
	if second.Cmp(first) == 0 {
		t.Fatal("Reload kept the first certificate")
	}
	other := issue(t, t.TempDir(), "docket.example.com")
	kb, err := os.ReadFile(other.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out.ServerKey, kb, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := kp.Reload(); err == nil {
		t.Fatal("Reload took a key that is not the certificate's")
	}
	c, err := kp.GetCertificate(nil)
	if err != nil || c.Leaf.SerialNumber.Cmp(second) != 0 {
		t.Errorf("after a failed reload the pair in use is %v, %v; want serial %x", c.Leaf.SerialNumber, err, second)
	}
}

// TestTrust: a client trusting the CA that signed serve's certificate reaches it; one
// trusting another CA, the system's roots, or reaching it under a name the certificate
// lacks is refused tls_untrusted with a sentence naming what it trusts and the fix.
func TestTrust(t *testing.T) {
	slowtest.Skip(t) // a TLS server on loopback
	out := issue(t, t.TempDir(), "docket.example.com")
	other := issue(t, t.TempDir(), "docket.example.com")
	kp, err := certs.LoadKeypair(out.Server, out.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	// serve's own way: a TLS listener whose certificate GetCertificate gives.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	addr := srv.Listener.Addr().String()
	srv.Listener = tls.NewListener(srv.Listener, kp.ServerConfig())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the test's
	srv.Start()
	t.Cleanup(srv.Close)
	base := "https://" + addr

	for _, tt := range []struct {
		name  string
		ca    string
		url   string
		wants []string // nil: reached
	}{
		{name: "the CA", ca: out.CA, url: base},
		{name: "another CA", ca: other.CA, url: base, wants: []string{"did not sign", other.CA, "--ca"}},
		{name: "the system's roots", url: base, wants: []string{"no CA this system trusts", "--ca FILE"}},
		{name: "a name the certificate lacks", ca: out.CA, url: "https://wrong.example.com", wants: []string{"is not for wrong.example.com", "docket cert --host wrong.example.com"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			trust, err := certs.LoadTrust(tt.ca)
			if err != nil {
				t.Fatal(err)
			}
			tr := trust.Transport()
			// Every name dials the test server, so the certificate is judged by name.
			tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			}
			hc := &http.Client{Transport: trust.Explain(tr)}
			resp, err := hc.Get(tt.url)
			if tt.wants == nil {
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatal("reached serve, want a refusal")
			}
			ce, ok := errors.AsType[*contract.Error](err)
			if !ok || ce.Code != contract.CodeTLSUntrusted {
				t.Fatalf("error %v, want tls_untrusted", err)
			}
			for _, w := range tt.wants {
				if !strings.Contains(ce.Teaching, w) {
					t.Errorf("teaching %q does not say %q", ce.Teaching, w)
				}
			}
		})
	}
}

func TestLoadTrust_BadFile(t *testing.T) {
	dir := t.TempDir()
	out := issue(t, dir, "docket.example.com")
	for _, tt := range []struct{ name, file, want string }{
		{"missing", filepath.Join(dir, "nope.pem"), "cannot be read"},
		{"a key, not a certificate", out.CAKey, "holds no PEM certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := certs.LoadTrust(tt.file)
			if contract.CodeOf(err) != contract.CodeTLSUntrusted || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("LoadTrust(%s) = %v, want tls_untrusted saying %q and naming the file", tt.file, err, tt.want)
			}
		})
	}
	if _, err := certs.LoadTrust(out.CA); err != nil {
		t.Errorf("LoadTrust(ca.pem) = %v", err)
	}
}
