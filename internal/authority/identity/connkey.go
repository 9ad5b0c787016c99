package identity

import (
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// A Connection key is "dkt_con_<connection id>.<secret>": it names its Connection, so
// checking one is a single decryption and a constant-time comparison. This file is the one
// place that writes and reads that form.

// connectionKeyOf returns the key of Connection id with secret.
func connectionKeyOf(id, secret string) Token {
	return Token(contract.PrefixConnection + id + "." + secret)
}

// ParseConnectionKey returns the Connection a key names, or ok false when k is not a
// Connection key.
func ParseConnectionKey(k Token) (id contract.ConnectionID, ok bool) {
	rest, ok := strings.CutPrefix(string(k), contract.PrefixConnection)
	if !ok {
		return "", false
	}
	idText, secret, ok := strings.Cut(rest, ".")
	if !ok || !validSecret(secret) {
		return "", false
	}
	id, err := contract.ParseConnectionID(idText)
	if err != nil {
		return "", false
	}
	return id, true
}
