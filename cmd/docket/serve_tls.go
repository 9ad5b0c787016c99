package main

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/console"
)

// serveDoor is docket serve's front door beyond loopback: its own TLS, or the proxies in
// front of it (docs/deploy.md).
type serveDoor struct {
	TLSCert     string   `name:"tls-cert" help:"Serve https with this certificate chain (PEM; docket cert writes server.pem). Reloaded on SIGHUP." type:"path"`
	TLSKey      string   `name:"tls-key" help:"The certificate's private key (PEM; docket cert writes server.key)." type:"path"`
	BehindProxy []string `name:"behind-proxy" help:"Addresses or CIDR ranges of the TLS reverse proxies in front of serve, whose X-Forwarded-Proto and Forwarded headers are trusted; other peers but loopback are refused." sep:","`
}

// open checks the flags against the listen address and loads the certificate: a listen
// beyond loopback needs TLS or named proxies. kp is nil without TLS.
func (d serveDoor) open(ctx context.Context, listen string) (kp *certs.Keypair, proxies []netip.Prefix, err error) {
	if (d.TLSCert == "") != (d.TLSKey == "") {
		return nil, nil, &usageError{err: errors.New("--tls-cert and --tls-key go together: pass both (docket cert writes server.pem and server.key), or neither"), help: "docket serve"}
	}
	if proxies, err = console.ParseProxies(d.BehindProxy); err != nil {
		return nil, nil, &usageError{err: err, help: "docket serve"}
	}
	if d.TLSCert != "" {
		if kp, err = certs.LoadKeypair(d.TLSCert, d.TLSKey); err != nil {
			return nil, nil, err
		}
	}
	if err := console.CheckListen(ctx, listen, kp != nil, proxies); err != nil {
		return nil, nil, &usageError{err: err, help: "docket serve"}
	}
	return kp, proxies, nil
}

// serverTLS is the listener's TLS configuration, nil without a certificate.
func serverTLS(kp *certs.Keypair) *tls.Config {
	if kp == nil {
		return nil
	}
	return kp.ServerConfig()
}

// listenURL is the URL serve writes into the data dir for the CLI and the children of
// this machine: https over its own TLS, and a loopback address when it listens on every
// interface, since that is the address its certificate and Host check know here.
func listenURL(addr net.Addr, overTLS bool) string {
	scheme := "http://"
	if overTLS {
		scheme = "https://"
	}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		return scheme + net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port))
	}
	return scheme + addr.String()
}

// reloadOnHUP reloads kp on each SIGHUP until the returned stop is called; without TLS
// it does nothing, and SIGHUP keeps its default action.
func reloadOnHUP(ctx context.Context, kp *certs.Keypair, log *slog.Logger) (stop func()) {
	if kp == nil {
		return func() {}
	}
	l := kp.Leaf()
	log.Info("TLS certificate loaded", logSubject, l.Subject.CommonName, logNotAfter, l.NotAfter.Format(time.RFC3339))
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { kp.Watch(ctx, hup, log) })
	return func() { signal.Stop(hup); cancel(); wg.Wait() }
}
