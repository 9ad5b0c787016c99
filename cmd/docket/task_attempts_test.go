package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestAttemptLines: docket task show says each model turn that was sent again and each
// that failed, in the order they came, numbered as the model's turns.
func TestAttemptLines(t *testing.T) {
	rate := `{"attempt":1,"of":5,"provider":"openai","kind":"rate_limit","status":429,"waitMs":4000,"asked":true}`
	msgs := []json.RawMessage{
		json.RawMessage(`{"role":"user","text":"go"}`),
		json.RawMessage(`{"role":"assistant","calls":[{"id":"k1","name":"QueryBoard","arguments":{}}],"turn":{"model":"openai m","retries":[` + rate + `]}}`),
		json.RawMessage(`{"role":"user","results":[{"callId":"k1","content":"{}"}]}`),
		json.RawMessage(`{"role":"assistant","text":"done","turn":{"model":"openai m"}}`),
	}
	failed := `{"failed":[{"model":"openai m","at":"2026-12-02T10:00:00Z","after":3,"code":"model_stalled","attempts":[
		{"attempt":1,"of":2,"provider":"openai","kind":"stalled","waitMs":1000},{"attempt":2,"of":2,"provider":"openai","kind":"stalled","waitMs":0}]}]}`
	tests := []struct {
		name  string
		state string
		want  []string
	}{
		{"a state in another form", `{"failed":"no"}`, []string{"model turn 1 was sent 2 times: rate limited (HTTP 429), waited 4 s as it asked; then answered"}},
		{"retried only", `{"spent":{}}`, []string{"model turn 1 was sent 2 times: rate limited (HTTP 429), waited 4 s as it asked; then answered"}},
		{"a turn failed between", failed, []string{
			"model turn 1 was sent 2 times: rate limited (HTTP 429), waited 4 s as it asked; then answered",
			"model turn 2 failed at 2026-12-02T10:00:00Z with model_stalled after 2 attempt(s) at openai m: model stalled, waited 1 s; model stalled, gave up",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := attemptLines(contract.Conversation{ID: "c1", Messages: msgs, State: json.RawMessage(tt.state)})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
