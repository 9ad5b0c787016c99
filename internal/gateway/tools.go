package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// tool returns the SDK handler of the tool name: decode strictly, call the authority's
// Operations, and encode the answer as one text block plus structuredContent, with host
// metadata only in _meta.
//
// A held call's goroutine parks in this handler for as long as its Operation runs, and
// a serve holds thousands: its stack shrinks at a collection only while it uses less
// than a quarter of it, so what stays on it while parked is kept small — the handler's
// own frame and [operation.Held.Wait]'s. The decoding, the admission and the answer run
// in beginTool and endTool, whose frames are gone by then; beginTool and the progress
// run apart, so the parked stack never grows to their depth at all (a stack that grew
// and shrank again leaves its larger slot's span in use beside other goroutines').
//
// A write (write set) sends its stream's priming event before it does anything, so that
// the stream of a call held from its first byte is resumable; a read's goes out with its
// answer (primeWriter).
func (g *Gateway) tool(name string, write bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if write {
			g.prime(ctx, name, req)
		}
		var t *toolCall
		var res *mcp.CallToolResult
		var err error
		apart(func() { t, res, err = g.beginTool(ctx, name, req) })
		if t == nil {
			return res, err
		}
		defer t.release()
		return g.endTool(t, t.held.Wait(t.ctx))
	}
}

// prime sends the priming event of req's stream now (primeWriter).
func (g *Gateway) prime(ctx context.Context, name string, req *mcp.CallToolRequest) {
	if err := primeOf(req.Extra).release(); err != nil {
		// The client is gone: the call goes on, as a held call whose client left does.
		g.log.DebugContext(ctx, "priming event not sent", logTool, name, logErr, err)
	}
}

// toolCall is a call the authority holds, from beginTool to endTool.
type toolCall struct {
	name         string
	c            identity.Caller
	s            *session
	conversation string
	ctx          context.Context // the call's, ended when a newer initialize replaces its session
	held         *operation.Held
	release      func() // ends ctx and unlocks the Agent's calls

	claimed  *contract.Digest // the View the call says its conversation holds; nil: it says nothing
	fullView bool             // the call asks for the View in full
	deltas   bool             // the client applies View deltas (_meta "docket/viewDelta")
	strip    *contract.Digest // the strip the client says it holds (_meta "docket/operations"); nil: it says nothing
	textOnly bool             // the client reads the text block alone (_meta "docket/textOnly")
}

// beginTool runs the call up to its hold. It returns the held call, or nil and the
// call's answer.
func (g *Gateway) beginTool(ctx context.Context, name string, req *mcp.CallToolRequest) (*toolCall, *mcp.CallToolResult, error) {
	c, ok := callerOf(req.Extra)
	s := g.session(req.Session.ID())
	if !ok || s == nil || s.agent != c.ID {
		return nil, nil, rpcError(contract.ReasonUnknownSession, "the session is unknown; initialize a new one")
	}
	m := g.agentLock(c.ID)
	m.Lock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.life, func() {
		if errors.Is(context.Cause(s.life), errCredentialEnded) {
			cancel(errCredentialEnded)
			return
		}
		cancel(errReplaced)
	})
	t := &toolCall{name: name, c: c, s: s, conversation: conversationOf(req.Params), ctx: ctx,
		release: func() { stop(); cancel(nil); m.Unlock() }}
	held := false
	defer func() {
		if !held {
			t.release()
		}
	}()
	if s.life.Err() != nil {
		return nil, nil, replacedError()
	}
	var err error
	if t.claimed, err = digestClaimed(req.Params, contract.MetaViewKey, viewClaimTeaching); err != nil {
		return nil, nil, err
	}
	if t.deltas, err = flagOf(req.Params, contract.MetaViewDeltaKey, deltasTeaching); err != nil {
		return nil, nil, err
	}
	if t.textOnly, err = flagOf(req.Params, contract.MetaTextOnlyKey, textOnlyTeaching); err != nil {
		return nil, nil, err
	}
	if t.strip, err = digestClaimed(req.Params, contract.MetaOperationsKey, stripClaimTeaching); err != nil {
		return nil, nil, err
	}

	s.mu.Lock()
	focus := slices.Clone(s.focus[t.conversation])
	s.mu.Unlock()
	// The authority asks about one ordinal or two per call, and only while the call runs,
	// when nothing else changes what this session was given (the Agent's calls are
	// serial): it reads the session's record rather than a copy, which grew by one entry
	// an answer and was copied whole on every call.
	delivered := func(o int64) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.delivered[o]
	}
	// The call's first reads are made at the head its token was proved at.
	now := identity.AtCheckedHead(ctx, c, checkedHead(req.Extra))
	pin, taskBy, err := g.pin(now, c, t.conversation)
	if err != nil {
		return nil, nil, err
	}
	if pin.CaseID != "" && !slices.Contains(focus, pin.CaseID) {
		// The conversation's task named this Case: it is brought into its focus.
		focus = append([]contract.CaseID{pin.CaseID}, focus...)
	}

	var ans operation.Answer
	in, derr := s.decodeInput(name, req.Params.Arguments)
	t.fullView = fullView(in)
	if ce, ok := errors.AsType[*contract.Error](derr); ok {
		ans, err = g.strips.Refusal(now, c, focus, ce)
	} else if derr != nil {
		err = derr
	} else {
		call := operation.Call{Tool: name, Input: in, Focus: focus, Pin: pin, TaskBy: taskBy, Conversation: contract.ConversationID(t.conversation), Delivered: delivered}
		if tok := req.Params.GetProgressToken(); tok != nil {
			call.Progress = progress(ctx, req.Session, tok)
		}
		t.held, ans, err = g.ops.Begin(now, c, call)
		if t.held != nil && err == nil {
			held = true
			// The SDK's decoder makes every _meta map with room for 64 entries (≈ 4.7 KB)
			// and the request lives as long as the call is held: an equal map sized to
			// its one or two entries takes its place.
			req.Params.Meta = compactMeta(req.Params.Meta)
			return t, nil, nil
		}
	}
	res, err := g.answerTool(t, ans, err)
	return nil, res, err
}

