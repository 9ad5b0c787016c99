package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// TestEventsVerify_BundleTrust exports a bundle from a real data dir, edits it and signs
// it again with a fresh key, as anyone who holds the file can, and checks that docket
// events verify passes a bundle only under keys the verifier trusts: the installation's
// when its data dir is at hand, --keys otherwise. A bundle that holds only under the keys
// it carries exits 7 with bundle_untrusted and says so, in text and in -o json.
func TestEventsVerify_BundleTrust(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, ".docket")
	elsewhere := filepath.Join(work, "elsewhere") // a machine with no installation
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	docket := func(t *testing.T, dataDir string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		var out, errb strings.Builder
		e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			switch k {
			case "DOCKET_HOME":
				return dataDir
			case "DOCKET_PASSPHRASE":
				return "correct horse battery"
			}
			return ""
		}}
		code = exitCode(run(t.Context(), args, e), &errb)
		return out.String(), errb.String(), code
	}
	must := func(args ...string) string {
		t.Helper()
		out, errs, code := docket(t, home, args...)
		if code != exitOK {
			t.Fatalf("docket %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	must("init", "--member", "ada")
	must("events", "checkpoint")
	genuine := filepath.Join(work, "default.bundle")
	must("events", "export", "--out", genuine)
	keys := filepath.Join(work, "keys.json")
	if err := os.WriteFile(keys, []byte(must("key", "public")), 0o600); err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(genuine)
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(work, "forged.bundle")
	if err := os.WriteFile(forged, forgeBundle(t, b), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Verify(b, nil); err != nil {
		t.Fatalf("the genuine bundle does not hold under its own keys: %v", err)
	}

	tests := []struct {
		name    string
		dataDir string
		args    []string
		code    int
		want    bundle.Verdict // compared: OK, Trusted, Keys, ErrorCode
		stderr  string
	}{
		{"genuine, the installation's keys", home, []string{genuine}, exitOK,
			bundle.Verdict{OK: true, Trusted: true, Keys: bundle.KeysInstallation}, ""},
		{"genuine, --keys elsewhere", elsewhere, []string{genuine, "--keys", keys}, exitOK,
			bundle.Verdict{OK: true, Trusted: true, Keys: bundle.KeysFile}, ""},
		{"genuine, --data-dir elsewhere", elsewhere, []string{genuine, "--data-dir", home}, exitOK,
			bundle.Verdict{OK: true, Trusted: true, Keys: bundle.KeysInstallation}, ""},
		{"genuine, only its own keys", elsewhere, []string{genuine}, exitUntrusted,
			bundle.Verdict{OK: true, Keys: bundle.KeysOwn, ErrorCode: "bundle_untrusted"}, "bundle_untrusted: "},
		{"forged, the installation's keys", home, []string{forged}, exitFailure,
			bundle.Verdict{Keys: bundle.KeysInstallation, ErrorCode: "event_chain_broken"}, "not among the public keys"},
		{"forged, --keys elsewhere", elsewhere, []string{forged, "--keys", keys}, exitFailure,
			bundle.Verdict{Keys: bundle.KeysFile, ErrorCode: "event_chain_broken"}, "not among the public keys"},
		{"forged, only its own keys", elsewhere, []string{forged}, exitUntrusted,
			bundle.Verdict{OK: true, Keys: bundle.KeysOwn, ErrorCode: "bundle_untrusted"}, "proves it whole, not who made it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := docket(t, tt.dataDir, append([]string{"events", "verify"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
			stdout, _, code := docket(t, tt.dataDir, append([]string{"events", "verify", "-o", "json"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("-o json: exit %d, want %d", code, tt.code)
			}
			var got bundle.Verdict
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("-o json printed %q: %v", stdout, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(bundle.Verdict{}, "Bundle", "Message", "Project",
				"Events", "Head", "SignedSeq", "Releases", "KeyID", "Line", "Seq")); diff != "" {
				t.Errorf("-o json (-want +got):\n%s", diff)
			}
		})
	}
}

// forgeBundle edits b as a forger would: it names another actor on the first event,
// chains every event again, signs every checkpoint and the whole again with a fresh key,
// and puts that key in the header. The result holds under the keys it carries.
func forgeBundle(t *testing.T, b []byte) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var h bundle.Header
	if err := json.Unmarshal(lines[0], &h); err != nil {
		t.Fatal(err)
	}
	h.Keys = signing.Set(keys.Public())
	var body bytes.Buffer
	put := func(v any) {
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		body.Write(out)
		body.WriteByte('\n')
	}
	put(h)
	var prev store.Hash
	for i, raw := range lines[1 : len(lines)-1] {
		var l struct {
			Event   *bundle.Event   `json:"event,omitempty"`
			Release *bundle.Release `json:"release,omitempty"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		if e := l.Event; e != nil {
			if i == 0 {
				e.Actor = "member:mallory"
			}
			if e.Type == event.CheckpointSigned {
				var cp signing.Checkpoint
				if err := json.Unmarshal(e.Data, &cp); err != nil {
					t.Fatal(err)
				}
				cp.Hash = prev.String()
				if e.Data, err = json.Marshal(keys.SignCheckpoint(cp)); err != nil {
					t.Fatal(err)
				}
			}
			se := store.Event{Project: h.Project, Seq: e.Seq, ID: e.ID, Type: e.Type, At: e.At, Actor: e.Actor, Data: e.Data,
				DataHash: store.DataHash(e.Data), PrevHash: prev}
			se.Hash = store.EventHash(se)
			e.DataHash, e.PrevHash, e.Hash = se.DataHash.String(), se.PrevHash.String(), se.Hash.String()
			prev = se.Hash
		}
		put(l)
	}
	kid, sig := keys.Sign(body.Bytes())
	put(bundle.Trailer{KeyID: kid, Signature: sig})
	if _, err := bundle.Verify(body.Bytes(), nil); err != nil {
		t.Fatalf("the forged bundle does not hold under the keys it carries: %v", err)
	}
	return body.Bytes()
}
