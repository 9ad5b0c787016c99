package signing_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/signing"
)

// rfcKey is test-key-ed25519 of RFC 9421 §B.1.4.
const rfcKey = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n"

func rfcPrivate(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	blk, _ := pem.Decode([]byte(rfcKey))
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(ed25519.PrivateKey)
}

// rfcRequest is the test-request of RFC 9421 §B.2.
func rfcRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:")
	r.Header.Set("Content-Length", "18")
	return r
}

// TestSignRequest_RFC9421Example reproduces §B.2.6 byte for byte: the signature base,
// Signature-Input and Signature.
func TestSignRequest_RFC9421Example(t *testing.T) {
	t.Parallel()
	r := rfcRequest(t)
	p := signing.SignatureParams{Components: []string{"date", "@method", "@path", "@authority", "content-type", "content-length"},
		Created: 1618884473, KeyID: "test-key-ed25519"}
	base, err := signing.SignatureBase(r, p)
	if err != nil {
		t.Fatal(err)
	}
	wantBase := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if diff := cmp.Diff(wantBase, string(base)); diff != "" {
		t.Errorf("signature base (-want +got):\n%s", diff)
	}
	if err := signing.SignRequest(r, "sig-b26", rfcPrivate(t), p); err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"Signature-Input": {`sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`},
		"Signature":       {`sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`},
	}
	got := http.Header{"Signature-Input": r.Header["Signature-Input"], "Signature": r.Header["Signature"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("signature fields (-want +got):\n%s", diff)
	}
}

// TestSignRequest_SeparateVerifier signs as an outbound request would be (@authority and
// signature-agent, created, expires, nonce, the key's thumbprint as keyid) and checks it
// with a verifier written here apart from the signer: it accepts the request and refuses
// it after any covered component or parameter changes.
func TestSignRequest_SeparateVerifier(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := json.Marshal(signing.Set([]signing.PublicKey{{ID: signing.Thumbprint(pub), Key: pub}}))
	if err != nil {
		t.Fatal(err)
	}
	signed := func() *http.Request {
		r, err := http.NewRequest(http.MethodGet, "https://api.example.com:443/v1/items", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Signature-Agent", `"https://docket.example/.well-known/http-message-signatures-directory"`)
		p := signing.SignatureParams{Components: []string{"@authority", "signature-agent"}, Created: 1700000000, Expires: 1700000060,
			Nonce: "bm9uY2U", KeyID: signing.Thumbprint(pub), Tag: "web-bot-auth"}
		if err := signing.SignRequest(r, "sig1", priv, p); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := verifySeparately(signed(), jwks); err != nil {
		t.Fatalf("the separate verifier refused a signed request: %v", err)
	}
	tests := []struct {
		name   string
		change func(r *http.Request)
	}{
		{"authority", func(r *http.Request) { r.Host = "evil.example.com" }},
		{"signature-agent", func(r *http.Request) {
			r.Header.Set("Signature-Agent", `"https://evil.example/.well-known/http-message-signatures-directory"`)
		}},
		{"created", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), "created=1700000000", "created=1700000001", 1))
		}},
		{"expires", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), "expires=1700000060", "expires=1800000060", 1))
		}},
		{"nonce", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), `nonce="bm9uY2U"`, `nonce="other"`, 1))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signed()
			tt.change(r)
			if err := verifySeparately(r, jwks); err == nil {
				t.Errorf("the verifier accepted the request after its %s changed", tt.name)
			}
		})
	}
}

// verifySeparately is a verifier that shares no code with the signer: it parses the one
// Signature-Input member, rebuilds the signature base from the request, and checks the
// signature with the key of the JWK set its keyid names.
func verifySeparately(r *http.Request, jwks []byte) error {
	label, input, ok := strings.Cut(r.Header.Get("Signature-Input"), "=")
	if !ok || !strings.HasPrefix(input, "(") {
		return errors.New("no signature input")
	}
	end := strings.Index(input, ")")
	var comps []string
	for _, item := range strings.Fields(input[1:end]) {
		c, err := strconv.Unquote(item)
		if err != nil {
			return err
		}
		comps = append(comps, c)
	}
	params := map[string]string{}
	for _, kv := range strings.Split(input[end+1:], ";")[1:] {
		k, v, _ := strings.Cut(kv, "=")
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		params[k] = v
	}
	var lines []string
	for _, c := range comps {
		var v string
		switch c {
		case "@authority":
			v = strings.TrimSuffix(strings.ToLower(r.Host), ":443")
		default:
			v = strings.TrimSpace(r.Header.Get(c))
		}
		lines = append(lines, fmt.Sprintf("%q: %s", c, v))
	}
	lines = append(lines, `"@signature-params": `+input)
	base := strings.Join(lines, "\n")

	sigField := r.Header.Get("Signature")
	prefix := label + "=:"
	if !strings.HasPrefix(sigField, prefix) || !strings.HasSuffix(sigField, ":") {
		return errors.New("no signature for the label")
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(sigField, prefix), ":"))
	if err != nil {
		return err
	}
	var set struct {
		Keys []struct{ Kid, X string }
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return err
	}
	for _, k := range set.Keys {
		if k.Kid != params["keyid"] {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil {
			return err
		}
		if !ed25519.Verify(x, []byte(base), sig) {
			return errors.New("the signature does not verify")
		}
		return nil
	}
	return errors.New("no key for the keyid")
}
