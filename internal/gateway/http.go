package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// Header names of the Streamable HTTP transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
)

// maxBody bounds one POST body: the largest tool input plus its JSON-RPC envelope.
const maxBody = contract.MaxToolInputBytes + 64<<10

// errReplaced is the cause that ends a held call on a session a newer initialize replaced.
var errReplaced = errors.New("gateway: connection replaced")

// errCredentialEnded is the cause that ends a session whose Agent's token was revoked or
// replaced.
var errCredentialEnded = errors.New("gateway: the agent's token no longer proves it")

// session is one MCP session of an Agent.
type session struct {
	id    string
	agent string

	// life ends, with cause errReplaced, when a newer initialize replaces this session;
	// a held call on it then ends with connection_replaced. It ends with cause
	// errCredentialEnded when the Agent's token no longer proves it, and a held call on
	// it then ends with credential_revoked.
	life context.Context
	end  context.CancelCauseFunc

	mu        sync.Mutex                   // guards focus, delivered, views, indexes and strips; calls are serial per Agent
	focus     map[string][]contract.CaseID // per conversation (_meta "docket/conversation"); "" is the session's own
	delivered map[int64]bool               // Operations whose outcome this session was given in full
	// views is the digest of the View each conversation was last sent (in full or named
	// unchanged), at most maxViews of them: a conversation left out is sent its View in
	// full, which is always correct.
	views map[string]contract.Digest
	// indexes is the index of the View each conversation was last sent, kept only for a
	// client that applies View deltas, at most maxIndexes of them; each names the digest
	// it indexes, which a delta is sent from only when views names it too. Nil until
	// the first, so a session of a client that never opts in holds no map for it.
	indexes map[string]*viewIndex
	// strips is the digest of the strip of Operations each conversation was last sent
	// (or named unchanged), kept only for a client that names the strip it holds
	// (_meta "docket/operations"), at most maxViews of them; nil until the first.
	strips map[string]contract.Digest
	// query is the last QueryBoard's arguments and their decoding: a client polling
	// with the same arguments has them decoded once (decodeInput).
	query struct {
		args string
		in   any
	}
	// strip is the last strip of Operations an answer on the session encoded, with its
	// JSON and digest: an Agent polling while its Operations do not move has the same
	// strip encoded once (encodeResult).
	strip stripEncoding

	// Guarded by Gateway.mu.
	requests int  // requests on this session being served, its open event stream included
	replaced bool // a newer initialize replaced it, or its Agent's token ended
	closing  bool // its SDK session is being closed, once
}

