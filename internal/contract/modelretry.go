package contract

import (
	"fmt"
	"strings"
	"time"
)

// ModelAttempt is one attempt of a model request as an Agent's conversation records it
// (docs/workbench.md, Model retries): which attempt of how many, the provider, what failed
// (the runtime's error kind, and the HTTP status when there was one) and how long the
// runtime waited before the next attempt; Asked when that wait was the endpoint's
// Retry-After. The runtime's agent.Retry has this JSON form.
type ModelAttempt struct {
	Attempt  int    `json:"attempt"`
	Of       int    `json:"of"`
	Provider string `json:"provider"`
	Kind     string `json:"kind"`
	Status   int    `json:"status,omitempty"`
	WaitMS   int64  `json:"waitMs"`
	Asked    bool   `json:"asked,omitempty"`
}

// ModelFailureWords says in a few words what failed in one attempt of a model request, of
// the runtime's error kind and the HTTP status (0: none): "rate limited (HTTP 429)".
func ModelFailureWords(kind string, status int) string {
	var s string
	switch kind {
	case "rate_limit":
		s = "rate limited"
	case "server":
		s = "server failed"
		if status == 529 || status == 503 { // Anthropic's overloaded, and Service Unavailable
			s = "server overloaded"
		}
	case "transport":
		s = "connection failed"
	case "stream":
		s = "answer cut"
	case "stalled":
		s = "model stalled"
	default:
		s = kind
	}
	if status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", status)
	}
	return s
}

// ModelAttemptsText says what the attempts of one model request were, for a person:
// each failure and the wait after it, then how the request ended: "rate limited (HTTP
// 429), waited 0.2 s; answer cut, waited 1 s; then answered". gaveUp says the last of as
// is the failure the request gave up on, not a retried one.
func ModelAttemptsText(as []ModelAttempt, gaveUp bool) string {
	parts := make([]string, 0, len(as)+1)
	for i, a := range as {
		p := ModelFailureWords(a.Kind, a.Status)
		if gaveUp && i == len(as)-1 {
			parts = append(parts, p+", gave up")
			continue
		}
		wait := (time.Duration(a.WaitMS) * time.Millisecond).Round(100 * time.Millisecond)
		p += fmt.Sprintf(", waited %s", strings.TrimSuffix(fmt.Sprintf("%.1f", wait.Seconds()), ".0")+" s")
		if a.Asked {
			p += " as it asked"
		}
		parts = append(parts, p)
	}
	if !gaveUp {
		parts = append(parts, "then answered")
	}
	return strings.Join(parts, "; ")
}

// ModelAttemptsMade is how many attempts of one model request as lists: the last one's
// number (a record may keep only the newest attempts); 0 for none.
func ModelAttemptsMade(as []ModelAttempt) int {
	if len(as) == 0 {
		return 0
	}
	return max(as[len(as)-1].Attempt, len(as))
}
