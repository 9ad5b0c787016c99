package bundle_test

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// signedStore is a real SQLite store holding project default with a signed checkpoint,
// the bundle exported from it, and the installation's keys.
func signedStore(t *testing.T) (*sqlite.Store, []byte, *signing.Keyring, signing.Checkpoint) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := authoritytest.New(t, authoritytest.Options{Store: st, Signer: keys})
	cp, err := p.A.Checkpoint(ctx, p.Admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Export(ctx, st, "default", keys, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return st, b, keys, cp
}

func otherKeys(t *testing.T) []signing.PublicKey {
	t.Helper()
	k, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}

// TestJudge: a bundle passes only under keys the verifier trusts; under its own keys it
// holds but is refused as untrusted; under another installation's keys, or edited, it
// does not hold and the verdict names the line.
func TestJudge(t *testing.T) {
	_, b, keys, _ := signedStore(t)
	edited := []byte(strings.Replace(string(b), `"default"`, `"defaulx"`, 1))
	tests := []struct {
		name      string
		b         []byte
		trust     bundle.Trust
		wantOK    bool
		trusted   bool
		wantCode  contract.Code // "" for no refusal
		wantInMsg string
	}{
		{"the installation's keys", b, bundle.Trust{Keys: keys.Public(), Source: bundle.KeysInstallation}, true, true, "", ""},
		{"a keys file", b, bundle.Trust{Keys: keys.Public(), Source: bundle.KeysFile}, true, true, "", ""},
		{"only its own keys", b, bundle.Trust{Source: bundle.KeysOwn}, true, false, contract.CodeBundleUntrusted, "proves it whole, not who made it"},
		{"another installation's keys", b, bundle.Trust{Keys: otherKeys(t), Source: bundle.KeysFile, Said: "a key of k.json"}, false, false, contract.CodeEventChainBroken, "no key a key of k.json trusts signed it"},
		{"an edited bundle", edited, bundle.Trust{Keys: keys.Public(), Source: bundle.KeysInstallation}, false, false, contract.CodeEventChainBroken, "changed after it was exported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, refusal, err := bundle.Judge("p.bundle", tt.b, tt.trust, nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.OK != tt.wantOK || v.Trusted != tt.trusted || v.Keys != tt.trust.Source || v.Bundle != "p.bundle" {
				t.Errorf("verdict %+v; want ok %v, trusted %v, keys %s", v, tt.wantOK, tt.trusted, tt.trust.Source)
			}
			var code contract.Code
			if refusal != nil {
				code = refusal.Code
			}
			if code != tt.wantCode || string(code) != v.ErrorCode {
				t.Fatalf("refusal %v, verdict code %q; want %q", refusal, v.ErrorCode, tt.wantCode)
			}
			if refusal != nil && (!strings.Contains(refusal.Teaching, tt.wantInMsg) || v.Message != refusal.Teaching) {
				t.Errorf("refusal says %q; want it to say %q, and the verdict the same", refusal.Teaching, tt.wantInMsg)
			}
			if tt.wantOK && (v.Project != "default" || v.Events == 0 || v.SignedSeq == 0 || v.KeyID == "") {
				t.Errorf("a bundle that holds reported %+v", v)
			}
			if !tt.wantOK && v.Line == 0 {
				t.Errorf("a bundle that does not hold names no line: %+v", v)
			}
		})
	}
}

// TestCheckStore: a store's every project is checked where it lies: its integrity, its
// chain under the installation's keys, and a held checkpoint against its project.
func TestCheckStore(t *testing.T) {
	st, _, keys, cp := signedStore(t)
	elsewhere := cp
	elsewhere.Project = "nowhere"
	tests := []struct {
		name       string
		keys       []signing.PublicKey
		held       []signing.Checkpoint
		wantHeld   int
		wantBroken string // in the refusal; "" for none
	}{
		{name: "the installation's keys", keys: keys.Public(), wantHeld: 1},
		{name: "with its held checkpoint", keys: keys.Public(), held: []signing.Checkpoint{cp}, wantHeld: 1},
		{name: "a held checkpoint of another project", keys: keys.Public(), held: []signing.Checkpoint{elsewhere}, wantHeld: 1,
			wantBroken: "the held checkpoint is of project nowhere, which the store does not hold"},
		{name: "another installation's keys", keys: otherKeys(t), wantBroken: "project default:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sr, err := bundle.CheckStore(t.Context(), st, tt.keys, tt.held)
			if err != nil {
				t.Fatal(err)
			}
			if !sr.IntegrityChecked {
				t.Error("SQLite's integrity check did not run")
			}
			if len(sr.Held) != tt.wantHeld {
				t.Errorf("%d projects hold, want %d: %+v", len(sr.Held), tt.wantHeld, sr)
			}
			ce := sr.BrokenError()
			switch {
			case tt.wantBroken == "" && ce != nil:
				t.Errorf("refused: %v", ce)
			case tt.wantBroken != "" && (ce == nil || ce.Code != contract.CodeEventChainBroken || !strings.Contains(ce.Teaching, tt.wantBroken)):
				t.Errorf("refusal %v; want %s saying %q", ce, contract.CodeEventChainBroken, tt.wantBroken)
			}
		})
	}
}

// TestReadKeys_ReadCheckpoint: the files a verifier hands in are decoded strictly, and an
// empty checkpoint path is none.
func TestReadKeys_ReadCheckpoint(t *testing.T) {
	_, _, keys, cp := signedStore(t)
	dir := t.TempDir()
	write := func(name string, v any, extra string) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if extra != "" {
			b = append(b[:len(b)-1], []byte(`,"`+extra+`":1}`)...)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if got, err := bundle.ReadKeys(write("k.json", signing.Set(keys.Public()), "")); err != nil || len(got) != len(keys.Public()) {
		t.Errorf("ReadKeys = %d keys, %v", len(got), err)
	}
	if _, err := bundle.ReadKeys(write("k2.json", signing.Set(keys.Public()), "surprise")); err == nil {
		t.Error("ReadKeys took an unknown field")
	}
	if got, err := bundle.ReadCheckpoint(write("cp.json", cp, "")); err != nil || len(got) != 1 || got[0].Seq != cp.Seq {
		t.Errorf("ReadCheckpoint = %+v, %v", got, err)
	}
	if _, err := bundle.ReadCheckpoint(write("cp2.json", cp, "surprise")); err == nil {
		t.Error("ReadCheckpoint took an unknown field")
	}
	if got, err := bundle.ReadCheckpoint(""); err != nil || got != nil {
		t.Errorf("ReadCheckpoint(\"\") = %v, %v; want none", got, err)
	}
}
