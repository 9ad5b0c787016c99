package authority

import (
	"io"

	"github.com/docketrun/docket/internal/authority/identity"
)

// The principals and credentials live in package identity; these names keep the callers
// of the facade unchanged.
type (
	Caller    = identity.Caller
	Token     = identity.Token
	Key       = identity.Key
	Bootstrap = identity.Bootstrap
	Session   = identity.Session
)

// NewKey returns a key read from r (crypto/rand.Reader in production).
func NewKey(r io.Reader) (Key, error) { return identity.NewKey(r) }

// WriteKeyFile writes k to path with mode 0600; see [identity.WriteKeyFile].
func WriteKeyFile(path string, k Key) error { return identity.WriteKeyFile(path, k) }

// ReadKeyFile reads the key written by [WriteKeyFile]; see [identity.ReadKeyFile].
func ReadKeyFile(path string) (Key, error) { return identity.ReadKeyFile(path) }
