package mcpclient_test

import (
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
)

// BenchmarkClient_Call measures one QueryBoard round trip through the SDK client, the
// transport's watchers and an SDK server on loopback.
func BenchmarkClient_Call(b *testing.B) {
	gw := gatewaytest.New(b)
	c := dial(b, gw)
	args := json.RawMessage(`{}`)
	for b.Loop() {
		if _, err := c.Call(b.Context(), "QueryBoard", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClient_Strip measures one ping that brings back the strip.
func BenchmarkClient_Strip(b *testing.B) {
	gw := gatewaytest.New(b)
	c := dial(b, gw)
	for b.Loop() {
		if _, err := c.Strip(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