// decodeInput is contract.DecodeToolInput(name, args), which depends on nothing else. A
// QueryBoard's decoding is kept and given again for the same arguments, so a client that
// polls has them decoded once; the authority only reads a QueryBoardInput.
func (s *session) decodeInput(name string, args json.RawMessage) (any, error) {
	if name != contract.ToolQueryBoard {
		return contract.DecodeToolInput(name, args)
	}
	s.mu.Lock()
	kept := s.query
	s.mu.Unlock()
	if kept.in != nil && kept.args == string(args) {
		return kept.in, nil
	}
	in, err := contract.DecodeToolInput(name, args)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.query.args, s.query.in = string(args), in
	s.mu.Unlock()
	return in, nil
}

// compactMeta returns a copy of m sized to its entries.
func compactMeta(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	c := make(mcp.Meta, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// endTool answers a held call once its Wait returned err.
func (g *Gateway) endTool(t *toolCall, err error) (*mcp.CallToolResult, error) {
	var ans operation.Answer
	if err == nil {
		ans, err = t.held.Answer(t.ctx)
	}
	return g.answerTool(t, ans, err)
}

// answerTool encodes the authority's answer to t, or its error, as the SDK's.
func (g *Gateway) answerTool(t *toolCall, ans operation.Answer, err error) (*mcp.CallToolResult, error) {
	if errors.Is(context.Cause(t.ctx), errReplaced) {
		return nil, replacedError()
	}
	if errors.Is(context.Cause(t.ctx), errCredentialEnded) {
		return nil, rpcError(string(contract.CodeCredentialRevoked), "the agent's token was revoked or replaced while this call was held; its operation goes on without it. Ask a member for a new token (docket agent token).")
	}
	if err != nil && t.ctx.Err() != nil {
		// The client went away while its call was held; the Operation goes on and its
		// outcome reaches the next call.
		return nil, rpcError(string(contract.CodeUnavailable), "the call's connection ended; its operation goes on, see operations on the next call")
	}
	if err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok {
			return nil, rpcError(string(ce.Code), ce.Teaching)
		}
		g.log.ErrorContext(t.ctx, "tool call failed", logTool, t.name, logAgent, t.c.ID, logErr, err)
		return nil, rpcError(string(contract.CodeInternal), "the authority failed; the cause is in its log")
	}
	// The Agent's calls run one at a time (agentLock), so the View recorded here is the
	// last one this conversation was sent.
	t.s.mu.Lock()
	last, sent := t.s.views[t.conversation]
	from := t.s.indexes[t.conversation]
	lastStrip := t.s.strips[t.conversation]
	t.s.mu.Unlock()
	holds := contract.Digest{}
	if sent && (t.claimed == nil || *t.claimed == last) && !t.fullView {
		holds = last
	}
	if !t.deltas || from == nil || from.digest != holds || holds == (contract.Digest{}) {
		from = nil // a delta only from the View the conversation holds, to a client that applies it
	}
	var stripHeld contract.Digest
	if t.strip != nil && *t.strip == lastStrip {
		stripHeld = *t.strip
	}
	t.s.mu.Lock()
	lastEnc := t.s.strip
	t.s.mu.Unlock()
	res, enc, err := toolResult(ans, holds, t.deltas, from, stripHeld, t.strip != nil, &g.views, lastEnc)
	if err == nil && t.textOnly {
		res.StructuredContent = nil // the same object as the text block, which is all the client reads
	}
	if err != nil {
		return nil, err
	}
	t.s.mu.Lock()
	t.s.strip = enc.strip
	t.s.focus[t.conversation] = ans.Focus
	for _, o := range ans.Carried {
		t.s.delivered[o] = true
	}
	t.s.rememberView(t.conversation, enc.digest, enc.index)
	if t.strip != nil {
		t.s.rememberStrip(t.conversation, enc.strip.digest)
	}
	t.s.mu.Unlock()
	return res, nil
}

// fullView reports whether the call's input asks for the View in full: QueryBoard's
// fullView, the way back for a model whose context lost the View it was last sent.
func fullView(in any) bool {
	q, ok := in.(*contract.QueryBoardInput)
	return ok && q.FullView
}

// maxViews bounds the conversations per session whose last View the gateway remembers;
// a runtime has a handful at a time. maxIndexes bounds those whose View it also keeps the
// index of, to answer the next as a delta: an index is larger than a digest (≈ 50 bytes
// an entry), and a conversation left out is sent its next changed View in full.
const (
	maxViews   = 64
	maxIndexes = 8
)

// rememberView records that conversation was sent the View with digest d, and the View's
// index when the client applies deltas (nil otherwise). Past maxViews (maxIndexes)
// another conversation's record (index) is dropped: it is then sent its View in full.
// s.mu is held.
func (s *session) rememberView(conversation string, d contract.Digest, ix *viewIndex) {
	if _, ok := s.views[conversation]; !ok && len(s.views) >= maxViews {
		for k := range s.views {
			delete(s.views, k)
			delete(s.indexes, k)
			break
		}
	}
	s.views[conversation] = d
	if ix == nil {
		delete(s.indexes, conversation)
		return
	}
	if s.indexes == nil {
		s.indexes = map[string]*viewIndex{}
	}
	if _, ok := s.indexes[conversation]; !ok && len(s.indexes) >= maxIndexes {
		for k := range s.indexes {
			delete(s.indexes, k)
			break
		}
	}
	s.indexes[conversation] = ix
}

// rememberStrip records that conversation was sent, or named unchanged, the strip with
// digest d; past maxViews another conversation's record is dropped. s.mu is held.
func (s *session) rememberStrip(conversation string, d contract.Digest) {
	if s.strips == nil {
		s.strips = map[string]contract.Digest{}
	}
	if _, ok := s.strips[conversation]; !ok && len(s.strips) >= maxViews {
		for k := range s.strips {
			delete(s.strips, k)
			break
		}
	}
	s.strips[conversation] = d
}

// flagOf is what a call says with a boolean in _meta[key]: whether its client applies
// View deltas under "docket/viewDelta", whether it reads the text block alone under
// "docket/textOnly"; false when it says nothing. Anything but a boolean is refused with
// teaching.
func flagOf(p *mcp.CallToolParamsRaw, key, teaching string) (bool, error) {
	v, ok := metaOf(p, key)
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, rpcError(string(contract.CodeInvalidArgument), teaching)
	}
	return b, nil
}

