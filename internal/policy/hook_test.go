package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/policy"
)

func TestHook_Mode(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "hook.toml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := policy.Parse("hook.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	free, err := policy.Parse("free.toml", []byte("[hook_policy]\ndefault = \"free\"\n[[hook_policy.profile]]\nagent = \"careful\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		doc         policy.Document
		agent, tool string
		want        string
	}{
		{"a free tool", d, "coder", "Read", contract.HookFree},
		{"a tool to decide", d, "coder", "Bash", contract.HookDecide},
		{"a refused tool", d, "coder", "WebFetch", contract.HookRefuse},
		{"a tool the profile does not name takes its default", d, "coder", "Task", contract.HookDecide},
		{"an Agent without a profile takes the policy's default", d, "other", "Read", contract.HookDecide},
		{"a profile without a default takes the policy's", free, "careful", "Bash", contract.HookFree},
		{"the built-in policy decides everything", policy.Builtin(contract.PolicyHook), "coder", "Read", contract.HookDecide},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.doc.Hook.Mode(tt.agent, tt.tool); got != tt.want {
				t.Errorf("Mode(%s, %s) = %s, want %s", tt.agent, tt.tool, got, tt.want)
			}
		})
	}
}

func TestParse_HookRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"an unknown mode", "[hook_policy]\ndefault = \"maybe\"\n", `hook.toml:2: default "maybe" is not a mode`},
		{"a profile without an agent", "[hook_policy]\n[[hook_policy.profile]]\nfree = [\"Read\"]\n", "hook.toml:2: profile 1 names no agent"},
		{"two profiles of one agent", "[hook_policy]\n[[hook_policy.profile]]\nagent = \"a\"\n[[hook_policy.profile]]\nagent = \"a\"\n", `hook.toml:4: two profiles name the agent "a"`},
		{"a tool under two modes", "[hook_policy]\n[[hook_policy.profile]]\nagent = \"a\"\nfree = [\"Bash\"]\nrefuse = [\"Bash\"]\n", `tool "Bash" under both free and refuse`},
		{"a profile's unknown default", "[hook_policy]\n[[hook_policy.profile]]\nagent = \"a\"\ndefault = \"yes\"\n", `default "yes" is not a mode`},
		{"an unknown key", "[hook_policy]\n[[hook_policy.profile]]\nagent = \"a\"\nallow = [\"Bash\"]\n", `unknown key "hook_policy.profile.allow"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Parse("hook.toml", []byte(tt.src))
			if contract.CodeOf(err) != contract.CodePolicyInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want policy_invalid saying %q", err, tt.want)
			}
		})
	}
}
