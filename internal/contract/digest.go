package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// Digest is a SHA-256 digest. Its text form — on the wire, in events and in every
// request a person decides — is "sha256:" followed by 64 lowercase hex digits, and
// [ParseDigest] reads exactly that form, so two spellings of one digest cannot exist.
type Digest [sha256.Size]byte

// digestPrefix names the hash in a digest's text form.
const digestPrefix = "sha256:"

// Sum returns the digest of b.
func Sum(b []byte) Digest { return sha256.Sum256(b) }

// SumOf returns the digest h has accumulated; h must be a SHA-256 hash.
func SumOf(h hash.Hash) Digest {
	var d Digest
	copy(d[:], h.Sum(nil))
	return d
}

// DigestFrom returns the digest whose raw bytes are b, as a store keeps them. Any length
// but 32 is an error: a digest cut short would name no content at all.
func DigestFrom(b []byte) (Digest, error) {
	var d Digest
	if len(b) != len(d) {
		return Digest{}, fmt.Errorf("digest of %d bytes, want %d", len(b), len(d))
	}
	copy(d[:], b)
	return d, nil
}

// ParseDigest reads "sha256:" and 64 lowercase hex digits.
func ParseDigest(s string) (Digest, error) {
	h, ok := strings.CutPrefix(s, digestPrefix)
	if !ok || len(h) != 2*sha256.Size || strings.ToLower(h) != h {
		return Digest{}, fmt.Errorf("digest %.80q is not %q followed by 64 lowercase hex digits", s, digestPrefix)
	}
	var d Digest
	if _, err := hex.Decode(d[:], []byte(h)); err != nil {
		return Digest{}, fmt.Errorf("digest %.80q: %w", s, err)
	}
	return d, nil
}

// String returns the text form, "sha256:" and 64 lowercase hex digits.
func (d Digest) String() string { return digestPrefix + hex.EncodeToString(d[:]) }

// Hex returns the 64 lowercase hex digits without the "sha256:" prefix.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// MarshalText encodes the text form.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes the text form strictly, as [ParseDigest] does.
func (d *Digest) UnmarshalText(b []byte) error {
	v, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