// digestClaimed is the digest a call says, in _meta[key], its conversation holds (of its
// View under "docket/view", of its strip under "docket/operations"): nil when it says
// nothing, the zero digest for "" (it holds none). Anything else is refused with
// teaching.
func digestClaimed(p *mcp.CallToolParamsRaw, key, teaching string) (*contract.Digest, error) {
	v, ok := metaOf(p, key)
	if !ok {
		return nil, nil
	}
	text, ok := v.(string)
	if !ok {
		return nil, rpcError(string(contract.CodeInvalidArgument), teaching)
	}
	var d contract.Digest
	if text == "" {
		return &d, nil
	}
	d, err := contract.ParseDigest(text)
	if err != nil {
		return nil, rpcError(string(contract.CodeInvalidArgument), teaching)
	}
	return &d, nil
}

const (
	viewClaimTeaching  = "_meta[\"" + contract.MetaViewKey + "\"] is not a View digest; send the viewDigest of the last View the conversation was given, or \"\" when it holds none"
	stripClaimTeaching = "_meta[\"" + contract.MetaOperationsKey + "\"] is not a digest; send the operationsDigest of the last strip the conversation was given, or \"\" when it holds none"
	deltasTeaching     = "_meta[\"" + contract.MetaViewDeltaKey + "\"] is not a boolean; send true when the client applies View deltas"
	textOnlyTeaching   = "_meta[\"" + contract.MetaTextOnlyKey + "\"] is not a boolean; send true when the client reads the text block alone"
)

