package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// Keypair is serve's certificate and key, read from two files and read again on
// [Keypair.Reload]: handshakes after a reload present the new certificate, while
// connections already open keep theirs and the listener is never closed. It is safe for
// concurrent use.
type Keypair struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// LoadKeypair reads the certificate chain in certFile and its key in keyFile.
func LoadKeypair(certFile, keyFile string) (*Keypair, error) {
	k := &Keypair{certFile: certFile, keyFile: keyFile}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload reads both files again. A pair that does not load (a missing file, a key that
// is not the certificate's) is an error and leaves the pair in use as it was.
func (k *Keypair) Reload() error {
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("load the TLS certificate %s with its key %s: %w", k.certFile, k.keyFile, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return fmt.Errorf("read the TLS certificate %s: %w", k.certFile, err)
		}
	}
	k.cur.Store(&c)
	return nil
}

// Leaf is the certificate in use.
func (k *Keypair) Leaf() *x509.Certificate { return k.cur.Load().Leaf }

// GetCertificate is [tls.Config.GetCertificate]: the pair in use at each handshake.
func (k *Keypair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return k.cur.Load(), nil
}

// ServerConfig is the TLS configuration of serve's listener: TLS 1.2 at least, and the
// certificate of [Keypair.GetCertificate].
func (k *Keypair) ServerConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: k.GetCertificate}
}

// Watch reloads the pair on each signal from hup (serve's SIGHUP) until ctx ends,
// logging what it loaded or why it kept the pair in use.
func (k *Keypair) Watch(ctx context.Context, hup <-chan os.Signal, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		if err := k.Reload(); err != nil {
			log.ErrorContext(ctx, "TLS certificate not reloaded; the one in use stays", logErr, err)
			continue
		}
		l := k.Leaf()
		log.InfoContext(ctx, "TLS certificate reloaded", logSubject, l.Subject.CommonName, logSerial, l.SerialNumber.Text(16), logNotAfter, l.NotAfter.Format(time.RFC3339))
	}
}
