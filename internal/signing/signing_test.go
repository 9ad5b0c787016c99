package signing_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/signing"
)

// TestThumbprint reproduces the RFC 8037 §A.3 thumbprint of the §A.2 public key.
func TestThumbprint(t *testing.T) {
	t.Parallel()
	x, err := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := signing.Thumbprint(ed25519.PublicKey(x)), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Errorf("Thumbprint = %s, want %s", got, want)
	}
}

func TestKeyring_LoadOrCreate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), signing.FileName)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k, created, err := signing.LoadOrCreate(path, rand.Reader, now)
	if err != nil || !created {
		t.Fatalf("LoadOrCreate of no file = %v, %v; want created", created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("keyring file mode %v, want 0600", fi.Mode().Perm())
	}
	if err := k.Rotate(rand.Reader, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := k.Save(path); err != nil {
		t.Fatal(err)
	}
	again, created, err := signing.LoadOrCreate(path, rand.Reader, now)
	if err != nil || created {
		t.Fatalf("LoadOrCreate of a file = %v, %v; want it read", created, err)
	}
	if len(again.Public()) != 2 || again.KeyID() != k.KeyID() {
		t.Errorf("the keyring read back holds %d keys signing with %s, want 2 signing with %s", len(again.Public()), again.KeyID(), k.KeyID())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.Load(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("Load of a file others may read = %v, want a refusal naming chmod 600", err)
	}
}

func TestCheckpoint_Verify(t *testing.T) {
	t.Parallel()
	k, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cp := k.SignCheckpoint(signing.Checkpoint{Project: "p", Seq: 7, Hash: strings.Repeat("ab", 32), At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Reason: signing.ReasonDemand})
	set := signing.Set(k.Public())
	keys, err := set.PublicKeys()
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Verify(keys); err != nil {
		t.Fatalf("Verify of a signed checkpoint: %v", err)
	}
	tests := []struct {
		name   string
		change func(c *signing.Checkpoint)
	}{
		{"seq", func(c *signing.Checkpoint) { c.Seq++ }},
		{"hash", func(c *signing.Checkpoint) { c.Hash = strings.Repeat("cd", 32) }},
		{"project", func(c *signing.Checkpoint) { c.Project = "q" }},
		{"time", func(c *signing.Checkpoint) { c.At = c.At.Add(time.Nanosecond) }},
		{"reason", func(c *signing.Checkpoint) { c.Reason = signing.ReasonInterval }},
		{"key id", func(c *signing.Checkpoint) { c.KeyID = "other" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cp
			tt.change(&c)
			if err := c.Verify(keys); err == nil {
				t.Errorf("Verify after changing the %s passed", tt.name)
			}
		})
	}
}
