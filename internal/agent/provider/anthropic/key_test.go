package anthropic_test

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
	const sentinel = "sk-ant-SENTINEL-3f9c1a"
	t.Setenv(agent.KeyEnv, sentinel)
	key, err := agent.LoadKey("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	replies := map[string]reply{
		"401 echoing the key":     {status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: $KEY"}}`},
		"429 echoing the key":     {status: 429, headers: map[string]string{"retry-after": "1"}, body: `$KEY`},
		"500 text echoing it":     {status: 500, body: `upstream said $KEY`},
		"stream error echoing it": {body: sseBody(`{"type":"message_start","message":{"usage":{}}}`, `{"type":"error","error":{"type":"api_error","message":"bad key $KEY"}}`)},
		"garbage echoing it":      {body: "$KEY\n\n"},
		"bad JSON echoing it":     {body: "data: {\"$KEY\n\n"},
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
			if got.headers.Get("x-api-key") != sentinel {
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
