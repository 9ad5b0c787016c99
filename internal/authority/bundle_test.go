package authority_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// exportedBundle is a signed project's bundle: a release, a fact and a checkpoint.
func exportedBundle(t *testing.T) ([]byte, *signing.Keyring) {
	t.Helper()
	f := newFixture(t)
	ctx := t.Context()
	a, keys := signedAuthority(t, f.st, f.key, 0)
	seedProject(t, a, f.admin)
	if _, err := a.Checkpoint(ctx, f.admin, "default"); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Export(ctx, f.st, "default", keys, time.Now())
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	return b, keys
}

func TestBundle_Verify(t *testing.T) {
	b, keys := exportedBundle(t)
	// Another directory, with only the public key.
	path := filepath.Join(t.TempDir(), "default.bundle")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	read, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.Set(keys.Public()).PublicKeys()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bundle.Verify(read, pub)
	if err != nil {
		t.Fatalf("Verify of an exported bundle: %v", err)
	}
	if rep.Project != "default" || rep.SignedSeq == 0 || rep.Releases != 1 || rep.OwnKeys {
		t.Errorf("Verify = %+v; want project default, a signed checkpoint, one release, trusted keys", rep)
	}
	other, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Verify(read, other.Public()); err == nil {
		t.Error("Verify under another installation's key passed")
	}
}

// TestBundle_VerifyRandomEdits changes bytes of a bundle at random: every change fails,
// with the place named.
func TestBundle_VerifyRandomEdits(t *testing.T) {
	b, keys := exportedBundle(t)
	pub := keys.Public()
	r := mrand.New(mrand.NewPCG(16, 16))
	for i := range 500 {
		edited := append([]byte(nil), b...)
		for range 1 + r.IntN(3) {
			pos := r.IntN(len(edited))
			edited[pos] ^= byte(1 + r.IntN(255))
		}
		_, err := bundle.Verify(edited, pub)
		if err == nil {
			t.Fatalf("edit %d: a changed bundle verified", i)
		}
		if _, ok := errors.AsType[*bundle.Error](err); !ok {
			t.Fatalf("edit %d: Verify = %v, want a *bundle.Error naming the place", i, err)
		}
	}
	// Cut short, or with a line added.
	for _, edited := range [][]byte{b[:len(b)-1], b[:len(b)/2], append(append([]byte(nil), b...), '\n')} {
		if _, err := bundle.Verify(edited, pub); err == nil {
			t.Errorf("a bundle of %d bytes (exported %d) verified", len(edited), len(b))
		}
	}
}

// TestBundle_TamperedStore exports from a store changed behind the log and verifies the
// bundle offline: each change is named by its line.
func TestBundle_TamperedStore(t *testing.T) {
	tamperings := []struct {
		name   string
		tamper func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any))
		want   string // in the error
	}{
		{"capability blob swapped", func(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) {
			rel, err := st.Release(t.Context(), "test.grant", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			exec(t, `UPDATE blobs SET data = $1 WHERE hash = $2`, bytes.Replace(rel.Content, []byte(`"capability.toml":"`), []byte(`"capability.toml":"IyBmb3JnZWQK`), 1), rel.ContentHash[:])
		}, "release test.grant@1.0.0"},
		{"event edited, chain recomputed", rewriteEvent2, "checkpoint"},
	}
	for _, be := range tamperBackends {
		for _, tt := range tamperings {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				st, exec := be.open(t)
				f := newFixtureOn(t, st)
				ctx := t.Context()
				a, keys := signedAuthority(t, st, f.key, 0)
				seedProject(t, a, f.admin)
				if _, err := a.Checkpoint(ctx, f.admin, "default"); err != nil {
					t.Fatal(err)
				}
				tt.tamper(t, st, exec)
				b, err := bundle.Export(ctx, st, "default", keys, time.Now())
				if err != nil {
					t.Fatalf("Export: %v", err)
				}
				_, err = bundle.Verify(b, keys.Public())
				verr, ok := errors.AsType[*bundle.Error](err)
				if !ok || !strings.Contains(verr.What, tt.want) {
					t.Fatalf("Verify of a bundle from a tampered store = %v, want a *bundle.Error naming %q", err, tt.want)
				}
			})
		}
	}
}

// TestBundle_VerifyHeldCheckpoint: a checkpoint kept outside the bundle must sign a head
// the bundle has; one from another log under the same key (as a rewritten log stripped
// of its own checkpoints would be) is refused, naming its seq.
func TestBundle_VerifyHeldCheckpoint(t *testing.T) {
	export := func(job string, keys *signing.Keyring) ([]byte, signing.Checkpoint) {
		f := newFixture(t)
		a := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: f.key, Signer: keys})
		if err := a.Commit(t.Context(), "default", f.admin.Principal(), assertedFact(job)); err != nil {
			t.Fatal(err)
		}
		cp, err := a.Checkpoint(t.Context(), f.admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Export(t.Context(), f.st, "default", keys, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return b, cp
	}
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, cp := export("j1", keys)
	if _, err := bundle.Verify(b, keys.Public(), cp); err != nil {
		t.Fatalf("Verify against its own checkpoint: %v", err)
	}
	_, other := export("j2", keys)
	_, err = bundle.Verify(b, keys.Public(), other)
	verr, ok := errors.AsType[*bundle.Error](err)
	if !ok || verr.Seq != other.Seq || !strings.Contains(verr.What, "held checkpoint") {
		t.Errorf("Verify against another log's checkpoint = %v, want a *bundle.Error naming the held checkpoint at %d", err, other.Seq)
	}
	forged := cp
	forged.Hash = other.Hash
	if _, err := bundle.Verify(b, keys.Public(), forged); err == nil {
		t.Error("Verify against a checkpoint whose hash was changed passed")
	}
}
