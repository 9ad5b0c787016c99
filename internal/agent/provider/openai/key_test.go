package openai_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

// TestClient_Turn_keyNeverLeaks runs every failure path with a sentinel key taken from the
// environment, with endpoints that echo the key back, and looks for it in every error
// string, log line and panic value.
func TestClient_Turn_keyNeverLeaks(t *testing.T) {
	const sentinel = "sk-proj-SENTINEL-77e1d0"
	t.Setenv(agent.KeyEnv, sentinel)
	key, err := agent.LoadKey("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	replies := map[string]reply{
		"401 echoing the key":       {status: 401, body: `{"error":{"message":"Incorrect API key provided: $KEY","code":"invalid_api_key"}}`},
		"429 echoing the key":       {status: 429, headers: map[string]string{"Retry-After": "1"}, body: `{"error":"$KEY"}`},
		"500 text echoing it":       {status: 500, body: `upstream said $KEY`},
		"error chunk echoing it":    {body: chunks(`{"error":{"message":"bad key $KEY"}}`)},
		"garbage line echoing it":   {body: "$KEY\n\n"},
		"truncated JSON echoing it": {body: "data: {\"$KEY\n\n"},
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for name, r := range replies {
		t.Run(name, func(t *testing.T) {
			url, got := serve(t, r)
			c := newClient(t, url, key)
			_, err := c.Turn(t.Context(), conversation, nil)
			if err == nil {
				t.Fatal("Turn succeeded, want an error")
			}
			if got.headers.Get("Authorization") != "Bearer "+sentinel {
				t.Fatalf("the endpoint did not receive the key, so this test proves nothing")
			}
			log.Error("model turn", "err", err, "key", key, "client", c)
			for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", c), fmt.Sprint(c), panicText(c), panicText(err)} {
				if strings.Contains(s, sentinel) {
					t.Errorf("the key leaked: %s", s)
				}
			}
		})
	}
	if strings.Contains(logs.String(), sentinel) {
		t.Errorf("the key leaked into a log line: %s", logs.String())
	}
}

// panicText is what a panic with v would print.
func panicText(v any) (s string) {
	defer func() { s = fmt.Sprint(recover()) }()
	panic(v)
}
