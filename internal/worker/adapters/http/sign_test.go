package http_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/worker"
	httpadapter "github.com/docketrun/docket/internal/worker/adapters/http"
)

// TestAdapter_SignsRequests: an http Source with "sign": true sends each request signed
// per RFC 9421 with its keyring: a verifier written here, sharing no code with the signer,
// fetches the published key directory, parses Signature-Input, rebuilds the signature
// base from the request the real listener received and accepts it; it refuses the request
// after any covered component or parameter changes, and after it expires.
func TestAdapter_SignsRequests(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	keys, err := signing.Generate(rand.Reader, at)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(t.TempDir(), "worker-signing.key")
	if err := keys.Save(keyPath); err != nil {
		t.Fatal(err)
	}
	dir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/http-message-signatures-directory" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/http-message-signatures-directory+json")
		json.NewEncoder(w).Encode(signing.Set(keys.Public()))
	}))
	t.Cleanup(dir.Close)
	agent := dir.URL + "/.well-known/http-message-signatures-directory"

	var (
		mu       sync.Mutex
		received *http.Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received = r.Clone(r.Context())
		received.Header = r.Header.Clone()
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)

	vault, err := worker.ParseVault(fmt.Appendf(nil, `{"sources": {"api": {"type": "http", "url": %q, "sign": true, "signingKey": %q, "signatureAgent": %q}}}`,
		srv.URL+"/api", keyPath, agent))
	if err != nil {
		t.Fatal(err)
	}
	src, _ := vault.Source("api")
	a := &httpadapter.Adapter{Now: func() time.Time { return at }}
	def := worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: "GET /items", Kind: contract.ToolKindRead, Params: map[string]worker.Param{}}
	out, err := a.Execute(t.Context(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: contract.Args{}})
	if out.Status != worker.StatusOK {
		t.Fatalf("Execute = %+v (%v), want ok", out, err)
	}
	mu.Lock()
	got := received
	mu.Unlock()
	if got == nil {
		t.Fatal("the listener received no request")
	}
	jwks := fetch(t, agent)
	if err := verify(got, jwks, at); err != nil {
		t.Fatalf("the verifier refused the signed request: %v\nSignature-Input: %s", err, got.Header.Get("Signature-Input"))
	}
	if in := got.Header.Get("Signature-Input"); !strings.Contains(in, `("@authority" "signature-agent")`) || !strings.Contains(in, `;keyid="`+keys.KeyID()+`"`) {
		t.Errorf("Signature-Input = %s, want @authority and signature-agent covered, keyid the key's thumbprint", in)
	}

	replace := func(field, old, new string) func(r *http.Request) {
		return func(r *http.Request) { r.Header.Set(field, strings.Replace(r.Header.Get(field), old, new, 1)) }
	}
	input := got.Header.Get("Signature-Input")
	param := func(name string) string {
		_, rest, _ := strings.Cut(input, ";"+name+"=")
		v, _, _ := strings.Cut(rest, ";")
		return v
	}
	tests := []struct {
		name   string
		change func(r *http.Request)
	}{
		{"authority", func(r *http.Request) { r.Host = "elsewhere.example" }},
		{"signature-agent", func(r *http.Request) {
			r.Header.Set("Signature-Agent", `"https://evil.example/.well-known/http-message-signatures-directory"`)
		}},
		{"created", replace("Signature-Input", "created="+param("created"), "created=1")},
		{"expires", replace("Signature-Input", "expires="+param("expires"), "expires=9999999999")},
		{"nonce", replace("Signature-Input", "nonce="+param("nonce"), `nonce="AAAA"`)},
		{"keyid", replace("Signature-Input", "keyid="+param("keyid"), `keyid="other"`)},
		{"signature", replace("Signature", ":", ":AA")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := got.Clone(t.Context())
			r.Header = got.Header.Clone()
			tt.change(r)
			if err := verify(r, jwks, at); err == nil {
				t.Errorf("the verifier accepted the request after its %s changed", tt.name)
			}
		})
	}
	if err := verify(got, jwks, at.Add(httpadapter.SignatureLife+time.Second)); err == nil {
		t.Error("the verifier accepted the request after it expired")
	}

	// A second request carries a new nonce.
	first := param("nonce")
	if _, err := a.Execute(t.Context(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: contract.Args{}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	again := received.Header.Get("Signature-Input")
	mu.Unlock()
	if strings.Contains(again, "nonce="+first) {
		t.Errorf("two requests share the nonce %s", first)
	}
}

// TestAdapter_SignRefusals: a signing Source whose keyring does not load refuses the call
// without sending it; the vault refuses sign without a key path or a directory URL.
func TestAdapter_SignRefusals(t *testing.T) {
	sent := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent = true }))
	t.Cleanup(srv.Close)
	vault, err := worker.ParseVault(fmt.Appendf(nil, `{"sources": {"api": {"type": "http", "url": %q, "sign": true, "signingKey": %q, "signatureAgent": "https://d.example/.well-known/http-message-signatures-directory"}}}`,
		srv.URL, filepath.Join(t.TempDir(), "missing.key")))
	if err != nil {
		t.Fatal(err)
	}
	src, _ := vault.Source("api")
	def := worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: "GET /items", Kind: contract.ToolKindRead, Params: map[string]worker.Param{}}
	out, _ := (&httpadapter.Adapter{}).Execute(t.Context(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: contract.Args{}})
	if out.Status != worker.StatusRefused || out.Code != contract.CodeVaultInvalid || sent {
		t.Errorf("Execute = %+v (sent %v), want refused with vault_invalid and nothing sent", out, sent)
	}
	for _, v := range []string{
		`{"sources": {"api": {"type": "http", "url": "https://a.example", "sign": true, "signatureAgent": "https://d.example/dir"}}}`,
		`{"sources": {"api": {"type": "http", "url": "https://a.example", "sign": true, "signingKey": "/k"}}}`,
		`{"sources": {"api": {"type": "http", "url": "https://a.example", "signingKey": "/k"}}}`,
		`{"sources": {"db": {"type": "db", "dsn": "sqlite:/x", "sign": true}}}`,
	} {
		if _, err := worker.ParseVault([]byte(v)); err == nil {
			t.Errorf("ParseVault(%s) = nil, want a refusal", v)
		}
	}
}

