// Package mcp provides the mcp adapter: an outbound MCP client that calls the tools of an
// mcp Source over stdio or Streamable HTTP, one session per Source.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of one call; a Tool's fence may lower or raise them.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxBytes = 1 << 20 // cap on the JSON of one result, bytes
	MaxTools        = 200     // most tools docket.mcp.discover@1 lists
	maxToolPages    = 50      // most tools/list pages discovery reads, whatever the server's cursors
)

// Adapter calls MCP tools. It keeps one session per Source, opened on first use and
// opened anew on the next call after it breaks; a call is never re-sent. It is safe for
// concurrent use; Close ends every session.
//
// A Tool's entry names the server's tool; the built-in docket.mcp.discover@1 (empty
// entry) lists the server's tools instead, across pages, at most [MaxTools]: a longer
// list is cut there and every row says so in its "truncated" column. A stdio server is started
// from the Source's command with the basics of the worker's environment
// ([worker.ScrubEnv]) plus the Source's env from the vault. Results become rows from
// structuredContent when there is one ({"rows": [objects…]} is those rows, another object
// one row), else from each text content that is a JSON object or array, else one row
// {"text": …} per text content.
//
// The client advertises no capability: no roots, sampling or elicitation, so a server
// can neither list the worker's files nor ask it, or a person through it, anything.
//
// A read Tool that fails is refused. A write or run Tool whose call fails after it was
// sent, or whose result is marked isError, is an unknown effect: the server may have
// acted before it failed.
type Adapter struct {
	Environ func() []string // the environment to scrub for stdio servers; default os.Environ

	mu       sync.Mutex          // guards sessions
	sessions map[string]*session // by Source name
	closing  sync.WaitGroup      // sessions being closed in the background; Close waits for them
}

var _ worker.Adapter = (*Adapter)(nil)

type session struct {
	cs *sdk.ClientSession
}

// Execute runs one call, or a discovery.
func (a *Adapter) Execute(ctx context.Context, c worker.Call) (worker.Outcome, error) {
	if c.Source == nil || c.Source.Type != "mcp" {
		return worker.Refuse(contract.Errorf(contract.CodeSourceTypeMatch, "tool %s runs against an mcp Source; name one.", c.Tool))
	}
	timeout, maxBytes := DefaultTimeout, int64(DefaultMaxBytes)
	if f := c.Def.Fence; f != nil {
		if f.TimeoutMs > 0 {
			timeout = time.Duration(f.TimeoutMs) * time.Millisecond
		}
		if f.MaxBytes > 0 {
			maxBytes = f.MaxBytes
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := a.session(ctx, c.Source)
	if err != nil {
		return worker.Refuse(err) // nothing was sent
	}
	if c.Def.Entry == "" {
		rows, err := discover(ctx, s.cs)
		if err != nil {
			a.drop(c.Source.Name, s, err)
			return worker.Refuse(err)
		}
		return worker.OK(rows...)
	}
	failed := func(err error) (worker.Outcome, error) {
		if c.Def.Kind == contract.ToolKindRead {
			return worker.Refuse(err)
		}
		return worker.Unknown(err)
	}
	args := map[string]any{}
	for k, v := range c.Args {
		args[k] = v
	}
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: c.Def.Entry, Arguments: args})
	if err != nil {
		a.drop(c.Source.Name, s, err)
		if ctx.Err() != nil {
			return failed(&contract.Error{Code: contract.CodeToolTimeout, Teaching: fmt.Sprintf("tool %s got no answer within %s; raise fence.timeoutMs or check the server.", c.Tool, timeout), Err: err})
		}
		return failed(fmt.Errorf("mcp call %s: %w", c.Tool, worker.RedactURL(err)))
	}
	if b, err := json.Marshal(res); err != nil || int64(len(b)) > maxBytes {
		return failed(contract.Errorf(contract.CodeOutputTooBig, "tool %s returned over %d bytes; ask for less or raise fence.maxBytes.", c.Tool, maxBytes))
	}
	if res.IsError {
		return failed(&contract.Error{Code: contract.CodeMCPTool,
			Teaching: fmt.Sprintf("the MCP server reported tool %s as failed; its message is in the worker's log.", c.Tool), Err: errors.New(text(res))})
	}
	rows, err := rowsOf(res)
	if err != nil {
		return failed(&contract.Error{Code: contract.CodeRunOutput, Teaching: fmt.Sprintf("tool %s returned content that is not rows.", c.Tool), Err: err})
	}
	return worker.OK(rows...)
}

// Close ends every session.
func (a *Adapter) Close() error {
	a.mu.Lock()
	var errs []error
	for name, s := range a.sessions {
		errs = append(errs, s.cs.Close())
		delete(a.sessions, name)
	}
	a.mu.Unlock()
	a.closing.Wait()
	return errors.Join(errs...)
}

