package grant_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func hmacSum(key, b []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil)
}

// flip changes the first character of a base64url string to another valid one.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}
