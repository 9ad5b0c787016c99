package workbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestExample_Decode: the Get started page's install form is read strictly, with the
// token derived from serve's path key, and each refusal has its code.
func TestExample_Decode(t *testing.T) {
	x := &exampleInstaller{rts: newRuntimes(Config{}), token: ExampleToken("SERVEKEY"), xorigin: http.NewCrossOriginProtection()}
	ok := "csrf=" + x.token + "&approval=person"
	form := "application/x-www-form-urlencoded"
	tests := []struct {
		name, body, contentType string
		sameSite                bool
		want                    contract.Code // "" admits it
		approve                 bool
	}{
		{"the page's form", ok, form, true, "", true},
		{"the write needs no one", "csrf=" + x.token, form, true, "", false},
		{"JSON", `{"approval":"person"}`, "application/json", true, contract.CodeUnsupportedMedia, false},
		{"no token", "approval=person", form, true, contract.CodeCSRF, false},
		{"another run's token", strings.Replace(ok, x.token, ExampleToken("OTHER"), 1), form, true, contract.CodeCSRF, false},
		{"unknown approval", "csrf=" + x.token + "&approval=agent", form, true, contract.CodeInvalidArgument, false},
		{"unknown field", ok + "&vault=%2Fetc", form, true, contract.CodeInvalidArgument, false},
		{"repeated field", ok + "&approval=none", form, true, contract.CodeInvalidArgument, false},
		{"from another site", ok, form, false, contract.CodeCrossOrigin, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7420"+ExamplePath, strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.contentType)
			if !tt.sameSite {
				r.Header.Set("Sec-Fetch-Site", "cross-site")
			}
			spec, err := x.decode(httptest.NewRecorder(), r)
			if got := contract.CodeOf(err); got != tt.want {
				t.Fatalf("decode = %v, want code %q", err, tt.want)
			}
			if err == nil && spec.Approve != tt.approve {
				t.Errorf("decode approve = %v, want %v", spec.Approve, tt.approve)
			}
		})
	}
}

// TestExample_RefusesAVaultGiven: a vault given to docket start with --vault is the
// person's to edit; the install says so and changes nothing.
func TestExample_RefusesAVaultGiven(t *testing.T) {
	called := false
	x := &exampleInstaller{rts: newRuntimes(Config{Vault: "/home/ada/vault.json", InstallExample: func(context.Context, string, ExampleSpec) error {
		called = true
		return nil
	}})}
	err := x.install(t.Context(), ExampleSpec{})
	if contract.CodeOf(err) != contract.CodeInvalidArgument || !strings.Contains(err.Error(), "--vault /home/ada/vault.json") || called {
		t.Errorf("install = %v (hook called %v), want a refusal naming the vault and no install", err, called)
	}
}
