package identity

import (
	"strings"
	"testing"
)

func TestParseConnectionKey(t *testing.T) {
	secret := strings.Repeat("A", 43) // 32 bytes in unpadded base64url
	tests := []struct {
		name string
		key  Token
		want string // the Connection id, or "" when refused
	}{
		{"as created", connectionKeyOf("con_0123456789abcdef", secret), "con_0123456789abcdef"},
		{"no secret", Token("dkt_con_con_0123456789abcdef"), ""},
		{"short secret", connectionKeyOf("con_0123456789abcdef", "AAAA"), ""},
		{"another kind", Token("dkt_agt_" + secret), ""},
		{"bad id", connectionKeyOf("agent 7", secret), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := ParseConnectionKey(tt.key)
			if string(id) != tt.want || ok != (tt.want != "") {
				t.Errorf("ParseConnectionKey(%q) = %q, %v; want %q", tt.key, id, ok, tt.want)
			}
		})
	}
}
