package gateway_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// sseEvent is one server-sent event.
type sseEvent struct{ id, data string }

// readEvents reads events from r until it has n of them or the stream ends.
func readEvents(r io.Reader, n int) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id:"):
			cur.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			cur.data += strings.TrimSpace(line[5:])
		case line == "" && cur.data != "":
			out = append(out, cur)
			cur = sseEvent{}
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

func TestGateway_Replay(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	cs := f.connect(t, nil)
	headers := func(req *http.Request) {
		req.Header.Set("Authorization", "Bearer "+f.token)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", contract.ProtocolVersion)
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	body := `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"ApplyAction","arguments":{"action":"fetch","params":{"path":"a.txt"}},"_meta":{"progressToken":"p"}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, strings.NewReader(body))
	headers(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	evs := readEvents(resp.Body, 2)
	resp.Body.Close()
	if len(evs) != 2 || evs[0].id == "" || evs[1].id == "" || !strings.Contains(evs[0].data, "notifications/progress") || !strings.Contains(evs[1].data, `"id":41`) {
		t.Fatalf("held call stream = %+v, want a progress event and the answer, each with an id", evs)
	}

	// The stream was cut after the progress event: GET with Last-Event-ID replays the answer.
	// Until the POST's handler has returned, the SDK holds that stream as ongoing and
	// answers 409; a resuming client tries again, and so does this one, for a bounded time.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		get, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
		headers(get)
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Last-Event-ID", evs[0].id)
		resp, err = http.DefaultClient.Do(get)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
			resp.Body.Close()
			continue
		}
		break
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET with Last-Event-ID = %d %s", resp.StatusCode, b)
	}
	replayed := readEvents(resp.Body, 1)
	if len(replayed) != 1 || replayed[0].data != evs[1].data {
		t.Errorf("replayed = %+v, want the answer %q", replayed, evs[1].data)
	}
}
