package agent_test

import (
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

func TestContextWindow(t *testing.T) {
	for _, tt := range []struct {
		model   string
		profile int
		want    int
		known   bool
	}{
		{"gpt-4o", 0, 128000, true},
		{"gpt-4o-2024-08-06", 0, 128000, true},
		{"claude-sonnet-4-5-20250929", 0, 200000, true},
		{"deepseek-chat", 0, 128000, true},
		{"gpt-4o", 8192, 8192, true},
		{"gpt-4o-audio-preview", 0, agent.DefaultContextWindow, false}, // not a prefix match
		{"my-local-model", 0, agent.DefaultContextWindow, false},
		{"my-local-model", 4096, 4096, true},
	} {
		got, known := agent.ContextWindow(tt.model, tt.profile)
		if got != tt.want || known != tt.known {
			t.Errorf("ContextWindow(%q, %d) = %d, %v; want %d, %v", tt.model, tt.profile, got, known, tt.want, tt.known)
		}
	}
}
