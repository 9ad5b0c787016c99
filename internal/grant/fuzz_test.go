package grant_test

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
)

func seedTokens(f *testing.F) {
	for _, v := range readVectors(f) {
		f.Add(v.Token)
	}
	f.Add("")
	f.Add(".")
	f.Add("e30.AAAA")
}

// FuzzDecodeGrant checks that any token either decodes to a grant that signs back to the
// same payload, or is refused with grant_malformed.
func FuzzDecodeGrant(f *testing.F) {
	seedTokens(f)
	f.Fuzz(func(t *testing.T, token string) {
		g, err := grant.Decode(token)
		if err != nil {
			if c := contract.CodeOf(err); c != contract.CodeGrantMalformed {
				t.Fatalf("Decode(%q) = %v, want grant_malformed", token, err)
			}
			return
		}
		re, err := grant.Sign([]byte("k"), g)
		if err != nil {
			t.Fatalf("Sign(decoded) = %v", err)
		}
		if payload, _, _ := strings.Cut(token, "."); !strings.HasPrefix(re, payload+".") {
			t.Fatalf("decoded grant re-signs to another payload:\n%s\n%s", re, token)
		}
	})
}

// FuzzVerify checks that no token verifies under a key unless it was signed with it.
func FuzzVerify(f *testing.F) {
	seedTokens(f)
	key, want, now := sample(f)
	f.Fuzz(func(t *testing.T, token string) {
		g, err := grant.Verify(key, token, want, now)
		if p, perr := grant.Parse(token); perr == nil {
			once, perr := p.Verify(key, want, now)
			if perr == nil != (err == nil) || err != nil && perr.Error() != err.Error() || once != g {
				t.Fatalf("Parse+Verify(%q) = %+v, %v; Verify = %+v, %v", token, once, perr, g, err)
			}
		} else if err == nil {
			t.Fatalf("Parse(%q) = %v, but Verify accepts it", token, perr)
		}
		if err == nil {
			tok, _ := grant.Sign(key, g)
			if tok != token {
				t.Fatalf("Verify accepted a token Sign does not produce: %q", token)
			}
			return
		}
		if contract.CodeOf(err) == "" {
			t.Fatalf("Verify(%q) = %v, want a coded refusal", token, err)
		}
	})
}
