package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// initialize sends one raw initialize for the fixture's Agent, as a client that never
// opens an event stream or closes its session would, and returns the new session's id.
func (f *fixture) initialize(t *testing.T) string {
	t.Helper()
	resp, _ := rawDo(t, f.url, map[string]string{"Authorization": "Bearer " + f.token},
		strings.ReplaceAll(initBody, "%q", `"`+contract.ProtocolVersion+`"`))
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize = %d with session %q, want 200 and a session", resp.StatusCode, id)
	}
	return id
}

// TestGateway_SessionChurn: an Agent that re-initializes in a loop leaves one open
// session, not one per initialize, and the gateway remembers a bounded number of the
// ids it replaced (85,000 re-initializes once grew serve to 1.31 GB).
func TestGateway_SessionChurn(t *testing.T) {
	f := newFixture(t, time.Second)
	const n = 100
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.initialize(t)
	}
	if got := f.gw.OpenSessions(); got != 1 {
		t.Errorf("open sessions after %d initializes = %d, want 1", n, got)
	}
	if got := f.gw.RememberedReplaced(); got > 64 {
		t.Errorf("remembered replaced ids after %d initializes = %d, want at most 64", n, got)
	}
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	tests := []struct {
		name   string
		id     string
		status int
		reason string
	}{
		{"the newest session is live", ids[n-1], http.StatusOK, ""},
		{"the session it replaced answers replaced", ids[n-2], http.StatusConflict, contract.ReasonConnectionReplaced},
		{"a session replaced long ago is forgotten", ids[0], http.StatusNotFound, contract.ReasonUnknownSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := rawPost(t, f.url, map[string]string{"Authorization": "Bearer " + f.token, "Mcp-Session-Id": tt.id,
				"Mcp-Protocol-Version": contract.ProtocolVersion}, ping)
			if status != tt.status || body.Error.Data.Reason != tt.reason {
				t.Errorf("ping on %s = %d %+v, want %d %q", tt.id, status, body.Error, tt.status, tt.reason)
			}
		})
	}
}
