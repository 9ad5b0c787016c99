// Package certs provides Docket's TLS certificates: the small local CA and the server
// certificate docket cert makes, serve's certificate reloaded in place, and what a client
// trusts of a serve over https (docs/deploy.md).
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Files docket cert writes into its directory. Keys are 0600; certificates are public
// and 0644.
const (
	CAFile         = "ca.pem"     // the CA's certificate: what workers, the CLI and runtimes trust (--ca)
	CAKeyFile      = "ca.key"     // the CA's private key: signs the next server certificate; never leaves this machine
	ServerFile     = "server.pem" // the server certificate, then the CA's: docket serve --tls-cert
	ServerKeyFile  = "server.key" // the server's private key: docket serve --tls-key
	privateMode    = 0o600
	publicMode     = 0o644
	serialBits     = 128
	maxHostNameLen = 253
)

// Lifetimes of what docket cert makes. A server certificate lives 825 days, the longest
// some TLS clients (Apple's) accept; the CA ten years, so re-issuing a server certificate
// under it changes nothing on the workers' side.
const (
	CALifetime     = 10 * 365 * 24 * time.Hour
	ServerLifetime = 825 * 24 * time.Hour
	backdate       = time.Hour // a clock a little behind this machine's still accepts a new certificate
)

// LoopbackNames are in every server certificate docket cert makes, so the CLI and a
// worker on serve's own machine reach it at its loopback URL.
var LoopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// Request says what docket cert makes. Dir and Hosts are required; Rand and Now are
// injected (crypto/rand.Reader and time.Now in production).
type Request struct {
	Dir   string   // where the files go; made 0700 when missing
	Hosts []string // DNS names and IP addresses the server answers to, besides LoopbackNames
	Rand  io.Reader
	Now   time.Time
}

// Issued is what [Issue] did: the files it wrote and the names the server certificate
// holds.
type Issued struct {
	CA        string   // the CA certificate's path
	CAKey     string   // the CA key's path
	Server    string   // the server certificate's path
	ServerKey string   // the server key's path
	NewCA     bool     // false: an existing CA in Dir signed the server certificate
	Names     []string // the DNS names and IP addresses of the server certificate
	NotAfter  time.Time
}

// CheckHost refuses a --host value a certificate cannot name: empty, with a port, a
// scheme or a path, a wildcard, an IPv6 zone, or not a DNS name or an IP address.
func CheckHost(h string) error {
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return nil
	}
	bad := fmt.Errorf("--host %q is not a DNS name or an IP address; give the name people and workers use, such as docket.example.com or 10.0.0.5 (no scheme, port or wildcard)", h)
	if h == "" || len(h) > maxHostNameLen {
		return bad
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return bad
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return bad
			}
		}
	}
	return nil
}

// Issue writes a server certificate for req.Hosts and the loopback names, signed by the
// CA in req.Dir, making that CA first when the directory has none. An existing server
// certificate is replaced; a running serve picks the new one up on SIGHUP.
func Issue(req Request) (Issued, error) {
	if req.Rand == nil || req.Now.IsZero() || req.Dir == "" {
		return Issued{}, errors.New("certs: a request needs Dir, Rand and Now")
	}
	names := append(slices.Clone(LoopbackNames), req.Hosts...)
	for _, h := range req.Hosts {
		if err := CheckHost(h); err != nil {
			return Issued{}, err
		}
	}
	if err := os.MkdirAll(req.Dir, 0o700); err != nil {
		return Issued{}, fmt.Errorf("make %s: %w", req.Dir, err)
	}
	out := Issued{
		CA: filepath.Join(req.Dir, CAFile), CAKey: filepath.Join(req.Dir, CAKeyFile),
		Server: filepath.Join(req.Dir, ServerFile), ServerKey: filepath.Join(req.Dir, ServerKeyFile),
	}
	ca, caKey, err := loadCA(out.CA, out.CAKey)
	if errors.Is(err, os.ErrNotExist) {
		out.NewCA = true
		ca, caKey, err = makeCA(req, out.CA, out.CAKey)
	}
	if err != nil {
		return Issued{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), req.Rand)
	if err != nil {
		return Issued{}, fmt.Errorf("make the server key: %w", err)
	}
	tmpl, err := template(req, "docket serve")
	if err != nil {
		return Issued{}, err
	}
	tmpl.NotAfter = req.Now.Add(ServerLifetime)
	if tmpl.NotAfter.After(ca.NotAfter) {
		tmpl.NotAfter = ca.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(n)
		if seen[n] {
			continue
		}
		seen[n] = true
		out.Names = append(out.Names, n)
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(req.Rand, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return Issued{}, fmt.Errorf("sign the server certificate: %w", err)
	}
	keyPEM, err := keyPEM(key)
	if err != nil {
		return Issued{}, err
	}
	// The key first: a serve reloading between the two writes then fails to load a
	// mismatched pair and keeps the one it has.
	if err := writeFile(out.ServerKey, keyPEM, privateMode); err != nil {
		return Issued{}, err
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	if err := writeFile(out.Server, chain, publicMode); err != nil {
		return Issued{}, err
	}
	out.NotAfter = tmpl.NotAfter
	return out, nil
}

// template is a certificate's common part: a random serial, the subject and the start of
// its validity.
func template(req Request, cn string) (*x509.Certificate, error) {
	serial, err := rand128(req.Rand)
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"Docket"}},
		NotBefore:             req.Now.Add(-backdate),
		BasicConstraintsValid: true,
	}, nil
}

func rand128(r io.Reader) (*big.Int, error) {
	b := make([]byte, serialBits/8)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("make a serial number: %w", err)
	}
	b[0] &= 0x7f // positive, as RFC 5280 wants
	return new(big.Int).SetBytes(b), nil
}

// makeCA makes the CA: a P-256 key that may sign server certificates and nothing below
// them (path length zero).
func makeCA(req Request, certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), req.Rand)
	if err != nil {
		return nil, nil, fmt.Errorf("make the CA key: %w", err)
	}
	tmpl, err := template(req, "Docket local CA")
	if err != nil {
		return nil, nil, err
	}
	tmpl.NotAfter = req.Now.Add(CALifetime)
	tmpl.IsCA = true
	tmpl.MaxPathLenZero = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(req.Rand, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("read back the CA certificate: %w", err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	if err := writeFile(keyPath, kp, privateMode); err != nil {
		return nil, nil, err
	}
	if err := writeFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), publicMode); err != nil {
		return nil, nil, err
	}
	return ca, key, nil
}

// loadCA reads the CA docket cert made before; both files missing is os.ErrNotExist, one
// of them missing is an error naming it.
func loadCA(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	_, cerr := os.Stat(certPath)
	_, kerr := os.Stat(keyPath)
	if errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist) {
		return nil, nil, os.ErrNotExist
	}
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		// %v, not %w: one file missing must not read as no CA at all, which would make
		// a new CA and leave every worker trusting the old one.
		return nil, nil, fmt.Errorf("read the CA in %s and %s (remove both to make a new CA, and give workers the new %s): %v", certPath, keyPath, CAFile, err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("read the CA certificate %s: %w", certPath, err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok || !ca.IsCA {
		return nil, nil, fmt.Errorf("%s is not a CA docket cert made; remove it and %s to make a new CA", certPath, keyPath)
	}
	return ca, signer, nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode a private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// writeFile writes b to path with mode, atomically: a serve reloading never reads half
// a file.
func writeFile(path string, b []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
