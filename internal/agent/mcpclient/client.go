// Package mcpclient provides the agent runtime's one MCP client of the gateway's /mcp:
// it checks the protocol version and the six tools, sends calls serially, reads the strip
// from pings, and turns the gateway's refusals into errors the command line can exit on.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// ProtocolVersion is the one MCP protocol version the runtime speaks.
const ProtocolVersion = contract.ProtocolVersion

// TokenEnv is the environment variable that holds the Agent's bearer token when no token
// file is given. Tokens never come from flags.
const TokenEnv = "DOCKET_AGENT_TOKEN"

// metaKey is the _meta key under which the gateway puts host metadata.
const metaKey = contract.MetaKey

// Sentinels callers branch on with errors.Is; each comes wrapped in a *contract.Error.
var (
	// ErrCredentialRejected: the gateway refused the token (HTTP 401). The runtime exits 3.
	ErrCredentialRejected = errors.New("mcpclient: the gateway rejected the agent's credential")
	// ErrReplaced: another client of the same Agent initialized a session, which replaced
	// this one (HTTP 409 connection_replaced). The runtime exits 4 and never reconnects.
	ErrReplaced = errors.New("mcpclient: the connection was replaced by another client of the same agent")
)

// Config says where the gateway is and how to prove the Agent.
type Config struct {
	URL    string           // the gateway's MCP endpoint, e.g. http://127.0.0.1:7070/mcp
	Token  string           // the Agent's bearer token; required
	HTTP   *http.Client     // its Transport carries the calls; nil: http.DefaultTransport, no timeout (calls are held)
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // nil: time.Now
}

// Client is one MCP session with the gateway, renewed (initialize anew) when the gateway
// forgets it (HTTP 404) and never after it was replaced. Calls, pings and reconnects are
// serial: the gateway serves an Agent's calls one at a time anyway. It is
// safe for concurrent use.
type Client struct {
	cfg    Config
	rt     *transport
	log    *slog.Logger
	tokens atomic.Int64 // progress tokens minted

	// mu serializes calls, pings and reconnects, and guards the fields below.
	mu        sync.Mutex
	session   *mcp.ClientSession // nil after the session was lost, until the next initialize
	tools     []agent.ToolDef
	initStrip []contract.OperationSlot // the strip from the last initialize, until a ping replaces it
	replaced  bool                     // once set, every call fails with ErrReplaced
	lastUsed  time.Time                // when the session last answered
	views     map[string]heldView      // per conversation, the View its model holds, to apply deltas to
	strips    map[string]heldStrip     // per conversation, the strip last given in full, to give back when named unchanged
}

// IdlePing is how long a session may sit unused before a call first pings it. A gateway
// forgets idle sessions (404); a ping finds that out without putting a call's answer at
// risk, since a call sent into a forgotten session can only be reported as unknown.
const IdlePing = time.Minute

var _ agent.Gateway = (*Client)(nil)

