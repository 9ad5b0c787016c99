package grant_test

import (
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/grant"
)

func BenchmarkSign(b *testing.B) {
	key, g, _ := sample(b)
	for b.Loop() {
		if _, err := grant.Sign(key, g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	key, g, now := sample(b)
	tok, err := grant.Sign(key, g)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := grant.Verify(key, tok, g, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestDigest(b *testing.B) {
	args := json.RawMessage(`{"job_id":"calc-001","path":"out/result.json","subtotal":259800,"total":262800}`)
	target := json.RawMessage(`{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`)
	spec := json.RawMessage(`{"tool":"docket.workspace.write_json@1","digest":"sha256:bb","kind":"write"}`)
	for b.Loop() {
		if _, err := grant.RequestDigest(args, target, spec); err != nil {
			b.Fatal(err)
		}
	}
}
