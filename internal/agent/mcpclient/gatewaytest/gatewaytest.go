// Package gatewaytest provides an in-process MCP server, built with the official SDK, that
// answers like Docket's gateway (six tools, held answers, the strip on ping and
// initialize, the write gate, 401/404/409), for testing the agent runtime without an
// authority.
package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// Token is the bearer token the server accepts.
const Token = "agent-token-for-tests"

// Reply is how the server answers one tools/call. The zero Reply accepts the call and
// settles it as done with no result.
type Reply struct {
	Result    json.RawMessage // the call's result, when it has one now
	ErrorCode string          // a refusal: not executed, no operation
	Teaching  string

	// State is the operation's state in the answer; empty means done. QueryBoard and
	// ReadArtifact are never operations, whatever State says.
	State contract.OperationState
	// Later are the states the operation passes through, one per ping after the answer;
	// their Tool, Label and ordinal are the operation's own.
	Later []contract.OperationEntry
	// Block holds the answer until the channel is closed or the client goes away; a
	// client that goes away leaves the operation as it is (nothing is cancelled).
	Block <-chan struct{}

	// View or ViewDelta, when set, is the answer's View, in full or as a delta; ViewDigest
	// is the digest its host metadata names (_meta "docket/v1" viewDigest), when set.
	View       contract.View
	ViewDelta  *contract.ViewDelta
	ViewDigest contract.Digest
}

// Call is one tools/call the server received.
type Call struct {
	Tool    string
	Args    json.RawMessage
	Session string
	Meta    map[string]any // the call's _meta
}

// Server is the fake gateway. Configure it before the runtime connects; its methods are
// safe for concurrent use.
type Server struct {
	URL string // the MCP endpoint

	// Reply decides the answer to each call; nil answers every call with the zero Reply.
	Reply func(c Call) Reply
	// Version, when set, is the protocol version initialize answers with.
	Version string
	// Tools, when set, replaces the six tool names the server lists.
	Tools []string
	// Schema, when set, replaces the input schema listed for every tool.
	Schema json.RawMessage
	// Received, when set, is told of each call as it arrives, before it is answered.
	Received chan<- Call

	// mu guards the fields below.
	mu        sync.Mutex
	calls     []Call
	ops       []*op // oldest first
	current   string
	old       map[string]bool // sessions replaced by a newer initialize
	forgotten map[string]bool // sessions the server answers 404 for
	pings     int
}

type op struct {
	state contract.OperationSlot
	later []contract.OperationEntry
}

// New starts a fake gateway on httptest and stops it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{old: map[string]bool{}, forgotten: map[string]bool{}}
	impl := &mcp.Implementation{Name: "docket-gateway-test", Version: "1"}
	srv := mcp.NewServer(impl, nil)
	srv.AddReceivingMiddleware(s.initializeMeta)
	for _, spec := range contract.Tools() {
		srv.AddTool(&mcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.InputSchema()}, s.handle)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(s.wrap(h))
	t.Cleanup(ts.Close)
	s.URL = ts.URL + "/mcp"
	return s
}

// Calls returns every tools/call received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Pings returns how many pings the server answered.
func (s *Server) Pings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pings
}

// Forget makes the server answer 404 for the current session, as a gateway that
// restarted or expired it does.
func (s *Server) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgotten[s.current] = true
}

// Settle puts operation ordinal into state st (its Tool and Label are kept), as the
// authority does when a worker reports or a person decides.
func (s *Server) Settle(ordinal int64, st contract.OperationEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.ops {
		if o.state.Ordinal == ordinal {
			o.moveLocked(st)
			o.later = nil
		}
	}
}

func (o *op) moveLocked(st contract.OperationEntry) {
	st.Tool, st.Label, st.At = o.state.Tool, o.state.Label, o.state.At
	o.state.OperationEntry = st
}

// Strip returns the state form of the operations, newest first.
func (s *Server) Strip() []contract.OperationSlot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stripLocked()
}

func (s *Server) stripLocked() []contract.OperationSlot {
	out := make([]contract.OperationSlot, 0, len(s.ops))
	for _, o := range slices.Backward(s.ops) {
		out = append(out, o.state)
	}
	return out
}

