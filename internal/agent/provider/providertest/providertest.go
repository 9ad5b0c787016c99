// Package providertest provides model servers for tests that speak the providers' wire
// formats: an OpenAI Chat Completions-compatible and an Anthropic Messages-compatible
// endpoint, each playing a scripted model's turns and streaming them as those APIs
// stream, tool calls included, so that a runtime under test talks to them as to a model.
package providertest

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

// maxBody bounds a request body in bytes.
const maxBody = 32 << 20

// Seen is what a server received in one request, for a test to check: never the key,
// only whether the expected one came.
type Seen struct {
	Path    string
	Model   string
	System  string // the system prompt
	KeyOK   bool   // the key the server wants came in the provider's header (true when it wants none)
	Stream  bool
	Version string // anthropic-version, Anthropic only
	// Tokens is the request's size in the server's count ([BodyTokens]); OverWindow says
	// it was over the window [Server.SetWindow] gave, and refused.
	Tokens     int
	OverWindow bool
	// Answered says the server sent the answer whole, with the usage it reported in
	// Usage (what a runtime charges to its budgets); false for a refused request and an
	// answer given a fault (a 429, an overload, a stall, a cut), whose Usage is zero.
	Answered bool
	Usage    agent.Usage
}

// Server is a running model server. Close it when done (NewOpenAI and NewAnthropic do
// with t.Cleanup).
type Server struct {
	*httptest.Server
	play    *scripted.Provider
	key     string
	opts    options
	release chan struct{} // closed at cleanup: every stalled answer ends

	mu        sync.Mutex
	idle      *sync.Cond // signalled when answering reaches 0; uses mu
	answering int        // requests being answered now
	seen      []Seen
	window    int                  // see SetWindow; 0: any size
	sizes     []int                // each request's size in tokens
	attempts  map[[32]byte]int     // per request body: how many times it came
	reasoned  map[string]Reasoning // per tool call id: the reasoning answered with it
	stats     Stats
	bodies    [][]byte
}

// Bodies returns the body of every request the server received so far, in order, for a
// test to check what was sent to the model, whether the request was well-formed or not.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// keepBody records r's body and gives the handler a copy of it to read.
func (s *Server) keepBody(r *http.Request) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, b)
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

// Seen returns what the server received so far, in order, once no request is being
// answered: a client reads an answer's last event before the server's handler returns
// from writing it and notes it answered whole, so a test that asks right after its client
// returned would otherwise find the last answer not yet noted. A stalled answer ends when
// its client gives up on it, or when the server is closed.
func (s *Server) Seen() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.answering > 0 {
		s.idle.Wait()
	}
	return append([]Seen(nil), s.seen...)
}

// begin notes a request being answered until the returned func is called.
func (s *Server) begin() func() {
	s.mu.Lock()
	s.answering++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.answering--; s.answering == 0 {
			s.idle.Broadcast()
		}
	}
}

// record notes a request and returns its index in the log, for answered.
func (s *Server) record(v Seen) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, v)
	return len(s.seen) - 1
}

// answered notes that the request at index i of the log was answered whole, reporting u.
func (s *Server) answered(i int, u agent.Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[i].Answered, s.seen[i].Usage = true, u
}

func (s *Server) keyOK(got string) bool {
	return s.key == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.key)) == 1
}

// cleaner is the part of testing.TB the constructors need.
type cleaner interface {
	Helper()
	Cleanup(func())
	Fatal(args ...any)
}

func newServer(t cleaner, script *scripted.Script, key string, h func(s *Server) http.HandlerFunc, opts []Option) *Server {
	t.Helper()
	p, err := scripted.New(script, "providertest")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{play: p, key: key, release: make(chan struct{}), attempts: map[[32]byte]int{}, reasoned: map[string]Reasoning{}}
	s.idle = sync.NewCond(&s.mu)
	for _, o := range opts {
		o(&s.opts)
	}
	handle := s.windowed(h(s))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.begin()()
		if err := s.keepBody(r); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "the body could not be read")
			return
		}
		handle(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // runs first: a stalled answer must end before Close waits for it
	return s
}

// turn plays the script's next turn for req, without the scripted provider's banner: a
// wire-format server answers as a model does.
func (s *Server) turn(ctx context.Context, req agent.Request) (agent.Response, error) {
	resp, err := s.play.Turn(ctx, req, nil)
	if err != nil {
		return resp, err
	}
	text := strings.TrimPrefix(resp.Message.Text, scripted.Banner)
	resp.Message.Text = strings.TrimSpace(strings.TrimPrefix(text, ":"))
	return resp, nil
}

// readBody reads a request body, bounded.
func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, maxBody))
}

// decode reads a JSON body strictly into v.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON body")
	}
	return nil
}

// sse writes one server-sent event; event "" writes a data line alone, as Chat
// Completions streams.
func sse(w io.Writer, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if event != "" {
		fmt.Fprintf(&buf, "event: %s\n", event)
	}
	fmt.Fprintf(&buf, "data: %s\n\n", b)
	_, err = w.Write(buf.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// halves splits s in two, so that arguments arrive across chunks as the APIs send them.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

// writeError answers an error in the shape both APIs share: {"error": {"type", "message"}}.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, err := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	if err != nil {
		return
	}
	w.Write(b)
}
