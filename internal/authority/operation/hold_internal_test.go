package operation

import (
	"encoding/json"
	"testing"
)

// TestOutcomeResult checks that an Action's Result is json.Marshal's of the map it was
// encoded from before, whatever the Action's name holds.
func TestOutcomeResult(t *testing.T) {
	tests := []struct {
		action        string
		rows, changes int
	}{
		{"load", 1, 0},
		{"load", 0, 12},
		{"", 0, 0},
		{`a "quoted" <b> & c\d`, 3, 4},
		{"caf\u00e9 \u2028 \x01", 1 << 20, 7},
		{"\xff", 2, 2},
	}
	for _, tt := range tests {
		want, err := json.Marshal(map[string]any{"action": tt.action, "rows": tt.rows, "changes": tt.changes})
		if err != nil {
			t.Fatal(err)
		}
		got, err := outcomeResult(tt.action, tt.rows, tt.changes)
		if err != nil || string(got) != string(want) {
			t.Errorf("outcomeResult(%q, %d, %d) = %s, %v; want %s", tt.action, tt.rows, tt.changes, got, err, want)
		}
	}
}
