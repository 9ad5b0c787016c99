package authority_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
)

// TestKeyDirectory_ListsBoundSourceKeys: an http Source bound with the public JWK of the
// key it signs with is listed in the key directory; a JWK whose kid is not its RFC 7638
// thumbprint, or one on a Source that is not http, is refused at binding.
func TestKeyDirectory_ListsBoundSourceKeys(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk := contract.PublicJWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: signing.Thumbprint(pub)}
	before, err := f.a.KeyDirectory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := jwk
	bad.Kid = "not-the-thumbprint"
	for name, src := range map[string]contract.Source{
		"a kid not the thumbprint": {Name: "api", Type: "http", Words: []string{"item"}, Tier: contract.TierAttested, SigningKey: &bad},
		"a file Source":            {Name: "ws", Type: "file", Words: []string{"item"}, Tier: contract.TierAttested, SigningKey: &jwk},
	} {
		if _, err := f.a.Directory().BindSource(ctx, f.admin, "default", "laptop", src); err == nil {
			t.Errorf("BindSource with %s = nil, want a refusal", name)
		}
	}
	src := contract.Source{Name: "api", Type: "http", Words: []string{"item"}, Tier: contract.TierAttested, SigningKey: &jwk}
	if _, err := f.a.Directory().BindSource(ctx, f.admin, "default", "laptop", src); err != nil {
		t.Fatal(err)
	}
	after, err := f.a.KeyDirectory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 || after[len(after)-1].ID != jwk.Kid || !after[len(after)-1].Key.Equal(pub) {
		t.Errorf("the directory is %+v, want %+v and the bound Source's key %s", after, before, jwk.Kid)
	}
}