func rpcError(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%q,"data":{"reason":%q}}}`, reason, reason)
}

// wrap does what the SDK's handler does not: bearer tokens, replacement, forgetting,
// and pings that carry the strip.
func (s *Server) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+Token {
			rpcError(w, http.StatusUnauthorized, "unauthenticated")
			return
		}
		sid := r.Header.Get("Mcp-Session-Id")
		s.mu.Lock()
		replaced, forgotten := s.old[sid], s.forgotten[sid]
		s.mu.Unlock()
		switch {
		case sid != "" && replaced:
			rpcError(w, http.StatusConflict, "connection_replaced")
			return
		case sid != "" && forgotten:
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		var body []byte
		if r.Method == http.MethodPost {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) != nil {
			msg.Method = "" // not one JSON-RPC object: the SDK answers it; nothing to count
		}
		if msg.Method == "ping" && sid != "" {
			s.mu.Lock()
			s.pings++
			for _, o := range s.ops {
				if len(o.later) > 0 {
					o.moveLocked(o.later[0])
					o.later = o.later[1:]
				}
			}
			meta, err := json.Marshal(contract.HostMeta{AgentID: "agent-test", State: s.stripLocked()})
			s.mu.Unlock()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", sid)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"_meta":{"docket/v1":%s}}}`, msg.ID, meta)
			return
		}
		rec := &sessionWatcher{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if msg.Method == "initialize" && rec.session != "" {
			s.mu.Lock()
			if s.current != "" {
				s.old[s.current] = true
			}
			s.current = rec.session
			s.mu.Unlock()
		}
	})
}

// sessionWatcher learns the session id a response mints.
type sessionWatcher struct {
	http.ResponseWriter
	session string
}

func (w *sessionWatcher) WriteHeader(code int) {
	w.session = w.Header().Get("Mcp-Session-Id")
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWatcher) Write(b []byte) (int, error) {
	if w.session == "" {
		w.session = w.Header().Get("Mcp-Session-Id")
	}
	return w.ResponseWriter.Write(b)
}

func (w *sessionWatcher) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// initializeMeta puts the strip on initialize and applies Version.
func (s *Server) initializeMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ir, ok := res.(*mcp.InitializeResult); ok && err == nil {
			s.mu.Lock()
			ir.Meta = mcp.Meta{contract.MetaKey: contract.HostMeta{AgentID: "agent-test", State: s.stripLocked()}}
			if s.Version != "" {
				ir.ProtocolVersion = s.Version
			}
			s.mu.Unlock()
		}
		if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && s.Tools != nil {
			var tools []*mcp.Tool
			for _, n := range s.Tools {
				var schema any = json.RawMessage(`{"type":"object"}`)
				if spec, ok := contract.Tool(n); ok {
					schema = spec.InputSchema()
				}
				tools = append(tools, &mcp.Tool{Name: n, InputSchema: schema})
			}
			lr.Tools = tools
		}
		if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && s.Schema != nil {
			for _, t := range lr.Tools {
				t.InputSchema = s.Schema
			}
		}
		return res, err
	}
}

// unresolvedLocked reports whether an operation is still running or waiting.
func (s *Server) unresolvedLocked() bool {
	for _, o := range s.ops {
		if st := o.state.State; st == contract.OpRunning || st == contract.OpWaitingForDecision {
			return true
		}
	}
	return false
}

func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := Call{Tool: req.Params.Name, Args: req.Params.Arguments, Session: req.Session.ID(), Meta: req.Params.GetMeta()}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	if s.Received != nil {
		s.Received <- c
	}
	rep := Reply{}
	if s.Reply != nil {
		rep = s.Reply(c)
	}
	answer := contract.ToolResult{Accepted: true}
	no, yes := false, true
	spec, _ := contract.Tool(c.Tool)
	s.mu.Lock()
	switch {
	case !spec.Write:
	case s.unresolvedLocked():
		// The write gate.
		answer.Accepted, answer.RequestExecuted = false, &no
		answer.ErrorCode, answer.Teaching = contract.CodeOperationRunning, "an operation is still running; wait for its outcome"
		rep = Reply{}
	case rep.ErrorCode != "":
		answer.Accepted, answer.RequestExecuted = false, &no
		answer.ErrorCode, answer.Teaching = contract.Code(rep.ErrorCode), rep.Teaching
	default:
		state := rep.State
		if state == "" {
			state = contract.OpDone
		}
		now := time.Now()
		o := &op{state: contract.OperationSlot{Ordinal: int64(len(s.ops) + 1), OperationEntry: contract.OperationEntry{
			Tool: c.Tool, Label: c.Tool, State: state, At: now, Since: now, Result: rep.Result}}, later: rep.Later}
		s.ops = append(s.ops, o)
		ordinal := o.state.Ordinal
		s.mu.Unlock()
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1,
				Meta: mcp.Meta{contract.MetaKey: map[string]any{"ordinal": ordinal}}})
		}
		if rep.Block != nil {
			select {
			case <-rep.Block:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		s.mu.Lock()
		if state != contract.OpRunning {
			answer.RequestExecuted = &yes
		}
	}
	answer.Result, answer.View, answer.ViewDelta = rep.Result, rep.View, rep.ViewDelta
	// The model's form of the strip carries no ordinals.
	for _, o := range s.stripLocked() {
		answer.Operations = append(answer.Operations, o.OperationEntry)
	}
	s.mu.Unlock()
	text, err := json.Marshal(answer)
	if err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}
	if rep.ViewDigest != (contract.Digest{}) {
		res.Meta = mcp.Meta{contract.MetaKey: contract.HostMeta{AgentID: "agent-test", ViewDigest: rep.ViewDigest}}
	}
	return res, nil
}
