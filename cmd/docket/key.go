package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/docketrun/docket/internal/signing"
)

// Where docket serve publishes the installation's public signing keys: as a JWK set, and
// as the key directory of HTTP message signatures (the same set, under its own media type).
const (
	jwksPath      = "/.well-known/jwks.json"
	directoryPath = "/.well-known/http-message-signatures-directory"
)

// keyCmd prints and rotates the installation's signing keys (docs/provability.md).
type keyCmd struct {
	Public keyPublicCmd `cmd:"" help:"Print the public signing keys as a JWK set (also served at /.well-known/jwks.json)."`
	Rotate keyRotateCmd `cmd:"" help:"Add a new signing key; the old public keys are kept so what they signed still verifies."`
}

type keyPublicCmd struct{}

func (keyPublicCmd) Run(e *env) error {
	k, err := loadSigner(e)
	if err != nil {
		return err
	}
	return printJSON(e.Stdout, signing.Set(k.Public()))
}

type keyRotateCmd struct{}

func (keyRotateCmd) Run(e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, signing.FileName)
	k, err := signing.Load(path)
	if err != nil {
		return err
	}
	if err := k.Rotate(rand.Reader, time.Now()); err != nil {
		return err
	}
	if err := k.Save(path); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "signing key %s now signs; %d public keys kept (restart docket serve to sign with it)\n", k.KeyID(), len(k.Public()))
	return err
}

// loadSigner reads the data dir's signing keys.
func loadSigner(e *env) (*signing.Keyring, error) {
	dir, err := dataDir(e)
	if err != nil {
		return nil, err
	}
	k, err := signing.Load(filepath.Join(dir, signing.FileName))
	if err != nil {
		return nil, fmt.Errorf("%w (docket init or a first docket serve creates it)", err)
	}
	return k, nil
}

// jwksHandler serves keys as a JWK set, as contentType.
func jwksHandler(keys []signing.PublicKey, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(signing.Set(keys))
		if err != nil {
			http.Error(w, "encode keys", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		if _, err := w.Write(b); err != nil {
			return // the client went away
		}
	})
}

// directoryHandler serves the HTTP message signatures directory: the installation's
// public keys and those of the bound Sources that sign their requests, read per request.
func directoryHandler(keys func(context.Context) ([]signing.PublicKey, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ks, err := keys(r.Context())
		if err != nil {
			http.Error(w, "read the key directory", http.StatusInternalServerError)
			return
		}
		jwksHandler(ks, "application/http-message-signatures-directory+json").ServeHTTP(w, r)
	})
}
