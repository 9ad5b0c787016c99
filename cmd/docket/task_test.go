package main

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

func TestParseKey(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"none", "", "{}", true},
		{"pairs", "job_id=calc-001, n=2", `{"job_id":"calc-001","n":2}`, true},
		{"json", `{"job_id": "calc-001"}`, `{"job_id":"calc-001"}`, true},
		{"json with an unknown form", `{"job_id": "calc-001", "job_id": "x"}`, "", false},
		{"no equals", "calc-001", "", false},
		{"no name", "=calc-001", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKey(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("parseKey(%q) = %v, %v; want ok %v", tt.in, got, err, tt.ok)
			}
			if tt.ok && got.JSON() != tt.want {
				t.Errorf("parseKey(%q) = %s, want %s", tt.in, got.JSON(), tt.want)
			}
		})
	}
}

// FuzzParseKey: a --key value either is refused or reads as a key that encodes again.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"", "job_id=calc-001", "a=1,b=x", `{"job_id":"calc-001"}`, `{"a":{"b":1}}`, "=", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := parseKey(s)
		if err != nil {
			return
		}
		var back contract.Args
		if j := key.JSON(); contract.DecodeStrict([]byte(j), &back) != nil || back.JSON() != j {
			t.Errorf("parseKey(%q) = %s, which does not read back", s, j)
		}
	})
}
