package grant_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the expected parts of the vectors in ../contract/testdata/grant/")

// vector is one test vector: inputs, then the outputs every implementation must reproduce
// byte for byte.
type vector struct {
	Comment  string          `json:"comment"`
	Key      string          `json:"key"`
	Args     json.RawMessage `json:"args"`
	Target   json.RawMessage `json:"target"`
	ToolSpec json.RawMessage `json:"toolSpec"`
	Grant    contract.Grant  `json:"grant"` // requestDigest is filled from the inputs

	RequestDigest string `json:"wantRequestDigest"`
	JCS           string `json:"wantJCS"`
	Token         string `json:"wantToken"`
}

const vectorDir = "../contract/testdata/grant"

func readVectors(t testing.TB) map[string]vector {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vectors in %s: %v", vectorDir, err)
	}
	out := map[string]vector{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := contract.DecodeStrict(b, &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[p] = v
	}
	return out
}

// TestVectors pins canonicalization, the request digest and the token for each vector.
func TestVectors(t *testing.T) {
	t.Parallel()
	for path, v := range readVectors(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d, err := grant.RequestDigest(v.Args, v.Target, v.ToolSpec)
			if err != nil {
				t.Fatal(err)
			}
			g := v.Grant
			g.RequestDigest = d
			canon, err := grant.Canonical(g)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := grant.Sign([]byte(v.Key), g)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				v.RequestDigest, v.JCS, v.Token = d, string(canon), tok
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			got := [3]string{d, string(canon), tok}
			want := [3]string{v.RequestDigest, v.JCS, v.Token}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("digest, JCS, token differ from %s (-want +got):\n%s", path, diff)
			}
			back, err := grant.Verify([]byte(v.Key), v.Token, g, g.IssuedAt)
			if err != nil {
				t.Fatalf("Verify(vector token) = %v", err)
			}
			if diff := cmp.Diff(g, back); diff != "" {
				t.Errorf("Verify returned another grant (-want +got):\n%s", diff)
			}
		})
	}
}

func sample(t testing.TB) (key []byte, g contract.Grant, now time.Time) {
	t.Helper()
	now = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	d, err := grant.RequestDigest(json.RawMessage(`{"path":"out/result.json","total":262800}`),
		json.RawMessage(`{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`),
		json.RawMessage(`{"tool":"docket.workspace.write_json@1","digest":"sha256:bb","kind":"write"}`))
	if err != nil {
		t.Fatal(err)
	}
	return []byte("dkt_con_0123456789abcdef.secret"), contract.Grant{
		Project: "demo", Invocation: "op-1", Action: "write_result", Tool: "docket.workspace.write_json@1",
		ToolDigest: "sha256:bb", Source: "calc", SourceDigest: "sha256:aa", Connection: "con_0123456789abcdef",
		WorkerID: "wkr-1", Generation: 3, AdapterDigest: "sha256:cc", RequestDigest: d,
		IssuedAt: now, ExpiresAt: now.Add(5 * time.Minute),
	}, now
}

