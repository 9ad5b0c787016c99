package event_test

import (
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
)

func TestCatalogListsEachTypeOnce(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, k := range event.Catalog {
		if seen[k.Type] {
			t.Errorf("%s is listed twice", k.Type)
		}
		seen[k.Type] = true
	}
}

func TestChangesBoard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ  string
		want bool
	}{
		{event.BatchApplied, true},
		{event.CapabilityInstalled, true},
		{event.OpAdmitted, false},
		{event.OpWaiting, false},
		{event.WorkClaimed, false},
		{event.ConversationSaved, false},
		{"a.type.added.later", true}, // unknown: the cache is rebuilt rather than trusted
	}
	for _, tt := range tests {
		if got := event.ChangesBoard(tt.typ); got != tt.want {
			t.Errorf("ChangesBoard(%q) = %v, want %v", tt.typ, got, tt.want)
		}
	}
}
