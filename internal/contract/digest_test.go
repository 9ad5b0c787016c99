package contract_test

import (
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

func TestDigest_RoundTrip(t *testing.T) {
	t.Parallel()
	d := contract.Sum([]byte("abc"))
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := d.String(); got != want {
		t.Fatalf("Sum(abc).String() = %q, want %q", got, want)
	}
	p, err := contract.ParseDigest(want)
	if err != nil || p != d {
		t.Fatalf("ParseDigest(%q) = %v, %v; want %v", want, p, err, d)
	}
	h := sha256.New()
	h.Write([]byte("abc"))
	if got := contract.SumOf(h); got != d {
		t.Errorf("SumOf = %v, want %v", got, d)
	}
	if got, err := contract.DigestFrom(d[:]); err != nil || got != d {
		t.Errorf("DigestFrom = %v, %v; want %v", got, err, d)
	}
	b, err := json.Marshal(struct{ D contract.Digest }{d})
	if err != nil || string(b) != `{"D":"`+want+`"}` {
		t.Fatalf("json.Marshal = %s, %v", b, err)
	}
}

func TestParseDigest_Refusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"no prefix", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"other hash", "sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"upper case", "sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"},
		{"short", "sha256:ba7816bf"},
		{"not hex", "sha256:zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d, err := contract.ParseDigest(tc.in); err == nil {
				t.Errorf("ParseDigest(%q) = %v, want an error", tc.in, d)
			}
		})
	}
	if _, err := contract.DigestFrom(make([]byte, 31)); err == nil {
		t.Error("DigestFrom(31 bytes) succeeded, want an error")
	}
}
