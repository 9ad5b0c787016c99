package console_test

import (
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestStrictBodies: /api/v1 bodies are read strictly: a key that two
// readers would read differently is refused with its own code, never guessed.
func TestStrictBodies(t *testing.T) {
	s := newTestServer(t, console.Config{})
	tests := []struct {
		name, body string
		code       contract.Code
	}{
		{"case-variant keys", `{"name":"eve","NAME":"ada","passphrase":"` + testPassphrase + `"}`, contract.CodeCaseVariantKey},
		{"a case-variant field alone", `{"Name":"ada","passphrase":"` + testPassphrase + `"}`, contract.CodeCaseVariantKey},
		{"a duplicate key", `{"name":"eve","name":"ada","passphrase":"` + testPassphrase + `"}`, contract.CodeDuplicateKey},
		{"null for a string", `{"name":null,"passphrase":"x"}`, contract.CodeNullField},
		{"invalid UTF-8", "{\"name\":\"ad\xe1\",\"passphrase\":\"x\"}", contract.CodeInvalidUTF8},
		{"a lone surrogate", `{"name":"\udfff","passphrase":"x"}`, contract.CodeInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := s.do(t, request{method: "POST", path: "/api/v1/sessions", body: tt.body})
			e := decode[contract.Error](t, b)
			if resp.StatusCode != 400 || e.Code != tt.code || e.Teaching == "" {
				t.Errorf("POST /api/v1/sessions %s = %d %s, want 400 %q with a teaching", tt.body, resp.StatusCode, b, tt.code)
			}
		})
	}
}