// Dial initializes a session with the gateway and checks it against the compiled
// contract: protocol version [ProtocolVersion] and exactly the six tools. A refused token
// is an error wrapping [ErrCredentialRejected]; drift is a *contract.Error with
// [contract.CodeProtocolDrift] or [contract.CodeToolDrift].
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, contract.Errorf(contract.CodeGatewayDown, "gateway URL %q is not an http(s) URL; pass --url http://127.0.0.1:PORT/mcp or start docket serve", cfg.URL)
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, contract.Errorf(contract.CodeUnauthenticated, "no agent token; set %s or pass --token-file (docket agent token NAME prints one)", TokenEnv)
	}
	base := http.DefaultTransport
	if cfg.HTTP != nil && cfg.HTTP.Transport != nil {
		base = cfg.HTTP.Transport
	}
	c := &Client{cfg: cfg, rt: &transport{base: base, token: strings.TrimSpace(cfg.Token)}, log: cfg.Logger,
		views: map[string]heldView{}, strips: map[string]heldStrip{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.cfg.Now == nil {
		c.cfg.Now = time.Now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connectLocked(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// connectLocked initializes a new session and checks it.
func (c *Client) connectLocked(ctx context.Context) error {
	t := &mcp.StreamableClientTransport{
		Endpoint:             c.cfg.URL,
		HTTPClient:           &http.Client{Transport: c.rt},
		DisableStandaloneSSE: true, // everything the runtime needs comes on its own calls' streams
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "docket-agent", Version: "1"}, nil)
	c.rt.takeRefusal()
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return c.classify(ctx, "initialize", err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != ProtocolVersion {
		cs.Close()
		return contract.Errorf(contract.CodeProtocolDrift, "the gateway speaks MCP %s, this runtime only %s; run a docket agent of the same release as docket serve", v, ProtocolVersion)
	}
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		cs.Close()
		return c.classify(ctx, "list tools", err)
	}
	tools, err := checkTools(listed.Tools)
	if err != nil {
		cs.Close()
		return err
	}
	c.session, c.tools, c.lastUsed = cs, tools, c.cfg.Now()
	c.initStrip = nil
	if raw, ok := cs.InitializeResult().Meta[metaKey]; ok {
		// Without it the strip starts empty and the next ping brings it; say why.
		var err error
		if c.initStrip, err = decodeStrip(raw); err != nil {
			c.log.Warn("the strip of initialize does not decode", "err", err)
		}
	}
	c.log.Info("mcp session initialized", "session", cs.ID(), "tools", len(tools))
	return nil
}

// checkTools wants exactly the six tools, each once, with the input schema this runtime
// was compiled with (drift is refused, not worked around).
func checkTools(listed []*mcp.Tool) ([]agent.ToolDef, error) {
	var names []string
	byName := map[string]agent.ToolDef{}
	for _, t := range listed {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || !agent.IsObject(schema) {
			return nil, contract.Errorf(contract.CodeToolDrift, "the gateway lists tool %s without an object input schema; run a docket agent of the same release as docket serve", t.Name)
		}
		if spec, ok := contract.Tool(t.Name); ok && !sameJSON(schema, spec.InputSchema()) {
			return nil, contract.Errorf(contract.CodeToolDrift, "the gateway's input schema of %s differs from this runtime's; run a docket agent of the same release as docket serve", t.Name)
		}
		if _, dup := byName[t.Name]; dup {
			return nil, contract.Errorf(contract.CodeToolDrift, "the gateway lists tool %s twice; run a docket agent of the same release as docket serve", t.Name)
		}
		byName[t.Name] = agent.ToolDef{Name: t.Name, Description: t.Description, InputSchema: schema}
		names = append(names, t.Name)
	}
	want := agent.ToolNames()
	slices.Sort(names)
	sorted := slices.Sorted(slices.Values(want))
	if !slices.Equal(names, sorted) {
		return nil, contract.Errorf(contract.CodeToolDrift, "the gateway lists tools %v, not exactly %v; run a docket agent of the same release as docket serve", names, sorted)
	}
	out := make([]agent.ToolDef, 0, len(want))
	for _, n := range want {
		out = append(out, byName[n])
	}
	return out, nil
}

// sameJSON reports whether listed and the compiled value encode the same JSON, compared
// after one decode so that key order and number spelling do not count.
func sameJSON(listed []byte, compiled any) bool {
	want, err := json.Marshal(compiled)
	if err != nil {
		return false
	}
	var a, b any
	if json.Unmarshal(listed, &a) != nil || json.Unmarshal(want, &b) != nil {
		return false
	}
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// Tools returns the six tools as the gateway listed them, in [agent.ToolNames] order.
func (c *Client) Tools() []agent.ToolDef {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

// Call sends one tool call and waits for its answer, however long the gateway holds it.
// A name outside the six is refused without being sent. When the answer is lost (the
// session vanished or the stream broke) the error wraps [agent.ErrOutcomeUnknown] and the
// call is not sent again; the next call or Strip initializes a new session.
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage) (agent.CallResult, error) {
	if !agent.IsGovernedTool(name) {
		return agent.CallResult{}, contract.Errorf(contract.CodeToolNotOffered, "%q is not one of the six tools; use %s", name, strings.Join(agent.ToolNames(), ", "))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.readyLocked(ctx); err != nil {
		return agent.CallResult{}, err
	}
	token := fmt.Sprintf("docket-%d", c.tokens.Add(1))
	defer c.rt.takeOrdinal(token)
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	conversation := agent.ConversationOf(ctx)
	if conversation != "" {
		params.Meta[contract.MetaConversationKey] = conversation
	}
	params.Meta[contract.MetaOperationsKey] = c.stripClaimLocked(conversation)
	// The answer's text block is all this client reads (below): the same object again as
	// structuredContent would only be encoded, sent and decoded for nothing.
	params.Meta[contract.MetaTextOnlyKey] = true
	if d, ok := agent.ViewOf(ctx); ok {
		held := ""
		if d != (contract.Digest{}) {
			held = d.String()
		}
		params.Meta[contract.MetaViewKey] = held
		if c.deltasLocked(conversation, d) {
			params.Meta[contract.MetaViewDeltaKey] = true
		}
	}
	c.rt.takeRefusal()
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		return agent.CallResult{}, c.classify(ctx, "call "+name, err)
	}
	c.lastUsed = c.cfg.Now()
	out := agent.CallResult{IsError: res.IsError}
	var strip contract.Digest
	out.Ordinal = c.rt.takeOrdinal(token)
	if hm, ok := res.Meta[metaKey]; ok {
		// The answer has arrived and its text must reach the model whatever its host
		// metadata says: metadata that does not decode is logged, the ordinal stays the
		// one progress told, and no View is claimed, so the next answer sends it whole.
		if m, err := decodeHostMeta(hm); err != nil {
			c.log.Warn("host metadata of a tool result does not decode", "tool", name, "err", err)
		} else {
			if m.Ordinal > 0 {
				out.Ordinal = m.Ordinal
			}
			out.ViewDigest, strip = m.ViewDigest, m.OperationsDigest
		}
	}
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			out.Text = tc.Text
			break
		}
	}
	if out.Text == "" && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return agent.CallResult{}, fmt.Errorf("call %s: encode structured content: %w", name, err)
		}
		out.Text = string(b)
	}
	out.Text = c.stripLocked(conversation, out.Text, strip)
	if _, ok := agent.ViewOf(ctx); ok {
		out.Text, out.ViewDigest = c.viewLocked(ctx, conversation, out.Text, out.ViewDigest)
	}
	return out, nil
}

