package identity

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Token is a bearer credential in clear: a session token, an agent token or a connection
// key. It exists only in memory and in the one response that shows it; the store keeps its
// digest (or, for a connection key, its ciphertext). It logs as a digest prefix only.
type Token string

// secretLen is the number of random bytes in every token (256 bits).
const secretLen = 32

// LogValue keeps the token out of logs: only the kind prefix and a digest prefix appear.
func (t Token) LogValue() slog.Value {
	kind, _, _ := strings.Cut(string(t), "_")
	if p, ok := tokenPrefix(string(t)); ok {
		kind = p
	}
	return slog.GroupValue(slog.String("kind", kind), slog.String("sha256", digestPrefix(t.digest())))
}

// String returns the token in clear, for the one response that shows it.
func (t Token) String() string { return string(t) }

// digest is what the store keeps of a token.
func (t Token) digest() []byte {
	d := sha256.Sum256([]byte(t))
	return d[:]
}

func tokenPrefix(s string) (string, bool) {
	for _, p := range []string{contract.PrefixSession, contract.PrefixAgent, contract.PrefixConnection, contract.PrefixDelegate, contract.PrefixHook} {
		if strings.HasPrefix(s, p) {
			return p, true
		}
	}
	return "", false
}

// digestPrefix is the part of a digest that logs may carry: enough to tell tokens apart,
// too little to matter.
func digestPrefix(d []byte) string {
	if len(d) > 6 {
		d = d[:6]
	}
	return hex.EncodeToString(d)
}

// newSecret returns secretLen random bytes from r in unpadded base64url.
func newSecret(r io.Reader) (string, error) {
	b := make([]byte, secretLen)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newID mints an id with prefix and 64 random bits in hex.
func NewID(r io.Reader, prefix string) (string, error) {
	b := make([]byte, 8)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(b), nil
}

// validSecret reports whether s is an unpadded base64url encoding of secretLen bytes.
func validSecret(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == secretLen
}
