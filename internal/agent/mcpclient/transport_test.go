package mcpclient

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzPingMeta feeds ping answers, as JSON or SSE, to the parser that finds the strip:
// it must not panic, and what it returns is JSON.
func FuzzPingMeta(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"docket/v1":{"agentId":"a","operations":[{"ordinal":1,"tool":"ApplyAction","state":"done"}]}}}}`), "application/json")
	f.Add([]byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"_meta\":{\"docket/v1\":{}}}}\n\n"), "text/event-stream")
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":3}\n\n"), "text/event-stream")
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"result":{}}`), "application/json")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		meta, ok := pingMeta(body, contentType, json.RawMessage(`3`))
		if ok && !json.Valid(meta) {
			t.Fatalf("pingMeta returned %q, which is not JSON", meta)
		}
	})
}

// FuzzProgressWatcher checks that the watcher passes a call's stream through to the SDK
// unchanged, however the stream is cut into reads, and notes ordinals only for its token.
func FuzzProgressWatcher(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"docket-1\",\"progress\":1,\"_meta\":{\"docket/v1\":{\"ordinal\":7}}}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Add([]byte("data: {\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"_meta\":{\"docket/v1\":{\"ordinal\":9}}}}\r\n\r\n"))
	f.Add([]byte("data: \xff\xfe\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		tr := &transport{}
		w := &progressWatcher{ReadCloser: io.NopCloser(iotest.OneByteReader(bytes.NewReader(stream))), t: tr, token: "docket-1"}
		got, err := io.ReadAll(w)
		if err != nil {
			t.Fatalf("read through the watcher: %v", err)
		}
		if !bytes.Equal(got, stream) {
			t.Fatalf("the watcher changed the stream: got %q, want %q", got, stream)
		}
		if o := tr.takeOrdinal("docket-1"); o < 0 {
			t.Fatalf("noted ordinal %d, want none or a positive one", o)
		}
		if len(tr.ordinals) != 0 {
			t.Fatalf("noted ordinals for other tokens: %v", tr.ordinals)
		}
	})
}

func TestProgressWatcher_NotesOnlyItsToken(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   int64
	}{
		{name: "its token", stream: "data: {\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"docket-1\",\"_meta\":{\"docket/v1\":{\"ordinal\":7}}}}\r\n\r\n", want: 7},
		{name: "another token", stream: "data: {\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"docket-2\",\"_meta\":{\"docket/v1\":{\"ordinal\":7}}}}\n\n"},
		{name: "not a notification", stream: "data: {\"id\":1,\"result\":{\"_meta\":{\"docket/v1\":{\"ordinal\":7}}}}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &transport{}
			w := &progressWatcher{ReadCloser: io.NopCloser(iotest.HalfReader(bytes.NewReader([]byte(tt.stream)))), t: tr, token: "docket-1"}
			if _, err := io.ReadAll(w); err != nil {
				t.Fatal(err)
			}
			if got := tr.takeOrdinal("docket-1"); got != tt.want {
				t.Errorf("ordinal = %d, want %d", got, tt.want)
			}
		})
	}
}
