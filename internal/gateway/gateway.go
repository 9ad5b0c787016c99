// Package gateway provides Docket's MCP gateway at /mcp: six tools over Streamable HTTP,
// one effective client per Agent, calls handed to the authority's Operations.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// authenticator proves a bearer token, with the head of its Agent's project log it
// proved it at, and ends what a request holds open once the token no longer proves its
// Agent; *identity.Directory satisfies it.
type authenticator interface {
	AgentAt(ctx context.Context, tok identity.Token) (identity.Caller, int64, error)
	Hold(ctx context.Context, tok identity.Token) (context.Context, func())
}

// operations runs calls: Begin answers a call at once, or returns it held (see
// [operation.Held]). *authority.Operations satisfies it: it adds to the operation part's
// Begin the task a docket.ask comes from.
type operations interface {
	Begin(ctx context.Context, c identity.Caller, call operation.Call) (*operation.Held, operation.Answer, error)
}

// strips reports an Agent's strip, alone or on a refusal the gateway makes itself;
// *operation.Operations satisfies it.
type strips interface {
	Refusal(ctx context.Context, c identity.Caller, focus []contract.CaseID, err *contract.Error) (operation.Answer, error)
	State(ctx context.Context, c identity.Caller) (contract.HostMeta, error)
}

// pins reads what a conversation's tasks hold its work to, and who posted them.
type pins interface {
	ConversationPin(ctx context.Context, c identity.Caller, id contract.ConversationID) (contract.CasePin, []contract.Principal, error)
}

// Defaults for [Config].
const (
	DefaultMaxEvents      = 1 << 20 // bytes of SSE events kept for Last-Event-ID replay
	DefaultSessionTimeout = 30 * time.Minute
)

// Config holds what a [Gateway] needs. Auth, Ops and Strips are required; Strips must be
// the operation part Ops runs calls through, so that a strip shows the calls Ops made.
type Config struct {
	Auth   authenticator
	Ops    operations
	Strips strips
	// Pins, when set, gives each conversation's pin (its tasks' Case Type, key and Case in
	// focus), which every call of that conversation carries to the write gate.
	Pins   pins
	Logger *slog.Logger     // default: discards
	Now    func() time.Time // default: time.Now
	// MaxEvents bounds the bytes of SSE events kept for replay; default DefaultMaxEvents.
	MaxEvents int
	// SessionTimeout closes a session that received no request for this long; default
	// DefaultSessionTimeout. Replaced sessions receive none, so it closes them too.
	SessionTimeout time.Duration
	// Middleware wraps the MCP methods the gateway receives, after its own: serve's
	// metrics and spans of each tool call.
	Middleware []mcp.Middleware
}

// Gateway is the MCP server at /mcp. It is an http.Handler and safe for concurrent use.
type Gateway struct {
	auth   authenticator
	ops    operations
	strips strips
	pins   pins
	log    *slog.Logger
	now    func() time.Time
	server *mcp.Server
	sdk    http.Handler
	views  viewCache

	mu       sync.Mutex           // guards the fields below
	sessions map[string]*session  // live sessions by MCP session id
	byAgent  map[string]*session  // each Agent's one effective session
	replaced map[string]time.Time // session ids replaced by a newer initialize, and when
	// replacedBy lists each Agent's ids in replaced, oldest first, at most maxReplaced.
	replacedBy map[string][]string
	agents     map[string]*sync.Mutex
}