// pin is what the conversation's tasks hold its work to, and who posted them; none
// without a conversation or a pin reader.
func (g *Gateway) pin(ctx context.Context, c identity.Caller, conversation string) (contract.CasePin, []contract.Principal, error) {
	if g.pins == nil || conversation == "" {
		return contract.CasePin{}, nil, nil
	}
	if _, err := contract.ParseConversationID(conversation); err != nil {
		return contract.CasePin{}, nil, rpcError(string(contract.CodeInvalidArgument), "_meta[\""+contract.MetaConversationKey+"\"] is not a conversation id; send the id of the conversation the call is made in")
	}
	pin, by, err := g.pins.ConversationPin(ctx, c, contract.ConversationID(conversation))
	if err != nil {
		g.log.ErrorContext(ctx, "conversation pin not read", logAgent, c.ID, logErr, err)
		return contract.CasePin{}, nil, rpcError(string(contract.CodeInternal), "the authority failed to read the conversation's pin; the cause is in its log")
	}
	return pin, by, nil
}

// conversationOf is the conversation a call names in _meta["docket/conversation"]; ""
// when it names none.
func conversationOf(p *mcp.CallToolParamsRaw) string {
	v, _ := metaOf(p, contract.MetaConversationKey)
	id, _ := v.(string)
	return id
}

// metaOf is what a call's _meta holds under key, and whether it holds anything.
func metaOf(p *mcp.CallToolParamsRaw, key string) (any, bool) {
	if p == nil {
		return nil, false
	}
	v, ok := p.GetMeta()[key]
	return v, ok
}

// toolResult encodes an answer as MCP: the ToolResult as one text block and as
// structuredContent, host metadata under _meta["docket/v1"]. When the answer's View has
// digest held, the View the conversation already holds, it is named unchanged instead of
// sent again; when from indexes that View (the client applies deltas), a changed View is
// sent as what changed, if a delta fits. The View is encoded once, indexed when deltas
// is set; views, when not nil, keeps it by the answer's ViewKey. Likewise a strip of
// Operations with digest stripHeld, the one the client says it holds, is named
// unchanged; withStrip puts the strip's digest in the host metadata, for a client that
// asks. It returns the View's encoding and the strip's digest.
func toolResult(ans operation.Answer, held contract.Digest, deltas bool, from *viewIndex, stripHeld contract.Digest, withStrip bool, views *viewCache, last stripEncoding) (*mcp.CallToolResult, viewEncoding, error) {
	enc, err := views.encode(ans.ViewKey, ans.Result.View, deltas)
	if err != nil {
		return nil, viewEncoding{}, err
	}
	out := ans.Result
	var body []byte // the View's JSON, when it is sent in full
	switch {
	case enc.digest == held:
		out.ViewUnchanged = enc.digest
	case from != nil:
		if d, ok := viewDelta(from, enc.index, out.View); ok {
			out.ViewDelta = &d
			break
		}
		body = enc.body
	case !reflect.ValueOf(out.View).IsZero(): // omitzero, as the field's tag says
		body = enc.body
	}
	out.View = contract.View{}
	b, se, err := encodeResult(out, body, stripHeld, last)
	if err != nil {
		return nil, viewEncoding{}, err
	}
	enc.strip = se
	meta := ans.Meta
	meta.ViewDigest = enc.digest
	if withStrip {
		meta.OperationsDigest = se.digest
	}
	return &mcp.CallToolResult{
		Meta:              mcp.Meta{contract.MetaKey: meta},
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           !ans.Result.Accepted,
	}, enc, nil
}

// stripEncoding is a strip of Operations with its JSON and the digest of that JSON.
type stripEncoding struct {
	ops    []contract.OperationEntry // shared with the answer it came from; never changed
	json   []byte
	digest contract.Digest
}

