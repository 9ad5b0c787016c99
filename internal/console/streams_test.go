package console_test

import (
	"bufio"
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
)

// TestServer_LogoutEndsStreams: logging out through the API ends the session's open event
// streams at once, and only that session's.
func TestServer_LogoutEndsStreams(t *testing.T) {
	s := newTestServer(t, console.Config{})
	mine, err := s.a.Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	open := func(tok string) <-chan error {
		req, err := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api/v1/events?project=default", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("event stream = %d, want 200", resp.StatusCode)
		}
		ended := make(chan error, 1) // written once by the reading goroutine
		go func() {
			rd := bufio.NewReader(resp.Body)
			for {
				if _, err := rd.ReadString('\n'); err != nil {
					ended <- err
					return
				}
			}
		}()
		return ended
	}
	first, second, other := open(mine.Token.String()), open(mine.Token.String()), open(s.token)

	if resp, body := s.do(t, request{method: "DELETE", path: "/api/v1/sessions/current", bearer: mine.Token.String()}); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout = %d %s, want 204", resp.StatusCode, body)
	}
	<-first // the test's deadline fails it if a stream stays open
	<-second
	select {
	case err := <-other:
		t.Errorf("another session's stream ended too: %v", err)
	default:
	}
}
