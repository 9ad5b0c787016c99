package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// maxObservedBody bounds what the transport reads of an error or ping answer to learn
// its reason or metadata; tool results pass through untouched.
const maxObservedBody = 4 << 20

// sessionHeader names the MCP session of a Streamable HTTP request and its answer.
const sessionHeader = "Mcp-Session-Id"

// transport sits under the SDK's Streamable HTTP client. It adds the Agent's bearer
// token, and it watches the HTTP layer for what the SDK folds into plain errors: the
// status and JSON-RPC reason of a refused request (401, 404, 409), and the _meta of
// ping answers, which carry the strip but which the SDK's Ping discards.
// It is safe for concurrent use.
type transport struct {
	base  http.RoundTripper
	token string

	// mu guards the fields below.
	mu sync.Mutex
	// refusal is the last non-2xx answer seen, taken (and cleared) by the Client
	// after a failed request; calls are serial, so it belongs to that request.
	refusal *refusal
	// pingMeta is _meta["docket/v1"] of the last ping answered, matched to its
	// request by JSON-RPC id and session; taken (and cleared) by Client.Strip.
	pingMeta json.RawMessage
	// ordinals maps a call's progress token to the operation ordinal its progress
	// notifications named; taken (and deleted) by Client.Call.
	ordinals map[string]int64
}

// refusal is an HTTP answer outside 2xx.
type refusal struct {
	status int
	reason string // data.reason of the JSON-RPC error, when the body held one
}

// rpcHead is the part of a JSON-RPC message the transport reads.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params *struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
	Result *struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"result"`
	Error *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// RoundTrip must not modify the caller's request.
	req = req.Clone(req.Context())
	// The Agent's token goes only to https or loopback, each redirect included (a
	// RoundTripper sees every hop).
	if err := contract.CheckCredentialURL(req.URL.String()); err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	var sent rpcHead
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if err := json.Unmarshal(body, &sent); err != nil {
			sent = rpcHead{} // a batch or a non-object is not watched: no ping or progress to follow
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
		if resp, err = t.resume(req, resp); err != nil {
			return nil, err
		}
	}
	if resp.StatusCode/100 != 2 {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxObservedBody))
		resp.Body.Close()
		if rerr != nil {
			return nil, fmt.Errorf("read refusal (status %d): %w", resp.StatusCode, rerr)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		r := &refusal{status: resp.StatusCode, reason: reasonOf(body)} // no reason: the status alone classifies it
		t.mu.Lock()
		t.refusal = r
		t.mu.Unlock()
		return resp, nil
	}
	sameSession := resp.Header.Get(sessionHeader) == "" || resp.Header.Get(sessionHeader) == req.Header.Get(sessionHeader)
	if sent.Method == "ping" && len(sent.ID) > 0 && sameSession {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxObservedBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read ping answer: %w", err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if meta, ok := pingMeta(body, resp.Header.Get("Content-Type"), sent.ID); ok {
			t.mu.Lock()
			t.pingMeta = meta
			t.mu.Unlock()
		}
	}
	if sent.Method == "tools/call" && sent.Params != nil {
		var pm struct {
			ProgressToken string `json:"progressToken"`
		}
		if raw, ok := sent.Params.Meta["progressToken"]; ok && json.Unmarshal(raw, &pm.ProgressToken) != nil {
			pm.ProgressToken = "" // a numeric token is not one this client sent: not watched
		}
		if pm.ProgressToken != "" && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			resp.Body = &progressWatcher{ReadCloser: resp.Body, t: t, token: pm.ProgressToken}
		}
	}
	return resp, nil
}

// Bounds of a stream resume answered 409 while the call it resumes is still held.
const (
	resumeTries = 6                     // GETs in all
	resumeFirst = 50 * time.Millisecond // the pause before the second, doubled for each one after
)

// resume sends a stream resume (GET with Last-Event-ID) again while it is answered 409
// without connection_replaced: the gateway still serves the held call's own stream (the
// MCP SDK answers "stream ID conflicts with ongoing stream"), which is not a replaced
// connection (docs/mcp.md, One client per Agent). It gives up after resumeTries, with the
// last answer: the client then reads the call's answer as lost, and its outcome comes
// from the strip; the call is never sent again.
func (t *transport) resume(req *http.Request, resp *http.Response) (*http.Response, error) {
	pause := resumeFirst
	for try := 1; try < resumeTries && resp.StatusCode == http.StatusConflict; try++ {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxObservedBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read refusal (status %d): %w", resp.StatusCode, err)
		}
		if reasonOf(body) == contract.ReasonConnectionReplaced {
			resp.Body = io.NopCloser(bytes.NewReader(body))
			return resp, nil
		}
		timer := time.NewTimer(pause)
		select {
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		case <-timer.C:
		}
		pause *= 2
		if resp, err = t.base.RoundTrip(req.Clone(req.Context())); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// reasonOf is data.reason of a JSON-RPC error body; "" when it holds none.
func reasonOf(body []byte) string {
	var head rpcHead
	if json.Unmarshal(body, &head) != nil || head.Error == nil {
		return ""
	}
	var data struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal(head.Error.Data, &data) != nil {
		return ""
	}
	return data.Reason
}

// progressWatcher passes a call's SSE stream through to the SDK and notes the ordinal of
// each progress notification for the call's token on the way. It reads ahead of the SDK,
// so the ordinal is known by the time the SDK has read the answer that follows it; the
// SDK's own notification handler runs concurrently with the answer and may come too late.
type progressWatcher struct {
	io.ReadCloser
	t       *transport
	token   string
	partial []byte // an unfinished line
}

func (w *progressWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	w.partial = append(w.partial, p[:n]...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(w.partial[:i], "\r")
		w.partial = w.partial[i+1:]
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		var note struct {
			Method string `json:"method"`
			Params struct {
				ProgressToken any `json:"progressToken"`
				Meta          map[string]struct {
					Ordinal int64 `json:"ordinal"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(bytes.TrimSpace(data), &note) != nil || note.Method != "notifications/progress" || note.Params.ProgressToken != w.token {
			continue
		}
		if o := note.Params.Meta[metaKey].Ordinal; o > 0 {
			w.t.mu.Lock()
			if w.t.ordinals == nil {
				w.t.ordinals = map[string]int64{}
			}
			w.t.ordinals[w.token] = o
			w.t.mu.Unlock()
		}
	}
	if len(w.partial) > maxObservedBody {
		w.partial = nil // a line this long is a tool result, not a notification
	}
	return n, err
}

