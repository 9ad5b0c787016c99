package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// HTTP message signatures (RFC 9421) with Ed25519, written on the standard library: the
// signature base (§2.5) of a request's covered components and its signature parameters,
// serialized as RFC 8941 structured fields, and the Signature-Input and Signature fields
// that carry them. The key id of an outbound signature is the key's [Thumbprint].

// SignatureParams are a signature's covered components and parameters (RFC 9421 §2.3).
// Zero parameters are left out; the ones set are serialized in the order of the fields.
type SignatureParams struct {
	Components []string // e.g. "@method", "@authority", "signature-agent"; lower case
	Created    int64    // Unix seconds
	Expires    int64    // Unix seconds
	Nonce      string
	Alg        string // "ed25519" when set
	KeyID      string
	Tag        string
}

// String is the parameters as the inner list of @signature-params (RFC 8941 §4.1.1.1).
func (p SignatureParams) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range p.Components {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sfString(c))
	}
	b.WriteByte(')')
	if p.Created != 0 {
		b.WriteString(";created=" + strconv.FormatInt(p.Created, 10))
	}
	if p.Expires != 0 {
		b.WriteString(";expires=" + strconv.FormatInt(p.Expires, 10))
	}
	for _, kv := range [][2]string{{"nonce", p.Nonce}, {"alg", p.Alg}, {"keyid", p.KeyID}, {"tag", p.Tag}} {
		if kv[1] != "" {
			b.WriteString(";" + kv[0] + "=" + sfString(kv[1]))
		}
	}
	return b.String()
}

// sfString serializes s as an RFC 8941 §4.1.6 string.
func sfString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// SignatureBase is the signature base (RFC 9421 §2.5) of r for p: one line per covered
// component, then the @signature-params line, lines separated by "\n" with none after
// the last.
func SignatureBase(r *http.Request, p SignatureParams) ([]byte, error) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, c := range p.Components {
		if seen[c] {
			return nil, fmt.Errorf("component %s is covered twice", c)
		}
		seen[c] = true
		v, err := componentValue(r, c)
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("component %s holds a line break", c)
		}
		b.WriteString(sfString(c) + ": " + v + "\n")
	}
	b.WriteString(`"@signature-params": ` + p.String())
	return []byte(b.String()), nil
}

// componentValue is the value of one covered component of r (RFC 9421 §2.1, §2.2).
func componentValue(r *http.Request, c string) (string, error) {
	switch c {
	case "@method":
		return r.Method, nil
	case "@authority":
		return authority(r), nil
	case "@scheme":
		return strings.ToLower(r.URL.Scheme), nil
	case "@path":
		if p := r.URL.EscapedPath(); p != "" {
			return p, nil
		}
		return "/", nil
	case "@query":
		return "?" + r.URL.RawQuery, nil
	case "@target-uri":
		return r.URL.String(), nil
	}
	if strings.HasPrefix(c, "@") || c != strings.ToLower(c) {
		return "", fmt.Errorf("component %s is not supported", c)
	}
	vs, ok := r.Header[http.CanonicalHeaderKey(c)]
	if !ok {
		return "", fmt.Errorf("the request has no %s field to cover", c)
	}
	trimmed := make([]string, len(vs))
	for i, v := range vs {
		trimmed[i] = strings.TrimSpace(v)
	}
	return strings.Join(trimmed, ", "), nil
}

// authority is r's host, lower case, without the scheme's default port (RFC 9421 §2.2.3).
func authority(r *http.Request) string {
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		scheme := strings.ToLower(r.URL.Scheme)
		if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
			return h
		}
	}
	return host
}

// SignRequest signs r under label with priv, per p, and adds its Signature-Input and
// Signature fields.
func SignRequest(r *http.Request, label string, priv ed25519.PrivateKey, p SignatureParams) error {
	if label == "" || strings.ContainsAny(label, ` ,;="()`) || label != strings.ToLower(label) {
		return errors.New("a signature label is a lower-case token")
	}
	base, err := SignatureBase(r, p)
	if err != nil {
		return fmt.Errorf("sign request: %w", err)
	}
	sig := ed25519.Sign(priv, base)
	r.Header.Add("Signature-Input", label+"="+p.String())
	r.Header.Add("Signature", label+"=:"+base64.StdEncoding.EncodeToString(sig)+":")
	return nil
}

// SignRequest signs r under label with the keyring's newest key, per p with its key id
// set to that key's [Thumbprint], and adds its Signature-Input and Signature fields.
func (k *Keyring) SignRequest(r *http.Request, label string, p SignatureParams) error {
	e := k.keys[len(k.keys)-1]
	p.KeyID = e.id
	return SignRequest(r, label, e.priv, p)
}
