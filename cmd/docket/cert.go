package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/certs"
)

// certCmd makes a small local CA and a server certificate for a team's first install
// beyond one machine (docs/deploy.md): serve takes the certificate, and workers, the CLI
// and runtimes on other machines take the CA.
type certCmd struct {
	Host []string `help:"A DNS name or IP address people and workers reach serve at (repeat, or separate with commas); localhost, 127.0.0.1 and ::1 are always in." required:"" sep:","`
	Dir  string   `help:"Where to write ca.pem, ca.key, server.pem and server.key (default $DOCKET_HOME/tls). A CA already there signs the new certificate." type:"path"`
}

func (c *certCmd) Run(_ context.Context, e *env) error {
	dir := c.Dir
	if dir == "" {
		d, err := dataDir(e)
		if err != nil {
			return err
		}
		dir = filepath.Join(d, tlsDir)
	}
	for _, h := range c.Host {
		if err := certs.CheckHost(h); err != nil {
			return &usageError{err: err}
		}
	}
	out, err := certs.Issue(certs.Request{Dir: dir, Hosts: c.Host, Rand: rand.Reader, Now: time.Now()})
	if err != nil {
		return err
	}
	if out.NewCA {
		fmt.Fprintf(e.Stdout, "made a CA: %s (its key %s, 0600, stays on this machine)\n", out.CA, out.CAKey)
	} else {
		fmt.Fprintf(e.Stdout, "signed with the CA already in %s\n", out.CA)
	}
	fmt.Fprintf(e.Stdout, "server certificate %s, key %s (0600), for %s, until %s\n\n",
		out.Server, out.ServerKey, strings.Join(out.Names, ", "), out.NotAfter.Format(time.DateOnly))
	fmt.Fprintf(e.Stdout, "serve:   docket serve --listen 0.0.0.0:7420 --tls-cert %s --tls-key %s --host %s\n", out.Server, out.ServerKey, c.Host[0])
	fmt.Fprintf(e.Stdout, "         (a running serve takes a new certificate on SIGHUP)\n")
	fmt.Fprintf(e.Stdout, "give other machines %s, never the keys:\n", out.CA)
	at := net.JoinHostPort(c.Host[0], "7420")
	fmt.Fprintf(e.Stdout, "  docket login --url https://%s --ca ca.pem --member NAME\n", at)
	fmt.Fprintf(e.Stdout, "  docket worker --url https://%s --ca ca.pem --manifest … --vault … --key-file …\n", at)
	_, err = fmt.Fprintf(e.Stdout, "  docket agent serve --url https://%s/mcp --ca ca.pem --token-file …\n", at)
	return err
}

// tlsDir is where docket cert writes by default, under the data dir; a client of this
// data dir trusts the ca.pem there when given no --ca.
const tlsDir = "tls"
