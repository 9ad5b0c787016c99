package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
)

// TestServer_LogoutEndsStreams: logging out through the API ends the session's open event
// streams at once, and only that session's.
func TestServer_LogoutEndsStreams(t *testing.T) {
	s := newTestServer(t, console.Config{})
	mine, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	first, second, other := openEvents(t, s.Server, mine.Token.String()), openEvents(t, s.Server, mine.Token.String()), openEvents(t, s.Server, s.token)

	if resp, body := s.do(t, request{method: "DELETE", path: "/api/v1/sessions/current", bearer: mine.Token.String()}); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout = %d %s, want 204", resp.StatusCode, body)
	}
	<-first.ended // the test's deadline fails it if a stream stays open
	<-second.ended
	select {
	case why := <-other.ended:
		t.Errorf("another session's stream ended too: %s", why)
	default:
	}
}