// New returns a Gateway. A Config without Auth, Ops or Strips is a wiring mistake, not
// input: New panics at once, as http.ServeMux.Handle does for a nil handler, rather than
// let the first initialize fail.
func New(cfg Config) *Gateway {
	switch {
	case cfg.Auth == nil:
		panic("gateway: New without Config.Auth")
	case cfg.Ops == nil:
		panic("gateway: New without Config.Ops")
	case cfg.Strips == nil:
		panic("gateway: New without Config.Strips")
	}
	g := &Gateway{auth: cfg.Auth, ops: cfg.Ops, strips: cfg.Strips, pins: cfg.Pins, log: cfg.Logger, now: cfg.Now,
		sessions: map[string]*session{}, byAgent: map[string]*session{}, replaced: map[string]time.Time{},
		replacedBy: map[string][]string{}, agents: map[string]*sync.Mutex{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.log = g.log.With(logComponent, "gateway")
	g.server = mcp.NewServer(&mcp.Implementation{Name: "docket", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{contract.ProtocolVersion},
		Logger:                    g.log,
	})
	for _, spec := range contract.Tools() {
		schema, err := json.Marshal(spec.InputSchema())
		if err != nil {
			// The six tools' schemas are constants of package contract, tested there.
			panic(fmt.Sprintf("gateway: tool %s has a schema that does not encode: %v", spec.Name, err))
		}
		g.server.AddTool(&mcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: json.RawMessage(schema)}, g.tool(spec.Name, spec.Write))
	}
	g.server.AddReceivingMiddleware(g.stateMeta)
	g.server.AddReceivingMiddleware(cfg.Middleware...)
	maxEvents := cfg.MaxEvents
	if maxEvents <= 0 {
		maxEvents = DefaultMaxEvents
	}
	timeout := cfg.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	events := mcp.NewMemoryEventStore(nil)
	events.SetMaxBytes(maxEvents)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server },
		&mcp.StreamableHTTPOptions{EventStore: events, Logger: g.log, SessionTimeout: timeout})
	g.sdk = auth.RequireBearerToken(verified, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return g
}

// callerKey carries the authenticated caller from ServeHTTP to the SDK's token check.
type callerKey struct{}

// authed is a request's Caller, the head of its project's log its token was proved at
// (0: none was read), and the writer holding back its priming event (nil: none).
type authed struct {
	c     identity.Caller
	head  int64
	prime *primeWriter
}

// verified hands the SDK the Caller ServeHTTP already authenticated, and the head it was
// proved at; the SDK then binds each session to its Agent and refuses another Agent's
// requests on it. The SDK makes a TokenInfo per HTTP request, so the head is the one
// this request's check read; so is the writer of this request's response, which a tool
// call releases (primeOf).
func verified(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	a, ok := r.Context().Value(callerKey{}).(authed)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	extra := map[string]any{"caller": a.c, "head": a.head}
	if a.prime != nil {
		extra["prime"] = a.prime
	}
	return &auth.TokenInfo{UserID: a.c.ID, Extra: extra}, nil
}

func callerOf(extra *mcp.RequestExtra) (identity.Caller, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return identity.Caller{}, false
	}
	c, ok := extra.TokenInfo.Extra["caller"].(identity.Caller)
	return c, ok
}

// primeOf is the writer holding back the priming event of the request's response; nil
// when it has none.
func primeOf(extra *mcp.RequestExtra) *primeWriter {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra["prime"].(*primeWriter)
	return p
}

// checkedHead is the head of its project log at which this request's token was proved
// (0: none was read).
func checkedHead(extra *mcp.RequestExtra) int64 {
	if extra == nil || extra.TokenInfo == nil {
		return 0
	}
	head, _ := extra.TokenInfo.Extra["head"].(int64)
	return head
}

// stateMeta adds the state form of the strip to initialize results. Every held call
// parks under it, so its own frame is kept small and the initialize work is in
// initializeMeta.
func (g *Gateway) stateMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "initialize" {
			return res, err
		}
		return g.initializeMeta(ctx, req, res)
	}
}

// initializeMeta adds the state form of the strip to res, an initialize result.
func (g *Gateway) initializeMeta(ctx context.Context, req mcp.Request, res mcp.Result) (mcp.Result, error) {
	c, ok := callerOf(req.GetExtra())
	if !ok {
		return res, nil
	}
	meta, err := g.strips.State(ctx, c)
	if err != nil {
		// The strip is an addition to the answer; initialize is answered without it.
		g.log.ErrorContext(ctx, "operation state failed", logErr, err)
		return res, nil
	}
	m := res.GetMeta()
	if m == nil {
		m = map[string]any{}
	}
	m[contract.MetaKey] = meta
	res.SetMeta(m)
	return res, nil
}

// agentLock returns the lock that keeps one Agent's calls serial.
func (g *Gateway) agentLock(agent string) *sync.Mutex {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.agents[agent]
	if m == nil {
		m = &sync.Mutex{}
		g.agents[agent] = m
	}
	return m
}