// encodeStrip returns ops encoded: last's JSON and digest when ops holds the same
// entries as last (the JSON of equal entries is the same bytes), else ops encoded now.
func encodeStrip(ops []contract.OperationEntry, last stripEncoding) (stripEncoding, error) {
	if last.json != nil && (ops == nil) == (last.ops == nil) && slices.EqualFunc(ops, last.ops, sameEntry) {
		return stripEncoding{ops: ops, json: last.json, digest: last.digest}, nil
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return stripEncoding{}, fmt.Errorf("encode tool result operations: %w", err)
	}
	return stripEncoding{ops: ops, json: b, digest: contract.Sum(b)}, nil
}

// sameEntry reports whether x and y encode to the same JSON: every field equal, the
// times as the same instant in the same location (== on time.Time, which is stricter
// than Equal), the results the same bytes. TestSameEntry fails for a field of
// OperationEntry it does not compare.
func sameEntry(x, y contract.OperationEntry) bool {
	return x.Tool == y.Tool && x.Label == y.Label && x.State == y.State && x.At == y.At && x.Since == y.Since &&
		x.Stage == y.Stage && x.Decision == y.Decision && x.Reason == y.Reason && x.ReasonCode == y.ReasonCode &&
		bytes.Equal(x.Result, y.Result) && x.Summary == y.Summary
}

// encodeResult encodes out, whose View is zero, with view, the View's JSON already
// encoded (nil: none), in its place, and its strip of Operations encoded on its own to
// digest it (or last's encoding, when it is of the same strip): a strip with digest
// stripHeld is named unchanged (operationsUnchanged, in the head) instead of sent. With
// the strip sent, the bytes are what json.Marshal writes for out with its View, the View
// not encoded again (TestToolResult_AsMarshal). It returns the strip's encoding (zero
// when out has none).
func encodeResult(out contract.ToolResult, view []byte, stripHeld contract.Digest, last stripEncoding) ([]byte, stripEncoding, error) {
	// The fields after view are written after it, in ToolResult's order: viewUnchanged
	// and viewDelta are unset when the View is sent.
	var ops []byte
	var strip stripEncoding
	if out.Operations != nil {
		var err error
		if strip, err = encodeStrip(out.Operations, last); err != nil {
			return nil, stripEncoding{}, err
		}
		ops = strip.json
		if strip.digest == stripHeld {
			ops, out.OperationsUnchanged = nil, strip.digest
		}
	}
	out.Operations = nil
	head, err := json.Marshal(out)
	if err != nil {
		return nil, stripEncoding{}, fmt.Errorf("encode tool result: %w", err)
	}
	b := make([]byte, 0, len(head)+len(view)+len(ops)+32)
	b = append(b, head[:len(head)-1]...)
	if view != nil {
		b = append(b, `,"view":`...)
		b = append(b, view...)
	}
	if ops != nil {
		b = append(b, `,"operations":`...)
		b = append(b, ops...)
	}
	return append(b, '}'), strip, nil
}

// progress returns the Progress hook of a held call with progressToken tok: each state
// the Operation passes through is a notifications/progress carrying its ordinal.
func progress(ctx context.Context, ss *mcp.ServerSession, tok any) func(contract.OperationSlot) {
	n := 0.0
	return func(s contract.OperationSlot) {
		n++
		msg := string(s.State)
		if s.Stage != "" {
			msg += " " + string(s.Stage)
		}
		if s.ReasonCode != "" {
			msg += ": " + string(s.ReasonCode) // why queued work waits, e.g. no_live_worker
		}
		// It runs on the held call's goroutine, between its waits (see tool).
		apart(func() {
			ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: n, Message: msg,
				Meta: mcp.Meta{contract.MetaKey: map[string]any{"ordinal": s.Ordinal}}})
		})
	}
}

// apart runs f on a goroutine of its own and returns once f returned: the caller's stack
// does not grow to f's depth. A held call's goroutine runs its deep work apart before it
// parks (see tool). A panic in f is raised again on the caller's goroutine, so that it
// unwinds the call's own deferred functions (the Agent's lock, the call's context) as it
// did before the work ran apart.
func apart(f func()) {
	done := make(chan any, 1)
	go func() {
		panicked := true
		defer func() {
			if panicked {
				done <- recover()
			}
		}()
		f()
		panicked = false
		done <- nil
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}

func replacedError() error {
	return rpcError(contract.ReasonConnectionReplaced, "another client of this agent initialized after this one; this client must stop")
}

func rpcError(reason, teaching string) error {
	data, err := json.Marshal(contract.RPCErrorData{Reason: reason, Teaching: teaching})
	if err != nil {
		return &jsonrpc.Error{Code: contract.RPCCodeServer, Message: reason}
	}
	return &jsonrpc.Error{Code: contract.RPCCodeServer, Message: reason, Data: data}
}
