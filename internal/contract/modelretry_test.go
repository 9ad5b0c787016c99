package contract_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

func TestModelAttemptsText(t *testing.T) {
	rate := contract.ModelAttempt{Attempt: 1, Of: 5, Provider: "openai", Kind: "rate_limit", Status: 429, WaitMS: 200, Asked: true}
	cut := contract.ModelAttempt{Attempt: 2, Of: 5, Provider: "openai", Kind: "stream", WaitMS: 1500}
	over := contract.ModelAttempt{Attempt: 3, Of: 5, Provider: "anthropic", Kind: "server", Status: 529}
	tests := []struct {
		name   string
		as     []contract.ModelAttempt
		gaveUp bool
		want   string
	}{
		{"answered after retries", []contract.ModelAttempt{rate, cut}, false, "rate limited (HTTP 429), waited 0.2 s as it asked; answer cut, waited 1.5 s; then answered"},
		{"gave up", []contract.ModelAttempt{rate, cut, over}, true, "rate limited (HTTP 429), waited 0.2 s as it asked; answer cut, waited 1.5 s; server overloaded (HTTP 529), gave up"},
		{"failed at once", []contract.ModelAttempt{{Attempt: 1, Of: 1, Provider: "openai", Kind: "auth", Status: 401}}, true, "auth (HTTP 401), gave up"},
		{"whole seconds", []contract.ModelAttempt{{Kind: "stalled", WaitMS: 4000}}, false, "model stalled, waited 4 s; then answered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contract.ModelAttemptsText(tt.as, tt.gaveUp); got != tt.want {
				t.Errorf("ModelAttemptsText = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestModelAttemptsMade(t *testing.T) {
	tests := []struct {
		as   []contract.ModelAttempt
		want int
	}{
		{nil, 0},
		{[]contract.ModelAttempt{{Attempt: 1}, {Attempt: 2}}, 2},
		{[]contract.ModelAttempt{{Attempt: 24}, {Attempt: 25}}, 25}, // the newest kept
	}
	for _, tt := range tests {
		if got := contract.ModelAttemptsMade(tt.as); got != tt.want {
			t.Errorf("ModelAttemptsMade(%+v) = %d, want %d", tt.as, got, tt.want)
		}
	}
}