// fetch returns the body at url.
func fetch(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s, %v", url, resp.StatusCode, b, err)
	}
	return b
}

// verify is an RFC 9421 verifier written for this test: it parses the one Signature-Input
// member, rebuilds the signature base from r, checks the validity window at now and the
// Ed25519 signature with the directory's key the keyid names.
func verify(r *http.Request, jwks []byte, now time.Time) error {
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
	created, err1 := strconv.ParseInt(params["created"], 10, 64)
	expires, err2 := strconv.ParseInt(params["expires"], 10, 64)
	if err1 != nil || err2 != nil || params["nonce"] == "" {
		return errors.New("created, expires and nonce are required")
	}
	if now.Unix() < created || now.Unix() > expires {
		return errors.New("outside the signature's validity")
	}
	var lines []string
	for _, c := range comps {
		var v string
		switch c {
		case "@authority":
			v = strings.ToLower(r.Host)
		case "signature-agent":
			v = strings.TrimSpace(r.Header.Get(c))
		default:
			return fmt.Errorf("component %s not expected", c)
		}
		lines = append(lines, fmt.Sprintf("%q: %s", c, v))
	}
	lines = append(lines, `"@signature-params": `+input)
	base := strings.Join(lines, "\n")
	field := r.Header.Get("Signature")
	prefix := label + "=:"
	if !strings.HasPrefix(field, prefix) || !strings.HasSuffix(field, ":") {
		return errors.New("no signature for the label")
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(field, prefix), ":"))
	if err != nil {
		return err
	}
	var set struct {
		Keys []struct{ Kty, Crv, Kid, X string }
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return err
	}
	for _, k := range set.Keys {
		if k.Kid != params["keyid"] || k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return errors.New("bad key")
		}
		if !ed25519.Verify(x, []byte(base), sig) {
			return errors.New("the signature does not verify")
		}
		return nil
	}
	return errors.New("no key for the keyid")
}
