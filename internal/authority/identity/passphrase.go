package identity

import (
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/docketrun/docket/internal/contract"
)

// Argon2id parameters for member passphrases: the OWASP minimum (19 MiB, two passes, one
// lane), chosen so that a login costs tens of milliseconds on a small machine. They are
// written into every hash, so raising them later leaves old hashes verifiable.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// minPassphrase is the shortest passphrase a member may choose, in bytes.
const minPassphrase = contract.MinPassphrase

// hashPassphrase returns the PHC-style encoding of an argon2id hash of p.
func hashPassphrase(r io.Reader, p string) ([]byte, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := io.ReadFull(r, salt); err != nil {
		return nil, fmt.Errorf("read salt: %w", err)
	}
	sum := argon2.IDKey([]byte(p), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Appendf(nil, "$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// checkPassphrase reports whether p matches hash, in time independent of where they differ.
func checkPassphrase(hash []byte, p string) (bool, error) {
	parts := strings.Split(string(hash), "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, fmt.Errorf("passphrase hash: not an argon2id encoding")
	}
	var version int
	var m uint32
	var t uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("passphrase hash: argon2 version %q", parts[2])
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &threads); err != nil {
		return false, fmt.Errorf("passphrase hash: parameters %q: %w", parts[3], err)
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("passphrase hash: salt: %w", err)
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, fmt.Errorf("passphrase hash: sum: %v", err)
	}
	got := argon2.IDKey([]byte(p), salt, t, m, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
