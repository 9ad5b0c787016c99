package contract_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

func TestCheckCredentialURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://docket.example.com", true},
		{"HTTPS://docket.example.com:8443/x", true},
		{"http://127.0.0.1:7777", true},
		{"http://127.9.9.9:7777", true},
		{"http://[::1]:7777", true},
		{"http://localhost:7777", true},
		{"http://LOCALHOST", true},
		{"http://0.0.0.0:7420", true},
		{"http://[::]:7420", true},
		{"http://192.0.2.2:7777", false},
		{"http://docket.example.com", false},
		{"http://localhost.example.com", false},
		{"http://127.0.0.1.nip.io", false},
		{"ftp://127.0.0.1", false},
		{"127.0.0.1:7777", false},
		{"", false},
	}
	for _, tt := range tests {
		err := contract.CheckCredentialURL(tt.url)
		if tt.ok != (err == nil) || err != nil && contract.CodeOf(err) != contract.CodeInsecureURL {
			t.Errorf("CheckCredentialURL(%q) = %v, want ok %v", tt.url, err, tt.ok)
		}
	}
}
