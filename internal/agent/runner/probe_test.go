package runner_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
)

// closedPort returns a loopback URL nothing listens on: a port taken and let go.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/v1"
}

// TestProbe: a profile's model is checked with one small request to its endpoint, and
// each way it fails is named with its code, the provider, the status and the endpoint's
// own message — never the key.
func TestProbe(t *testing.T) {
	const key = "sk-test-secret-1234567890"
	script, err := scripted.ParseJSON([]byte(`{"turns": [{"final": "ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	good := providertest.NewOpenAI(t, script, key)
	goodAnthropic := providertest.NewAnthropic(t, script, key)
	unknownModel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error": {"message": "The model 'gpt-9' does not exist", "type": "invalid_request_error", "code": "model_not_found"}}`))
	}))
	t.Cleanup(unknownModel.Close)

	tests := []struct {
		name  string
		cfg   runner.ProbeConfig
		code  contract.Code // "" for success
		words []string
	}{
		{"answers", runner.ProbeConfig{Provider: "openai", URL: good.URL + "/v1", Model: "m", Key: agent.NewKey(key)}, "", nil},
		{"anthropic answers", runner.ProbeConfig{Provider: "anthropic", URL: goodAnthropic.URL, Model: "claude-test", Key: agent.NewKey(key)}, "", nil},
		{"emulated through chat completions", runner.ProbeConfig{Provider: "emulated", URL: good.URL + "/v1", Model: "m", Key: agent.NewKey(key)}, "", nil},
		{"scripted sends nothing", runner.ProbeConfig{Provider: "scripted"}, "", nil},
		{"host unreachable", runner.ProbeConfig{Provider: "openai", URL: closedPort(t), Model: "m"}, contract.CodeModelTransport,
			[]string{"openai", "connection refused", "start the model server, or fix the model URL"}},
		{"key refused", runner.ProbeConfig{Provider: "openai", URL: good.URL + "/v1", Model: "m", Key: agent.NewKey("sk-wrong-key-0987654321")}, contract.CodeModelAuth,
			[]string{"openai", "HTTP 401", "Incorrect API key", "check the key file"}},
		{"no key where one is wanted", runner.ProbeConfig{Provider: "openai", URL: good.URL + "/v1", Model: "m"}, contract.CodeModelAuth,
			[]string{"HTTP 401", "the endpoint wants a key, and none was sent"}},
		{"unknown model", runner.ProbeConfig{Provider: "openai", URL: unknownModel.URL + "/v1", Model: "gpt-9", Key: agent.NewKey(key)}, contract.CodeModelBadRequest,
			[]string{"HTTP 404", "The model 'gpt-9' does not exist", `check the model name ("gpt-9")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runner.Probe(t.Context(), tt.cfg)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Probe = %v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Probe succeeded, want %s", tt.code)
			}
			if got := contract.CodeOf(err); got != tt.code {
				t.Errorf("code = %q, want %q (%v)", got, tt.code, err)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Probe = %q, want it to say %q", err, w)
				}
			}
			for _, secret := range []string{key, "sk-wrong-key-0987654321"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("Probe's error holds the key: %q", err)
				}
			}
		})
	}
}
