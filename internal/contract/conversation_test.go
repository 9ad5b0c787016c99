package contract_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestConversationGolden pins the JSON form of the conversation wire types in
// testdata/conversation/<name>.json, and checks that each golden decodes back to its
// value. Refresh with go test -update.
func TestConversationGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	budget := contract.BudgetExhausted{Scope: "conversation", Kind: "tokens", Limit: 1000, Used: 1100, Turns: 3, InputTokens: 1000, OutputTokens: 100, USD: 0.0125}
	tests := []struct {
		name string
		v    any
	}{
		{"save", &contract.ConversationSave{Prev: 41, From: 2, Messages: []json.RawMessage{json.RawMessage(`{"role":"user","text":"go"}`)}, State: json.RawMessage(`{"lastOrdinal":3}`)}},
		{"head", &contract.ConversationHead{ID: "c-01", Seq: 42, Messages: 3}},
		{"budget_exhausted", &budget},
		{"conversation", &contract.Conversation{ID: "c-01", Project: "default", Agent: "agt_0123456789abcdef", Seq: 42, UpdatedAt: at,
			Messages: []json.RawMessage{json.RawMessage(`{"role":"user","text":"go"}`)}, State: json.RawMessage(`{"lastOrdinal":3}`), Budgets: []contract.BudgetExhausted{budget}}},
		{"summary_page", &contract.Page[contract.ConversationSummary]{Items: []contract.ConversationSummary{{ID: "c-01", Agent: "agt_0123456789abcdef", Seq: 42, UpdatedAt: at, Messages: 3, Budgets: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "conversation", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run go test -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
			back := reflect.New(reflect.TypeOf(tt.v).Elem()).Interface()
			if err := json.Unmarshal(want, back); err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			// Raw JSON is compared compacted: the golden is indented.
			compact := cmp.Transformer("compact", func(m json.RawMessage) string {
				var b bytes.Buffer
				if err := json.Compact(&b, m); err != nil {
					return string(m)
				}
				return b.String()
			})
			if diff := cmp.Diff(tt.v, back, compact); diff != "" {
				t.Errorf("golden decodes to (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConversationID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"generated", "c-0a1b2c3d4e5f", true},
		{"dotted", "job.2026_11", true},
		{"empty", "", false},
		{"a path", "../etc", false},
		{"hidden", ".c", false},
		{"a slash", "a/b", false},
		{"65 characters", "a" + string(make([]byte, 64)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := contract.ParseConversationID(tt.in)
			if (err == nil) != tt.ok || (err == nil && id.String() != tt.in) {
				t.Errorf("ParseConversationID(%q) = %q, %v; want ok %v", tt.in, id, err, tt.ok)
			}
			if err != nil && contract.CodeOf(err) != contract.CodeInvalidArgument {
				t.Errorf("ParseConversationID(%q) error code = %q, want %q", tt.in, contract.CodeOf(err), contract.CodeInvalidArgument)
			}
		})
	}
}