func TestVerify(t *testing.T) {
	t.Parallel()
	key, g, now := sample(t)
	tok, err := grant.Sign(key, g)
	if err != nil {
		t.Fatal(err)
	}
	payload, mac, _ := strings.Cut(tok, ".")
	tests := []struct {
		name  string
		key   []byte
		token string
		want  func(*contract.Grant)
		now   time.Time
		code  contract.Code
		field string
	}{
		{name: "ok", now: now},
		{name: "ok just before expiry", now: now.Add(5*time.Minute - time.Second)},
		{name: "other key", key: []byte("dkt_con_0123456789abcdef.other"), code: contract.CodeGrantSignature},
		{name: "flipped mac", token: payload + "." + flip(mac), code: contract.CodeGrantSignature},
		{name: "no dot", token: payload + mac, code: contract.CodeGrantMalformed},
		{name: "two dots", token: tok + ".x", code: contract.CodeGrantMalformed},
		{name: "padding", token: payload + "=." + mac, code: contract.CodeGrantMalformed},
		{name: "empty", token: "", code: contract.CodeGrantMalformed},
		{name: "other request", want: func(w *contract.Grant) { w.RequestDigest = "sha256:00" }, code: contract.CodeGrantMismatch, field: "requestDigest"},
		{name: "other instance", want: func(w *contract.Grant) { w.WorkerID = "wkr-2" }, code: contract.CodeGrantMismatch, field: "workerId"},
		{name: "other generation", want: func(w *contract.Grant) { w.Generation = 4 }, code: contract.CodeGrantMismatch, field: "generation"},
		{name: "other tool digest", want: func(w *contract.Grant) { w.ToolDigest = "sha256:00" }, code: contract.CodeGrantMismatch, field: "toolDigest"},
		{name: "other adapter", want: func(w *contract.Grant) { w.AdapterDigest = "sha256:00" }, code: contract.CodeGrantMismatch, field: "adapterDigest"},
		{name: "other connection", want: func(w *contract.Grant) { w.Connection = "con_ffffffffffffffff" }, code: contract.CodeGrantMismatch, field: "connection"},
		{name: "expired", now: now.Add(5 * time.Minute), code: contract.CodeGrantExpired},
		{name: "issued in the future", now: now.Add(-grant.MaxSkew - time.Second), code: contract.CodeGrantExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, token, want, at := key, tok, g, tt.now
			if tt.key != nil {
				k = tt.key
			}
			if tt.token != "" || tt.name == "empty" {
				token = tt.token
			}
			if tt.want != nil {
				tt.want(&want)
			}
			if at.IsZero() {
				at = now
			}
			signed, err := grant.Verify(k, token, want, at)
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("Verify = %v, want code %q", err, tt.code)
			}
			// Parsed once, then verified, a token is refused or accepted alike.
			p, perr := grant.Parse(token)
			if perr == nil {
				var once contract.Grant
				once, perr = p.Verify(k, want, at)
				if perr == nil && once != signed {
					t.Fatalf("Parse+Verify = %+v, Verify = %+v", once, signed)
				}
			}
			if perr == nil != (err == nil) || err != nil && perr.Error() != err.Error() {
				t.Fatalf("Parse+Verify = %v, Verify = %v", perr, err)
			}
			if tt.field != "" && !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Verify = %v, want the field %q named", err, tt.field)
			}
		})
	}
}

// TestParsed_zero shows that a Parsed that never came from Parse verifies nothing.
func TestParsed_zero(t *testing.T) {
	t.Parallel()
	key, g, now := sample(t)
	if _, err := (grant.Parsed{}).Verify(key, g, now); contract.CodeOf(err) != contract.CodeGrantMalformed {
		t.Fatalf("zero Parsed.Verify = %v, want grant_malformed", err)
	}
}

// TestVerify_nonCanonical shows that a payload signed correctly but not in JCS form is
// refused: one grant has one byte form.
func TestVerify_nonCanonical(t *testing.T) {
	t.Parallel()
	key, g, now := sample(t)
	canon, err := grant.Canonical(g)
	if err != nil {
		t.Fatal(err)
	}
	loose := append([]byte(" "), canon...)
	tok := b64(loose) + "." + b64(hmacSum(key, loose))
	if _, err := grant.Verify(key, tok, g, now); contract.CodeOf(err) != contract.CodeGrantMalformed {
		t.Fatalf("Verify(non-canonical) = %v, want grant_malformed", err)
	}
}

func TestRequestDigest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                   string
		args, target, toolSpec string
		ok                     bool
	}{
		{"objects", `{"a":1}`, `{}`, `{}`, true},
		{"smuggled member", `{}`, `{},"x":1`, `{}`, false},
		{"not json", `{`, `{}`, `{}`, false},
		{"empty", ``, `{}`, `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := grant.RequestDigest(json.RawMessage(tt.args), json.RawMessage(tt.target), json.RawMessage(tt.toolSpec))
			if (err == nil) != tt.ok {
				t.Fatalf("RequestDigest(%q, %q, %q) = %v, want ok %v", tt.args, tt.target, tt.toolSpec, err, tt.ok)
			}
		})
	}
	a, _ := grant.RequestDigest(json.RawMessage(`{"b":2, "a":1.0}`), json.RawMessage(`{}`), json.RawMessage(`{}`))
	b, _ := grant.RequestDigest(json.RawMessage(`{"a":1,"b":2}`), json.RawMessage(`{}`), json.RawMessage(`{}`))
	if a != b {
		t.Errorf("RequestDigest differs for JSON that canonicalizes the same: %s vs %s", a, b)
	}
}
