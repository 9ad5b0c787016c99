package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/workbench"
)

// TestStart_KeepsAddressAndRunKey: docket start keeps its address and run key across
// restarts (in a 0600 file of the data dir), so the printed URL keeps working, even when
// --listen leaves the port to the system; --rotate-key makes a new key on the same
// address, and the old one is refused.
func TestStart_KeepsAddressAndRunKey(t *testing.T) {
	s := newStartEnv(t)
	health := func(addr, key string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/api/v1/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Docket-Run-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	p, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	if fi, err := os.Stat(filepath.Join(s.home, workbench.StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v (%v), want mode 0600", workbench.StateFile, fi.Mode(), err)
	}
	if got := health(addr, key); got != http.StatusOK {
		t.Fatalf("health with the run key = %d", got)
	}
	s.stop(t, p)

	tests := []struct {
		name     string
		args     []string
		sameKey  bool
		oldKeyOK bool
	}{
		{"port 0 again keeps both", []string{"--listen", "127.0.0.1:0"}, true, true},
		{"no --listen keeps both", nil, true, true},
		{"--rotate-key keeps the address, not the key", []string{"--rotate-key"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, addr2, key2 := s.run(t, tt.args...)
			defer s.stop(t, p)
			if addr2 != addr {
				t.Errorf("address %s, want the last run's %s", addr2, addr)
			}
			if (key2 == key) != tt.sameKey {
				t.Errorf("run key %s after %s, last run's %s; want same %v", key2, tt.name, key, tt.sameKey)
			}
			if got, want := health(addr2, key), map[bool]int{true: 200, false: 401}[tt.oldKeyOK]; got != want {
				t.Errorf("health with the old key = %d, want %d", got, want)
			}
			if got := health(addr2, key2); got != http.StatusOK {
				t.Errorf("health with this run's key = %d, want 200", got)
			}
			key = key2
		})
	}
}