// takeOrdinal returns and forgets the ordinal noted for a progress token, 0 when none.
func (t *transport) takeOrdinal(token string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.ordinals[token]
	delete(t.ordinals, token)
	return o
}

// takeRefusal returns and clears the last refusal.
func (t *transport) takeRefusal() *refusal {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.refusal
	t.refusal = nil
	return r
}

// takePing returns and clears the metadata of the last ping answer.
func (t *transport) takePing() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.pingMeta
	t.pingMeta = nil
	return m
}

// pingMeta finds, in a JSON or SSE body, the answer whose id is id and returns its
// _meta["docket/v1"].
func pingMeta(body []byte, contentType string, id json.RawMessage) (json.RawMessage, bool) {
	var messages [][]byte
	if strings.HasPrefix(strings.TrimSpace(contentType), "text/event-stream") {
		messages = sseData(body)
	} else {
		messages = [][]byte{body}
	}
	for _, m := range messages {
		var head rpcHead
		if json.Unmarshal(m, &head) != nil || head.Result == nil || !bytes.Equal(bytes.TrimSpace(head.ID), bytes.TrimSpace(id)) {
			continue
		}
		meta, ok := head.Result.Meta[metaKey]
		return meta, ok
	}
	return nil, false
}

// sseData returns the data of each event of an SSE body.
func sseData(body []byte) [][]byte {
	var out [][]byte
	var cur []byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxObservedBody)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur != nil {
				out = append(out, cur)
				cur = nil
			}
		case strings.HasPrefix(line, "data:"):
			d := strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
			if cur != nil {
				cur = append(cur, '\n')
			}
			cur = append(cur, d...)
		}
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}
