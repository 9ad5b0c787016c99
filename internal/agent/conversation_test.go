package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

func TestFileConversations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conversations")
	store := agent.FileConversations{Dir: dir}
	if _, err := store.Load(t.Context(), "c1"); !errors.Is(err, agent.ErrNoConversation) {
		t.Fatalf("Load of a missing conversation = %v, want ErrNoConversation", err)
	}
	c := &agent.Conversation{ID: "c1", Messages: []agent.Message{{Role: agent.RoleUser, Text: "go"}},
		InFlight: &agent.Pending{CallID: "call_1", Tool: "ApplyAction", After: 3}, LastOrdinal: 3}
	if err := store.Save(t.Context(), c); err != nil {
		t.Fatalf("Save: %v", err)
	}
	got, err := store.Load(t.Context(), "c1")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("Load after Save (-want +got):\n%s", diff)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "c1.json"): 0o600} {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, info.Mode().Perm(), err, want)
		}
	}
}

func TestCheckConversationID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"c-0a1b", true},
		{"job.2026_11", true},
		{"", false},
		{"../etc", false},
		{".hidden", false},
		{"a/b", false},
		{string(make([]byte, 65)), false},
	}
	for _, tt := range tests {
		err := agent.CheckConversationID(tt.id)
		if (err == nil) != tt.ok || (err != nil && contract.CodeOf(err) != contract.CodeConversation) {
			t.Errorf("CheckConversationID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
	}
}