// session returns the Source's session, connecting on first use.
func (a *Adapter) session(ctx context.Context, src *worker.Source) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[src.Name]; ok {
		return s, nil
	}
	var t sdk.Transport
	if len(src.Command) > 0 {
		// The server outlives this call, so its process must not end with ctx.
		cmd := exec.Command(src.Command[0], src.Command[1:]...)
		environ := os.Environ
		if a.Environ != nil {
			environ = a.Environ
		}
		cmd.Env = worker.ScrubEnv(environ(), nil)
		for k, v := range src.Env {
			cmd.Env = append(cmd.Env, k+"="+v.Reveal())
		}
		t = &sdk.CommandTransport{Command: cmd}
	} else {
		endpoint, err := url.Parse(src.URL.Reveal())
		if err != nil {
			return nil, contract.Errorf(contract.CodeVaultInvalid, "source %s has a malformed url; fix it in the vault.", src.Name)
		}
		origin := worker.Origin(endpoint)
		t = &sdk.StreamableClientTransport{Endpoint: src.URL.Reveal(), MaxRetries: -1, DisableStandaloneSSE: true,
			MaxEventSize: DefaultMaxBytes + 64<<10,
			HTTPClient: &http.Client{Transport: &headers{base: http.DefaultTransport, h: src.Headers, origin: origin},
				// A redirect off the Source's origin is refused: the session and its
				// headers stay with the server the vault names.
				CheckRedirect: func(r *http.Request, via []*http.Request) error {
					if worker.Origin(r.URL) != origin || len(via) >= 5 {
						return contract.Errorf(contract.CodeHTTPHost, "the MCP server of source %s redirected off its origin; a redirect must keep the scheme, host and port.", src.Name)
					}
					return nil
				}}}
	}
	// Empty capabilities, set explicitly: the SDK's default advertises roots.
	client := sdk.NewClient(&sdk.Implementation{Name: "docket-worker", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		// The SDK's message can quote the URL, which may carry a credential.
		return nil, &contract.Error{Code: contract.CodeMCPUnavailable,
			Teaching: fmt.Sprintf("the MCP server of source %s could not be reached or initialized; check its command or url in the vault.", src.Name), Err: err}
	}
	s := &session{cs: cs}
	if a.sessions == nil {
		a.sessions = map[string]*session{}
	}
	a.sessions[src.Name] = s
	return s, nil
}

// drop forgets a session after a failed call when the connection is gone, so the next
// call connects anew.
func (a *Adapter) drop(name string, s *session, err error) {
	if !errors.Is(err, sdk.ErrConnectionClosed) && !errors.Is(err, context.DeadlineExceeded) {
		return
	}
	a.mu.Lock()
	if a.sessions[name] == s {
		delete(a.sessions, name)
	}
	a.mu.Unlock()
	// Closing waits for the server to end the session, which a stalled server may take
	// seconds to do; the call's outcome does not wait for that.
	a.closing.Go(func() { s.cs.Close() })
}

// headers adds a Source's headers to each request to the Source's origin, and to no other.
type headers struct {
	base   http.RoundTripper
	h      map[string]worker.Secret
	origin string // the Source URL's scheme://host:port
}

func (t *headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if worker.Origin(r.URL) != t.origin {
		return nil, contract.Errorf(contract.CodeHTTPHost, "an MCP request left the Source's origin; it was not sent.")
	}
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v.Reveal())
	}
	return t.base.RoundTrip(r)
}

// discover lists the server's tools across pages, at most MaxTools of them from at most
// maxToolPages pages; when it stops short of the end, every row says truncated.
func discover(ctx context.Context, cs *sdk.ClientSession) ([]contract.Args, error) {
	var tools []*sdk.Tool
	cursor, truncated := "", false
	for page := 0; ; page++ {
		if page == maxToolPages {
			truncated = true
			break
		}
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, res.Tools...)
		if len(tools) > MaxTools {
			tools, truncated = tools[:MaxTools], true
			break
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	rows := make([]contract.Args, 0, len(tools))
	for _, tool := range tools {
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("encode the input schema of %.80s: %w", tool.Name, err)
		}
		// outputSchema is "" when the tool declares none: its results are then text, and
		// no returns mapping can be offered for it.
		output := ""
		if tool.OutputSchema != nil {
			b, err := json.Marshal(tool.OutputSchema)
			if err != nil {
				return nil, fmt.Errorf("encode the output schema of %.80s: %w", tool.Name, err)
			}
			output = string(b)
		}
		readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
		rows = append(rows, contract.Args{"name": contract.StringValue(tool.Name), "description": contract.StringValue(tool.Description),
			"inputSchema": contract.StringValue(string(schema)), "outputSchema": contract.StringValue(output),
			"readOnly": contract.BoolValue(readOnly), "truncated": contract.BoolValue(truncated)})
	}
	return rows, nil
}

func rowsOf(res *sdk.CallToolResult) ([]contract.Args, error) {
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		// structuredContent must be an object, so a table comes as {"rows": [...]}: its
		// rows are the rows, each a set of facts, not one row with a column "rows".
		var table map[string]json.RawMessage
		if err := json.Unmarshal(b, &table); err == nil && len(table) == 1 {
			if rows, ok := table["rows"]; ok && len(bytes.TrimSpace(rows)) > 0 && bytes.TrimSpace(rows)[0] == '[' {
				return worker.Rows(rows, false)
			}
		}
		return worker.Rows(b, false)
	}
	var rows []contract.Args
	for _, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok {
			continue
		}
		if json.Valid([]byte(tc.Text)) {
			if rs, err := worker.Rows([]byte(tc.Text), false); err == nil {
				rows = append(rows, rs...)
				continue
			}
		}
		rows = append(rows, contract.Args{"text": contract.StringValue(tc.Text)})
	}
	return rows, nil
}

func text(res *sdk.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