// Strip pings the gateway and returns the state form of this Agent's operations from the
// answer's _meta, newest first. When the session was lost it initializes anew and
// returns the strip that came with initialize.
func (c *Client) Strip(ctx context.Context) ([]contract.OperationSlot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		if err := c.readyLocked(ctx); err != nil {
			return nil, err
		}
		return slices.Clone(c.initStrip), nil
	}
	c.rt.takeRefusal()
	c.rt.takePing()
	if err := c.session.Ping(ctx, nil); err != nil {
		err = c.classify(ctx, "ping", err)
		if !errors.Is(err, agent.ErrOutcomeUnknown) {
			return nil, err
		}
		if err := c.readyLocked(ctx); err != nil {
			return nil, err
		}
		return slices.Clone(c.initStrip), nil
	}
	c.lastUsed = c.cfg.Now()
	raw := c.rt.takePing()
	if raw == nil {
		return nil, contract.Errorf(contract.CodeGatewayDown, "the gateway answered ping without the strip in _meta[%q]; run a docket agent of the same release as docket serve", metaKey)
	}
	return decodeStrip(raw)
}

// readyLocked makes sure there is a live session, initializing anew after a lost one.
func (c *Client) readyLocked(ctx context.Context) error {
	if c.replaced {
		return replacedError()
	}
	if c.session != nil && c.cfg.Now().Sub(c.lastUsed) > IdlePing {
		c.rt.takeRefusal()
		if err := c.session.Ping(ctx, nil); err != nil {
			if err := c.classify(ctx, "ping", err); !errors.Is(err, agent.ErrOutcomeUnknown) {
				return err
			}
		}
		c.rt.takePing()
	}
	if c.session != nil {
		return nil
	}
	return c.connectLocked(ctx)
}

// Close ends the session (an HTTP DELETE), unless it was already lost or replaced.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil || c.replaced {
		return nil
	}
	err := c.session.Close()
	c.session = nil
	if err != nil {
		return fmt.Errorf("close mcp session: %w", err)
	}
	return nil
}

// decodeStrip reads the strip from _meta["docket/v1"] (a [contract.HostMeta]); raw may be
// the JSON bytes or the value the SDK decoded them into.
func decodeStrip(raw any) ([]contract.OperationSlot, error) {
	m, err := decodeHostMeta(raw)
	return m.State, err
}

