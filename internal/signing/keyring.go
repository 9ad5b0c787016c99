// Package signing holds an installation's Ed25519 signing keys and what they sign: a
// keyring file (0600, apart from the installation key) whose newest key signs and whose
// older keys are kept, after a rotation, so that what they signed still verifies; the
// public keys as a JWK set (RFC 7517, key ids the RFC 7638 thumbprints); and signed
// checkpoints of a project's log head, which a third party checks with the public keys
// alone (docs/provability.md).
package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docketrun/docket/internal/datadir"
)

// FileName is the keyring's file in the data dir.
const FileName = "signing.key"

// Keyring is an installation's signing keys, oldest first; the last one signs.
type Keyring struct {
	keys []key
}

type key struct {
	created time.Time
	priv    ed25519.PrivateKey
	id      string
}

// PublicKey is one public key of a keyring, by its key id.
type PublicKey struct {
	ID      string
	Key     ed25519.PublicKey
	Created time.Time
}

// keyFile is the keyring file's form.
type keyFile struct {
	Keys []keyEntry `json:"keys"`
}

type keyEntry struct {
	Created time.Time `json:"created"`
	Seed    string    `json:"seed"` // base64url of the 32-byte Ed25519 seed
}

// Generate returns a keyring of one new key from random.
func Generate(random io.Reader, now time.Time) (*Keyring, error) {
	k := &Keyring{}
	if err := k.Rotate(random, now); err != nil {
		return nil, err
	}
	return k, nil
}

// Rotate adds a new key, which signs from now on; the older keys are kept for verifying.
func (k *Keyring) Rotate(random io.Reader, now time.Time) error {
	_, priv, err := ed25519.GenerateKey(random)
	if err != nil {
		return fmt.Errorf("generate signing key: %w", err)
	}
	k.keys = append(k.keys, key{created: now.UTC().Round(0), priv: priv, id: Thumbprint(priv.Public().(ed25519.PublicKey))})
	return nil
}

// Load reads the keyring at path, refusing a file others may read.
func Load(path string) (*Keyring, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read signing keys: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("read signing keys: %s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read signing keys: %w", err)
	}
	var f keyFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("read signing keys %s: %w", path, err)
	}
	if len(f.Keys) == 0 {
		return nil, fmt.Errorf("read signing keys %s: the file holds no key", path)
	}
	k := &Keyring{}
	for i, e := range f.Keys {
		seed, err := base64.RawURLEncoding.DecodeString(e.Seed)
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("read signing keys %s: key %d is not a %d-byte seed", path, i+1, ed25519.SeedSize)
		}
		priv := ed25519.NewKeyFromSeed(seed)
		k.keys = append(k.keys, key{created: e.Created, priv: priv, id: Thumbprint(priv.Public().(ed25519.PublicKey))})
	}
	return k, nil
}

// LoadOrCreate reads the keyring at path, creating it with one new key when there is
// none (a data dir made before signing keys existed); created says which.
func LoadOrCreate(path string, random io.Reader, now time.Time) (k *Keyring, created bool, err error) {
	k, err = Load(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return k, false, err
	}
	if k, err = Generate(random, now); err != nil {
		return nil, false, err
	}
	if err := k.Save(path); err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// Save writes the keyring to path, readable by its owner only.
func (k *Keyring) Save(path string) error {
	f := keyFile{}
	for _, e := range k.keys {
		f.Keys = append(f.Keys, keyEntry{Created: e.created, Seed: base64.RawURLEncoding.EncodeToString(e.priv.Seed())})
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode signing keys: %w", err)
	}
	if err := datadir.WritePrivate(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write signing keys: %w", err)
	}
	return nil
}

// Public returns the keyring's public keys, oldest first.
func (k *Keyring) Public() []PublicKey {
	out := make([]PublicKey, 0, len(k.keys))
	for _, e := range k.keys {
		out = append(out, PublicKey{ID: e.id, Key: e.priv.Public().(ed25519.PublicKey), Created: e.created})
	}
	return out
}

// KeyID is the id of the key that signs.
func (k *Keyring) KeyID() string { return k.keys[len(k.keys)-1].id }

// sign signs msg with the newest key.
func (k *Keyring) sign(msg []byte) (kid string, sig []byte) {
	e := k.keys[len(k.keys)-1]
	return e.id, ed25519.Sign(e.priv, msg)
}

// Thumbprint is the RFC 7638 JWK thumbprint of pub, base64url without padding: the
// sha256 of {"crv":"Ed25519","kty":"OKP","x":"…"}, members in that order.
func Thumbprint(pub ed25519.PublicKey) string {
	s := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// JWK is one public key of a JWK set (RFC 8037 for Ed25519).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// JWKSet is a JWK set, the form the public keys are printed and served in.
type JWKSet struct {
	Keys []JWK `json:"keys"`
}

// Set returns keys as a JWK set.
func Set(keys []PublicKey) JWKSet {
	s := JWKSet{Keys: []JWK{}}
	for _, k := range keys {
		s.Keys = append(s.Keys, JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.Key), Kid: k.ID, Use: "sig", Alg: "EdDSA"})
	}
	return s
}

// PublicKeys returns the set's keys, refusing one that is not an Ed25519 key whose kid is its
// thumbprint.
func (s JWKSet) PublicKeys() ([]PublicKey, error) {
	var out []PublicKey
	for i, j := range s.Keys {
		x, err := base64.RawURLEncoding.DecodeString(j.X)
		if j.Kty != "OKP" || j.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("key %d of the set is not an Ed25519 public key", i+1)
		}
		if t := Thumbprint(x); t != j.Kid {
			return nil, fmt.Errorf("key %d of the set has kid %q, but its thumbprint is %s", i+1, j.Kid, t)
		}
		out = append(out, PublicKey{ID: j.Kid, Key: x})
	}
	return out, nil
}
