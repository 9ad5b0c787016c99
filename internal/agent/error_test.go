package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"-3", 0},
		{"999999", 0},
		{"Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second},
		{" 12 ", 12 * time.Second},
		{"Thursday, 01-Jan-26 00:01:00 GMT", time.Minute},
		{"Thu Jan  1 00:00:05 2026", 5 * time.Second},
		{"Thu, 01 Jan 2026 00:00:00 GMT", 0},
		{"1e3", 1000 * time.Second},
		{"NaN", 0},
		{"Wed, 31 Dec 2025 23:59:00 GMT", 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := agent.ParseRetryAfter(tt.h, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestKindOfStatus(t *testing.T) {
	tests := []struct {
		status int
		want   agent.ErrorKind
	}{
		{401, agent.KindAuth}, {403, agent.KindAuth}, {429, agent.KindRateLimit}, {413, agent.KindContextLength},
		{400, agent.KindBadRequest}, {404, agent.KindBadRequest}, {500, agent.KindServer}, {529, agent.KindServer},
	}
	for _, tt := range tests {
		if got := agent.KindOfStatus(tt.status); got != tt.want {
			t.Errorf("KindOfStatus(%d) = %s, want %s", tt.status, got, tt.want)
		}
	}
}

func TestProviderError(t *testing.T) {
	tests := []struct {
		name      string
		err       agent.ProviderError
		retryable bool
		after     time.Duration
		text      string
	}{
		{"rate limit waits", agent.ProviderError{Provider: "p", Kind: agent.KindRateLimit, Status: 429, After: 3 * time.Second, Message: "slow"}, true, 3 * time.Second, "p: rate_limit (HTTP 429): slow; retry after 3s"},
		{"server retries", agent.ProviderError{Provider: "p", Kind: agent.KindServer, Status: 500}, true, 0, "p: server (HTTP 500)"},
		{"transport retries", agent.ProviderError{Provider: "p", Kind: agent.KindTransport}, true, 0, "p: transport"},
		{"auth does not", agent.ProviderError{Provider: "p", Kind: agent.KindAuth, Status: 401, After: time.Second}, false, 0, "p: auth (HTTP 401)"},
		{"quota does not", agent.ProviderError{Provider: "p", Kind: agent.KindQuota, Status: 429}, false, 0, "p: quota"},
		{"context length does not", agent.ProviderError{Provider: "p", Kind: agent.KindContextLength, Status: 400}, false, 0, "p: context_length"},
		{"malformed stream does not", agent.ProviderError{Provider: "p", Kind: agent.KindStream, Message: "a chunk is not JSON"}, false, 0, "p: stream: a chunk is not JSON"},
		{"cut stream retries", agent.ProviderError{Provider: "p", Kind: agent.KindStream, Message: "no [DONE]", Cut: true}, true, 0, "p: stream: no [DONE]"},
		{"stall retries", agent.ProviderError{Provider: "p", Kind: agent.KindStalled, Message: "idle deadline"}, true, 0, "p: stalled: idle deadline"},
		{"overload retries and waits", agent.ProviderError{Provider: "p", Kind: agent.KindServer, Status: 529, After: 2 * time.Second}, true, 2 * time.Second, "p: server (HTTP 529); retry after 2s"},
		{"bad request does not", agent.ProviderError{Provider: "p", Kind: agent.KindBadRequest, Status: 400, After: time.Second}, false, 0, "p: bad_request (HTTP 400)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.err
			if e.Retryable() != tt.retryable || e.RetryAfter() != tt.after || !strings.HasPrefix(e.Error(), tt.text) {
				t.Errorf("%+v: Retryable %v RetryAfter %v Error %q, want %v %v %q", e, e.Retryable(), e.RetryAfter(), e.Error(), tt.retryable, tt.after, tt.text)
			}
			if e.Code() == "" || e.Code() == "internal" {
				t.Errorf("%s has no code of its own: %q", e.Kind, e.Code())
			}
		})
	}
}