// ServeHTTP serves /mcp. It authenticates the Agent, checks the
// protocol version, refuses replaced (409) and unknown (404) sessions with exact JSON-RPC
// bodies, and hands the rest to the SDK's Streamable HTTP handler. An initialize makes
// the new session the Agent's only effective one.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, head, tok, err := g.authenticate(r)
	if err != nil {
		// RFC 6750 §3: a 401 names the scheme it wants.
		challenge := `Bearer realm="docket"`
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		writeRPCError(w, http.StatusUnauthorized, contract.ReasonUnauthenticated, teachingOf(err, "send the agent's token as Authorization: Bearer <token> (docket agent token prints one)"))
		return
	}
	// The request is held under the Agent's token: revoked or replaced, the token ends
	// the Agent's session, whose held calls answer credential_revoked on their own
	// streams, which then end; a GET that resumes a stream ends at once
	// (docs/security.md, "Credentials and streams").
	ctx, done := g.auth.Hold(r.Context(), tok)
	defer done()
	stop := context.AfterFunc(ctx, func() {
		if identity.CredentialEnded(ctx) != nil {
			g.endAgent(c.ID)
		}
	})
	defer stop()
	if r.Method == http.MethodGet {
		r = r.WithContext(ctx)
	}
	initialize := false
	var body []byte
	if r.Method == http.MethodPost {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				writeRPCError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over the limit; send less in one call")
				return
			}
			writeRPCError(w, http.StatusBadRequest, string(contract.CodeInvalidArgument), "the request body could not be read in time; send it whole")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			writeRPCError(w, http.StatusBadRequest, contract.ReasonBatchUnsupported, "MCP "+contract.ProtocolVersion+" has no JSON-RPC batches; send one message per POST")
			return
		}
		if err := contract.CheckRPC(body); err != nil {
			writeRPCError(w, http.StatusBadRequest, string(contract.CodeOf(err)), teachingOf(err, "send one JSON-RPC message"))
			return
		}
		initialize = isInitialize(body)
	}
	if initialize {
		// The version is negotiated in the body: the SDK answers ProtocolVersion to a
		// client asking for another, and the client decides whether to go on.
		r.Header.Del(headerProtocol)
	} else if v := r.Header.Get(headerProtocol); v != "" && v != contract.ProtocolVersion {
		writeRPCError(w, http.StatusBadRequest, contract.ReasonUnsupportedProtocol, "this gateway speaks MCP "+contract.ProtocolVersion+" only; send that Mcp-Protocol-Version, the one initialize answered")
		return
	}
	id := r.Header.Get(headerSession)
	if id == "" && !initialize {
		writeRPCError(w, http.StatusBadRequest, contract.ReasonSessionRequired, "send the Mcp-Session-Id header the initialize answer carried; initialize first if there is none")
		return
	}
	if id != "" {
		// A request without the version header follows its session's version, the only
		// one this gateway negotiates (the SDK would otherwise assume 2025-03-26).
		if r.Header.Get(headerProtocol) == "" {
			r.Header.Set(headerProtocol, contract.ProtocolVersion)
		}
		state, s := g.admit(id, c.ID)
		if s != nil {
			defer g.release(s)
		}
		switch state {
		case stateReplaced:
			writeRPCError(w, http.StatusConflict, contract.ReasonConnectionReplaced, "another client of this agent initialized after this one; this client must stop")
			return
		case stateUnknown:
			writeRPCError(w, http.StatusNotFound, contract.ReasonUnknownSession, "the session is unknown; initialize a new one and do not re-send")
			return
		}
	}
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "" {
		// The gateway sends nothing an Agent did not ask for (progress and answers go on
		// the POST's own stream), so it offers no standalone stream: a held connection, two
		// goroutines and their buffers per Agent saved. GET with Last-Event-ID still
		// resumes a cut stream.
		w.Header().Set("Allow", "POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, contract.ReasonNoStandaloneStream, "this gateway offers no standalone event stream; answers and progress come on each POST's own stream, and GET with Last-Event-ID resumes one that was cut")
		return
	}
	if id != "" && r.Method == http.MethodPost {
		if rid, ok := pingID(body); ok {
			g.ping(w, r, c, rid)
			return
		}
	}
	a := authed{c: c, head: head}
	if id != "" && r.Method == http.MethodPost {
		// A call's priming event waits for its answer, or for a write to begin (primeWriter).
		a.prime = &primeWriter{ResponseWriter: w}
		w = a.prime
	}
	r = r.WithContext(context.WithValue(r.Context(), callerKey{}, a))
	if initialize && id == "" {
		// The session is made effective when its headers are written, before the client
		// can read the answer and send its next request; the session it replaces is closed
		// then too, unless a request on it is still being served.
		cw := &captureWriter{ResponseWriter: w, onHeader: func(status int, session string) {
			if status < 300 && session != "" {
				g.takeOver(c.ID, session)
			}
		}}
		g.sdk.ServeHTTP(cw, r)
		return
	}
	g.sdk.ServeHTTP(w, r)
	if r.Method == http.MethodDelete && id != "" {
		g.forget(id)
	}
}

// authenticate returns the Agent r's bearer token proves, the head of its project's log
// it was proved at (0: none read) and the token.
func (g *Gateway) authenticate(r *http.Request) (identity.Caller, int64, identity.Token, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return identity.Caller{}, 0, "", errors.New("no bearer token")
	}
	c, head, err := g.auth.AgentAt(r.Context(), identity.Token(tok))
	if err != nil {
		return identity.Caller{}, 0, "", err
	}
	if c.Kind != contract.PrincipalAgent {
		return identity.Caller{}, 0, "", errors.New("not an agent")
	}
	if c.Hook {
		// A coding agent's hook token reaches only the hook routes (docs/coding-agents.md).
		return identity.Caller{}, 0, "", contract.Errorf(contract.CodeForbidden, "this is a coding agent's hook token, which reaches only the hook routes; an Agent connects to /mcp with its own token (docket agent token).")
	}
	return c, head, identity.Token(tok), nil
}

