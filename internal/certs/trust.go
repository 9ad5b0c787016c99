package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/docketrun/docket/internal/contract"
)

// CAEnv names the CA file the CLI, a worker and a runtime trust when no --ca is given.
const CAEnv = "DOCKET_CA"

// Trust is what a client of docket serve trusts over https: only the CA certificates of
// one file (docket cert's ca.pem, or a team's own CA), or, with no file, the system's
// roots. A nil *Trust is the system's roots.
type Trust struct {
	file string
	pool *x509.CertPool // nil: the system's roots
}

// LoadTrust reads the CA certificates in caFile; "" trusts the system's roots.
func LoadTrust(caFile string) (*Trust, error) {
	if caFile == "" {
		return &Trust{}, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, contract.Errorf(contract.CodeTLSUntrusted, "the CA file %s cannot be read (%v); pass --ca the ca.pem docket cert wrote, as a readable file", caFile, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, contract.Errorf(contract.CodeTLSUntrusted, "the CA file %s holds no PEM certificate; pass --ca the ca.pem docket cert wrote (not its key)", caFile)
	}
	return &Trust{file: caFile, pool: pool}, nil
}

// File is the CA file trusted, or "" for the system's roots.
func (t *Trust) File() string {
	if t == nil {
		return ""
	}
	return t.file
}

// TLSConfig is a client's TLS configuration: TLS 1.2 at least, the trusted roots.
func (t *Trust) TLSConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if t != nil {
		c.RootCAs = t.pool
	}
	return c
}

// Transport is a clone of net/http's default transport that trusts t.
func (t *Trust) Transport() *http.Transport {
	var tr *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = dt.Clone()
	} else {
		tr = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	tr.TLSClientConfig = t.TLSConfig()
	return tr
}

// Client is an HTTP client whose transport trusts t and explains a certificate it
// refuses ([Trust.Explain]).
func (t *Trust) Client() *http.Client { return &http.Client{Transport: t.Explain(t.Transport())} }

// Explain wraps base so that a certificate refused in the handshake comes back as a
// *contract.Error with code tls_untrusted, naming the server, the CA trusted and the fix.
func (t *Trust) Explain(base http.RoundTripper) http.RoundTripper {
	return explainer{base: base, trust: t}
}

type explainer struct {
	base  http.RoundTripper
	trust *Trust
}

func (e explainer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := e.base.RoundTrip(r)
	if err != nil {
		if why := e.trust.Untrusted(r.URL.Host, err); why != nil {
			return nil, why
		}
	}
	return resp, err
}

// Untrusted returns, when err is a refused server certificate, the tls_untrusted error
// that explains it for a server at host; else nil.
func (t *Trust) Untrusted(host string, err error) error {
	cv, ok := errors.AsType[*tls.CertificateVerificationError](err)
	if !ok {
		return nil
	}
	origin := "https://" + host
	var teaching string
	_, unknown := errors.AsType[x509.UnknownAuthorityError](err)
	hn, wrongName := errors.AsType[x509.HostnameError](err)
	switch {
	case unknown && t.File() != "":
		teaching = fmt.Sprintf("docket serve at %s presents a certificate the CA in %s did not sign; pass --ca (or set %s) the ca.pem of the docket cert that made serve's certificate", origin, t.File(), CAEnv)
	case unknown:
		teaching = fmt.Sprintf("docket serve at %s presents a certificate no CA this system trusts signed; pass --ca FILE (or set %s) with the CA that signed it, such as the ca.pem docket cert wrote", origin, CAEnv)
	case wrongName:
		teaching = fmt.Sprintf("the certificate of docket serve at %s is not for %s; make one that is with docket cert --host %s and send serve SIGHUP, or use a name the certificate holds", origin, hn.Host, hn.Host)
	default:
		teaching = fmt.Sprintf("the certificate of docket serve at %s does not verify (%v); renew it with docket cert and send serve SIGHUP", origin, cv.Err)
	}
	return &contract.Error{Code: contract.CodeTLSUntrusted, Teaching: teaching, Err: cv}
}
