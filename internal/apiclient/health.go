package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// healthPoll is how often [WaitHealthy] asks again.
const healthPoll = 50 * time.Millisecond

// healthTimeout bounds one health call, so a server that accepts and never answers is
// asked again.
const healthTimeout = 2 * time.Second

// WaitHealthy asks GET /api/v1/health of the server locate names until it answers, or
// within passes, or ctx ends; it returns the health and the URL that answered. locate is
// asked again each time, because a server that is still starting has not yet written
// where it listens. rt carries the calls (one that trusts serve's CA over https); nil is
// net/http's default.
func WaitHealthy(ctx context.Context, within time.Duration, rt http.RoundTripper, locate func() (string, error)) (contract.Health, string, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(healthPoll)
	defer tick.Stop()
	for {
		base, err := locate()
		if err == nil {
			c := &Client{URL: base, HTTP: &http.Client{Transport: rt, Timeout: healthTimeout}}
			var h contract.Health
			if err = c.Do(ctx, http.MethodGet, "/api/v1/health", nil, &h); err == nil {
				return h, base, nil
			}
			if contract.CodeOf(err) == contract.CodeTLSUntrusted {
				return contract.Health{}, "", err // asking again is refused again
			}
		}
		select {
		case <-ctx.Done():
			return contract.Health{}, "", fmt.Errorf("wait for docket serve: %w", err)
		case <-tick.C:
		}
	}
}