// isInitialize reports whether body is an initialize request.
func isInitialize(body []byte) bool {
	if !mayCall(body, "initialize") {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "initialize"
}

// pingID returns the id of a ping request, the whole of body.
func pingID(body []byte) (json.RawMessage, bool) {
	if !mayCall(body, "ping") {
		return nil, false
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Method != "ping" || len(msg.ID) == 0 {
		return nil, false
	}
	return msg.ID, true
}

// ping answers a ping on a live session itself, with the state form of the strip in
// _meta: the SDK's ping result cannot carry _meta.
func (g *Gateway) ping(w http.ResponseWriter, r *http.Request, c identity.Caller, id json.RawMessage) {
	meta, err := g.strips.State(r.Context(), c)
	if err != nil {
		g.log.ErrorContext(r.Context(), "operation state failed", logErr, err)
		writeRPCError(w, http.StatusInternalServerError, string(contract.CodeInternal), "the authority failed; the cause is in its log")
		return
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"result": map[string]any{"_meta": map[string]any{contract.MetaKey: meta}}})
	if err != nil {
		g.log.ErrorContext(r.Context(), "ping answer not encoded", logErr, err)
		writeRPCError(w, http.StatusInternalServerError, string(contract.CodeInternal), "the authority failed; the cause is in its log")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// mayCall reports whether body could be a request for method, so that a body that
// cannot be one (every tool call's) is not decoded twice on the way to the SDK: method
// must appear quoted, unless the body has an escape, which could spell it otherwise.
func mayCall(body []byte, method string) bool {
	return bytes.IndexByte(body, '\\') >= 0 || bytes.Contains(body, []byte(`"`+method+`"`))
}

type sessionState int

const (
	stateUnknown sessionState = iota
	stateLive
	stateReplaced
)

// admit says whether id is agent's live session, one a newer initialize replaced, or
// unknown (including another Agent's session, which is not this caller's to learn). A
// request on a live session is counted until [Gateway.release]: a session replaced
// meanwhile is closed only once its requests end, so that its client still reads why
// (a held call's connection_replaced, and 409 on its next request, rather than a cut
// event stream).
func (g *Gateway) admit(id, agent string) (sessionState, *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[id]; s != nil && s.agent == agent {
		s.requests++
		return stateLive, s
	}
	if at, ok := g.replaced[id]; ok && g.now().Sub(at) <= replacedMemory {
		return stateReplaced, nil
	}
	return stateUnknown, nil
}

// release ends a request counted by admit, and closes the session if it was replaced
// and nothing else is being served on it.
func (g *Gateway) release(s *session) {
	g.mu.Lock()
	s.requests--
	closeNow := g.closableLocked(s)
	g.mu.Unlock()
	if closeNow {
		g.closeSDKSession(s)
	}
}

// closableLocked reports whether s is a replaced session with no request being served
// whose closing has not begun, and if so marks it closing. g.mu must be held.
func (g *Gateway) closableLocked(s *session) bool {
	if !s.replaced || s.requests > 0 || s.closing {
		return false
	}
	s.closing = true
	return true
}

// takeOver makes id the Agent's one effective session, because two clients driving one
// Agent would interleave its calls. The older session is marked replaced, its held call
// ends, and its SDK session is closed at once, or as soon as the requests being served
// on it end, so that re-initializing does not pile up open sessions. The Agent's
// replaced ids are remembered, to answer 409 rather than 404, for replacedMemory and at
// most maxReplaced of them.
func (g *Gateway) takeOver(agent, id string) {
	s := &session{id: id, agent: agent, delivered: map[int64]bool{}, focus: map[string][]contract.CaseID{},
		views: map[string]contract.Digest{}}
	s.life, s.end = context.WithCancelCause(context.Background())
	g.mu.Lock()
	old := g.byAgent[agent]
	g.sessions[id] = s
	g.byAgent[agent] = s
	closeOld := false
	if old != nil {
		delete(g.sessions, old.id)
		old.replaced = true
		old.end(errReplaced)
		closeOld = g.closableLocked(old)
		g.rememberReplacedLocked(agent, old.id)
	}
	g.mu.Unlock()
	if old != nil {
		g.log.Info("session replaced", logAgent, agent)
	}
	if closeOld {
		g.closeSDKSession(old)
	}
}

// rememberReplacedLocked records id as a replaced session of agent, forgetting the
// agent's replaced ids that are older than replacedMemory or beyond the newest
// maxReplaced. g.mu must be held.
func (g *Gateway) rememberReplacedLocked(agent, id string) {
	now := g.now()
	g.replaced[id] = now
	ids := append(g.replacedBy[agent], id)
	drop := max(0, len(ids)-maxReplaced)
	for drop < len(ids) && now.Sub(g.replaced[ids[drop]]) > replacedMemory {
		drop++
	}
	for _, rid := range ids[:drop] {
		delete(g.replaced, rid)
	}
	g.replacedBy[agent] = slices.Delete(ids, 0, drop)
}

// closeSDKSession closes the SDK's session of s, which ends its streams and drops its
// replay events. It is called without g.mu held: closing waits for the session's
// requests to end, and they take g.mu.
func (g *Gateway) closeSDKSession(s *session) {
	for ss := range g.server.Sessions() {
		if ss.ID() == s.id {
			if err := ss.Close(); err != nil {
				g.log.Debug("closing a replaced session failed", logAgent, s.agent, logErr, err)
			}
			return
		}
	}
}

// replacedMemory is how long a replaced session id answers 409 rather than 404.
const replacedMemory = 24 * time.Hour

// maxReplaced is how many of an Agent's replaced session ids answer 409 rather than 404;
// older ones answer 404, as an unknown session, so that re-initializing in a loop cannot
// grow the gateway's memory.
const maxReplaced = 64

// endAgent closes agent's effective session because its token no longer proves it: the
// session's held calls end with it, and the next request is refused at authentication.
//
// Its SDK session is closed once the requests being served on it end, as a replaced
// session's is, so that a held call's answer reaches its client first.
func (g *Gateway) endAgent(agent string) {
	g.mu.Lock()
	s := g.byAgent[agent]
	closeNow := false
	if s != nil {
		delete(g.sessions, s.id)
		delete(g.byAgent, agent)
		s.replaced = true // no longer effective; its requests are refused at authentication, not 409
		s.end(errCredentialEnded)
		closeNow = g.closableLocked(s)
	}
	g.mu.Unlock()
	if s != nil {
		g.log.Info("session ended: its agent's token no longer proves it", logAgent, agent)
	}
	if closeNow {
		g.closeSDKSession(s)
	}
}

// forget drops a session ended by DELETE.
func (g *Gateway) forget(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[id]; s != nil {
		delete(g.sessions, id)
		s.end(context.Canceled)
		if g.byAgent[s.agent] == s {
			delete(g.byAgent, s.agent)
		}
	}
}

func (g *Gateway) session(id string) *session {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessions[id]
}

// writeRPCError writes a JSON-RPC error response with HTTP status and data.reason.
func writeRPCError(w http.ResponseWriter, status int, reason, teaching string) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": contract.RPCCodeServer, "message": reason,
			"data": contract.RPCErrorData{Reason: reason, Teaching: teaching}},
	})
	if err != nil {
		// Two strings always encode; should they not, the status alone says why.
		status = http.StatusInternalServerError
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`, contract.RPCCodeServer, contract.CodeInternal)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func teachingOf(err error, fallback string) string {
	if ce, ok := errors.AsType[*contract.Error](err); ok {
		return ce.Teaching
	}
	return fallback
}

// captureWriter tells onHeader the status and session id of the SDK's answer to
// initialize, just before the headers go out.
type captureWriter struct {
	http.ResponseWriter
	onHeader func(status int, session string)
	status   int
}

func (w *captureWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		w.onHeader(status, w.Header().Get(headerSession))
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *captureWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *captureWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *captureWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// primeWriter holds back the first flush of a POST's response, so that the SDK's priming
// event (an event id and no data, which lets a client resume a cut stream) goes out with
// the next event rather than in a write of its own. A read (QueryBoard, ReadArtifact) is
// answered at once, never held, so its priming event and its answer reach the client in
// one write, which the client reads at once: a write, a client read and a wakeup of the
// client's reader fewer a call. A write's call releases it before it does anything (see
// tool): a write may be held past its answer's first byte, and its stream must be
// resumable from the start (docs/mcp.md, "One client per Agent"). A read whose stream
// is cut before its answer is told "request terminated without response" by the client,
// as it would be had the cut come before the priming event, and changes nothing.
type primeWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	flushed bool // the first flush came, or release
	held    bool // the first flush was held back and is not made yet
}

// FlushError holds back the first flush and makes every later one, with what was held.
// The SDK flushes through http.ResponseController, which asks for FlushError first.
func (w *primeWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.flushed {
		w.flushed, w.held = true, true
		return nil
	}
	w.held = false
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// release makes the flush held back now, if any, and lets every later one through. It
// does nothing on a nil primeWriter (a request that has none).
func (w *primeWriter) release() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushed = true
	if !w.held {
		return nil
	}
	w.held = false
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *primeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