// decodeHostMeta decodes _meta["docket/v1"] of a result, as the SDK handed it over.
func decodeHostMeta(raw any) (contract.HostMeta, error) {
	b, ok := raw.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(raw); err != nil {
			return contract.HostMeta{}, fmt.Errorf("encode host metadata: %w", err)
		}
	}
	var m contract.HostMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return contract.HostMeta{}, &contract.Error{Code: contract.CodeGatewayDown, Teaching: "the gateway's host metadata does not decode; run a docket agent of the same release as docket serve", Err: err}
	}
	return m, nil
}

func replacedError() error {
	return &contract.Error{Code: contract.ReasonConnectionReplaced, Teaching: "another client of this agent connected and replaced this one; this runtime stops and does not reconnect; run one runtime per agent", Err: ErrReplaced}
}

// classify turns an SDK error into what the loop and the command line act on. It is
// called with mu held, right after the failed request.
func (c *Client) classify(ctx context.Context, what string, err error) error {
	r := c.rt.takeRefusal()
	var wire *jsonrpc.Error
	var data contract.RPCErrorData
	if errors.As(err, &wire) && len(wire.Data) > 0 {
		if json.Unmarshal(wire.Data, &data) != nil {
			// Not the gateway's {reason, teaching}: the refusal is classified by the
			// transport's status and the SDK error alone.
			data = contract.RPCErrorData{}
		}
	}
	if r != nil && data.Reason == "" {
		data.Reason = r.reason
	}
	status := 0
	if r != nil {
		status = r.status
	}
	switch {
	case data.Reason == contract.ReasonConnectionReplaced:
		// Only the gateway's own reason says the connection was replaced: a bare 409 is
		// the SDK refusing a stream resume while the call is still held (docs/mcp.md),
		// and ends below as a lost answer.
		c.replaced = true
		c.session = nil
		return replacedError()
	case status == http.StatusUnauthorized || data.Reason == contract.ReasonUnauthenticated:
		c.session = nil
		return &contract.Error{Code: contract.CodeUnauthenticated, Teaching: "the gateway rejected the agent token; set " + TokenEnv + " to a live token (docket agent token NAME prints a new one)", Err: ErrCredentialRejected}
	case data.Reason == contract.ReasonUnsupportedProtocol:
		return &contract.Error{Code: contract.CodeProtocolDrift, Teaching: "the gateway refused MCP " + ProtocolVersion + "; run a docket agent of the same release as docket serve", Err: err}
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case contract.CodeOf(err) == contract.CodeTLSUntrusted:
		// The runtime refused serve's certificate: its teaching names the CA it trusts.
		tlsErr, _ := errors.AsType[*contract.Error](err)
		return tlsErr
	case c.session == nil:
		// Never initialized: nothing was sent whose outcome could be lost.
		return &contract.Error{Code: contract.CodeGatewayDown, Teaching: fmt.Sprintf("%s at %s failed; start docket serve or pass the right --url", what, c.cfg.URL), Err: err}
	case wire != nil && status == 0 && data.Reason != contract.ReasonUnknownSession:
		// The gateway failed the call inside a live session: whether it ran is not known
		// here, so it is not re-sent and its outcome is left to the strip.
		code, teaching := contract.Code(data.Reason), data.Teaching
		if code == "" {
			code = contract.CodeOutcomeUnknown
		}
		if teaching == "" {
			teaching = wire.Message
		}
		return &contract.Error{Code: code, Teaching: fmt.Sprintf("the gateway failed %s: %s; it is not sent again; its outcome shows in the operations strip", what, teaching),
			Err: fmt.Errorf("%w: %w", agent.ErrOutcomeUnknown, err)}
	}
	// The session is gone (404) or the stream broke: the answer is lost. Drop the session
	// so the next request initializes anew; never re-send.
	c.log.Warn("mcp answer lost", "what", what, "status", status, "err", err)
	_ = c.session.Close() // best effort and bounded by the SDK; the gateway may have forgotten it
	c.session = nil
	return &contract.Error{Code: contract.CodeOutcomeUnknown, Teaching: fmt.Sprintf("the answer to %s was lost (the gateway session ended); it is not sent again; its outcome shows in the operations strip", what),
		Err: fmt.Errorf("%w: %w", agent.ErrOutcomeUnknown, err)}
}
