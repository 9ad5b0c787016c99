package workbench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestState_Address: the gate keeps the last run's address unless --listen names another
// port; a first run takes --listen, or DefaultListen without it.
func TestState_Address(t *testing.T) {
	saved := state{Listen: "127.0.0.1:45001", RunKey: "K"}
	tests := []struct {
		name string
		st   state
		flag string
		want string
	}{
		{"first run, no flag", state{}, "", DefaultListen},
		{"first run, port 0", state{}, "127.0.0.1:0", "127.0.0.1:0"},
		{"first run, a port", state{}, "127.0.0.1:7421", "127.0.0.1:7421"},
		{"again, no flag", saved, "", "127.0.0.1:45001"},
		{"again, port 0", saved, "127.0.0.1:0", "127.0.0.1:45001"},
		{"again, another port", saved, "127.0.0.1:7421", "127.0.0.1:7421"},
		{"again, localhost port 0", saved, "localhost:0", "127.0.0.1:45001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.st.address(tt.flag); got != tt.want {
				t.Errorf("address(%q) = %q, want %q", tt.flag, got, tt.want)
			}
		})
	}
}

// TestState_SaveLoad: the state round-trips through a 0600 file; a file that is not the
// state is refused with the fix rather than read as an empty one.
func TestState_SaveLoad(t *testing.T) {
	dir := t.TempDir()
	if st, err := loadState(dir); err != nil || st != (state{}) {
		t.Fatalf("loadState of a fresh dir = %+v, %v; want the zero state", st, err)
	}
	want := state{Listen: "127.0.0.1:45001", RunKey: "RUNKEY"}
	if err := saveState(dir, want); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v (%v), want 0600", fi.Mode(), err)
	}
	if got, err := loadState(dir); err != nil || got != want {
		t.Errorf("loadState = %+v, %v; want %+v", got, err, want)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"listen":"x","runKey":"y","extra":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadState(dir); err == nil {
		t.Error("a state with an unknown field was read")
	}
}

// TestNeedsKey: only an OpenAI-compatible (or emulated) server on loopback, and the
// scripted model, run without a key.
func TestNeedsKey(t *testing.T) {
	tests := []struct {
		provider, url string
		want          bool
	}{
		{"openai", "http://127.0.0.1:8080/v1", false},
		{"openai", "http://localhost:8080", false},
		{"openai", "http://[::1]:8080", false},
		{"emulated", "http://127.0.0.1:8080", false},
		{"scripted", "", false},
		{"openai", "", true},
		{"openai", "https://api.openai.com/v1", true},
		{"openai", "http://10.0.0.5:8080", true},
		{"openai", "http://127.0.0.1.example.com", true},
		{"anthropic", "http://127.0.0.1:8080", true},
		{"anthropic", "", true},
	}
	for _, tt := range tests {
		if got := NeedsKey(tt.provider, tt.url); got != tt.want {
			t.Errorf("NeedsKey(%s, %q) = %v, want %v", tt.provider, tt.url, got, tt.want)
		}
	}
}

// TestLastLine: a runtime's last words are its last line that is not the supervisor's,
// cut to a bound.
func TestLastLine(t *testing.T) {
	dir := t.TempDir()
	long := make([]byte, 2*maxReasonText)
	for i := range long {
		long[i] = 'x'
	}
	tests := []struct {
		name, log, want string
	}{
		{"missing file", "", ""},
		{"the child's last line", "--- supervisor: start 1\nstarting\ndocket: model_config: the key file is readable by others\n--- supervisor: agent exited: exit status 2\n", "docket: model_config: the key file is readable by others"},
		{"only the supervisor's", "--- supervisor: start 1\n\n", ""},
		{"cut", string(long) + "\n", string(long[:maxReasonText]) + "…"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if i > 0 {
				if err := os.WriteFile(p, []byte(tt.log), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := lastLine(p); got != tt.want {
				t.Errorf("lastLine = %q, want %q", got, tt.want)
			}
		})
	}
}
