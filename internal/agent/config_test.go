package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

func TestModelConfig_Resolve(t *testing.T) {
	tests := []struct {
		name  string
		in    agent.ModelConfig
		want  agent.ModelConfig
		teach string
	}{
		{"anthropic by host", agent.ModelConfig{URL: "https://api.anthropic.com", Model: "claude-sonnet-4"},
			agent.ModelConfig{Provider: agent.ProviderAnthropic, URL: "https://api.anthropic.com", Model: "claude-sonnet-4"}, ""},
		{"anthropic by path", agent.ModelConfig{URL: "http://proxy:9000/v1/messages", Model: "m"},
			agent.ModelConfig{Provider: agent.ProviderAnthropic, URL: "http://proxy:9000/v1/messages", Model: "m"}, ""},
		{"local server is openai-compatible", agent.ModelConfig{URL: "http://127.0.0.1:8080", Model: "qwen"},
			agent.ModelConfig{Provider: agent.ProviderOpenAI, URL: "http://127.0.0.1:8080", Model: "qwen"}, ""},
		{"named anthropic gets its default URL", agent.ModelConfig{Provider: agent.ProviderAnthropic, Model: "m"},
			agent.ModelConfig{Provider: agent.ProviderAnthropic, URL: agent.DefaultAnthropicURL, Model: "m"}, ""},
		{"named openai gets its default URL", agent.ModelConfig{Provider: agent.ProviderOpenAI, Model: "gpt-4o"},
			agent.ModelConfig{Provider: agent.ProviderOpenAI, URL: agent.DefaultOpenAIURL, Model: "gpt-4o"}, ""},
		{"emulated is named, never guessed", agent.ModelConfig{Provider: agent.ProviderEmulated, URL: "http://h:1/v1", Model: "m"},
			agent.ModelConfig{Provider: agent.ProviderEmulated, URL: "http://h:1/v1", Model: "m"}, ""},
		{"a script means scripted", agent.ModelConfig{Script: "run.json"},
			agent.ModelConfig{Provider: agent.ProviderScripted, Script: "run.json"}, ""},
		{"nothing", agent.ModelConfig{}, agent.ModelConfig{}, "no model is configured"},
		{"no model name", agent.ModelConfig{URL: "http://h:1"}, agent.ModelConfig{}, "--model NAME"},
		{"unknown provider", agent.ModelConfig{Provider: "gemini", Model: "m"}, agent.ModelConfig{}, `unknown provider "gemini"`},
		{"emulated without URL", agent.ModelConfig{Provider: agent.ProviderEmulated, Model: "m"}, agent.ModelConfig{}, "needs the server's URL"},
		{"scripted without script", agent.ModelConfig{Provider: agent.ProviderScripted}, agent.ModelConfig{}, "needs a script"},
		{"script with a real provider", agent.ModelConfig{Provider: agent.ProviderOpenAI, Model: "m", Script: "x.json"}, agent.ModelConfig{}, "only read by the scripted provider"},
		{"not http", agent.ModelConfig{URL: "ftp://h", Model: "m"}, agent.ModelConfig{}, "not an http(s) server root"},
		{"credentials in URL", agent.ModelConfig{URL: "https://user:sk-x@h/v1", Model: "m"}, agent.ModelConfig{}, "carries credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Resolve()
			if tt.teach != "" {
				if contract.CodeOf(err) != contract.CodeModelConfig || !strings.Contains(err.Error(), tt.teach) {
					t.Fatalf("Resolve(%+v) error = %v, want %s saying %q", tt.in, err, contract.CodeModelConfig, tt.teach)
				}
				if strings.Contains(err.Error(), "sk-x") {
					t.Errorf("the error repeats the URL's credentials: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%+v) error = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%+v) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestWire(t *testing.T) {
	tests := []struct {
		p    agent.ProviderKind
		url  string
		want string
	}{
		{agent.ProviderOpenAI, "https://api.deepseek.com/chat/completions", "Chat Completions at https://api.deepseek.com/chat/completions"},
		{agent.ProviderOpenAI, "", "Chat Completions at https://api.openai.com/v1/chat/completions"},
		{agent.ProviderAnthropic, "", "Messages API at https://api.anthropic.com/v1/messages"},
		{agent.ProviderEmulated, "http://h:8080", "Chat Completions, tools in the prompt, at http://h:8080/v1/chat/completions"},
		{agent.ProviderScripted, "", ""},
	}
	for _, tt := range tests {
		if got := agent.Wire(tt.p, tt.url); got != tt.want {
			t.Errorf("Wire(%s, %q) = %q, want %q", tt.p, tt.url, got, tt.want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ root, path, want string }{
		{"http://h:8080", "chat/completions", "http://h:8080/v1/chat/completions"},
		{"http://h:8080/", "chat/completions", "http://h:8080/v1/chat/completions"},
		{"http://h:8080/v1", "chat/completions", "http://h:8080/v1/chat/completions"},
		{"http://h:8080/v1/chat/completions", "chat/completions", "http://h:8080/v1/chat/completions"},
		{"https://api.anthropic.com", "messages", "https://api.anthropic.com/v1/messages"},
		{"http://proxy/v1/messages/", "messages", "http://proxy/v1/messages"},
		{"https://api.deepseek.com/chat/completions", "chat/completions", "https://api.deepseek.com/chat/completions"},
		{"https://api.deepseek.com", "chat/completions", "https://api.deepseek.com/v1/chat/completions"},
		{"https://api.deepseek.com/v1", "chat/completions", "https://api.deepseek.com/v1/chat/completions"},
		{"https://openrouter.ai/api/v1/", "chat/completions", "https://openrouter.ai/api/v1/chat/completions"},
		{"https://open.bigmodel.cn/api/paas/v4", "chat/completions", "https://open.bigmodel.cn/api/paas/v4/chat/completions"},
		{"https://generativelanguage.googleapis.com/v1beta", "chat/completions", "https://generativelanguage.googleapis.com/v1beta/chat/completions"},
		{"http://127.0.0.1:11434/v1/chat/completions/", "chat/completions", "http://127.0.0.1:11434/v1/chat/completions"},
		{"http://h/version", "chat/completions", "http://h/version/v1/chat/completions"},
		{"http://h/v", "chat/completions", "http://h/v/v1/chat/completions"},
		{"https://api.anthropic.com/v1", "messages", "https://api.anthropic.com/v1/messages"},
		{"https://gateway.example/anthropic/messages", "messages", "https://gateway.example/anthropic/messages"},
	}
	for _, tt := range tests {
		if got := agent.Endpoint(tt.root, tt.path); got != tt.want {
			t.Errorf("Endpoint(%q, %q) = %q, want %q", tt.root, tt.path, got, tt.want)
		}
	}
}
