package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/failover"
)

// clientTrust is what this process trusts of a serve over https (docs/deploy.md): the CA
// file ca names (a --ca flag), else $DOCKET_CA, else the ca.pem docket cert wrote into
// the data dir dir when there is one, else the system's roots.
func clientTrust(e *env, dir, ca string) (*certs.Trust, error) {
	if ca == "" {
		ca = e.Getenv(certs.CAEnv)
	}
	if ca == "" && dir != "" {
		p := filepath.Join(dir, tlsDir, certs.CAFile)
		if _, err := os.Stat(p); err == nil {
			ca = p
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return certs.LoadTrust(ca)
}

// serveTarget is the serve a worker or a runtime reaches and what it trusts of it: url,
// else $DOCKET_URL, else the data dir's url file; and [clientTrust] of ca.
func serveTarget(e *env, url, ca string) (string, *certs.Trust, error) {
	dir, err := dataDir(e)
	if err != nil {
		return "", nil, err
	}
	if url == "" {
		if url, err = serverURL(e, dir); err != nil {
			return "", nil, err
		}
	}
	trust, err := clientTrust(e, dir, ca)
	return url, trust, err
}

// parseServes reads the serve URLs a worker was given, comma separated (docs/deploy.md,
// "PostgreSQL with several serves"); log says each move to the next serve.
func parseServes(list string, log *slog.Logger) (*failover.Serves, error) {
	urls, err := failover.Parse(list)
	if err != nil {
		return nil, err
	}
	return failover.New(urls, log)
}
