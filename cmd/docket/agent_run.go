package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/agent/provider/emulated"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// runtimeFlags are the flags docket agent run, chat and serve share (DESIGN.md §9).
// Secrets come from files or the environment, never from flags.
type runtimeFlags struct {
	URL          string  `help:"The gateway's MCP endpoint (default: $DOCKET_MCP_URL, else the URL of the running docket serve plus /mcp)."`
	TokenFile    string  `help:"File holding the agent token (default: $DOCKET_AGENT_TOKEN)." name:"token-file"`
	Provider     string  `help:"Model provider: anthropic, openai, emulated or scripted (default: picked from --model-url or --script)." enum:",anthropic,openai,emulated,scripted" default:""`
	ModelURL     string  `help:"The model endpoint's root URL (default: $DOCKET_MODEL_URL)." name:"model-url"`
	Model        string  `help:"The model name the endpoint knows (default: $DOCKET_MODEL)."`
	ModelKeyFile string  `help:"File holding the model key (default: $DOCKET_MODEL_KEY)." name:"model-key-file"`
	Script       string  `help:"A script of tool calls for the scripted provider (runs no inference)."`
	PriceFile    string  `help:"TOML price table overriding the built-in one." name:"price-file"`
	MaxTurns     int     `help:"Stop after this many model turns (0: no bound)." name:"max-turns"`
	MaxTokens    int64   `help:"Stop once input plus output tokens reach this (0: no bound)." name:"max-tokens"`
	MaxUSD       float64 `help:"Stop once the run costs this many US dollars (0: no bound)." name:"max-usd"`

	ConversationMaxTurns  int     `help:"Stop once the conversation has taken this many model turns over all its runs (0: no bound)." name:"conversation-max-turns"`
	ConversationMaxTokens int64   `help:"Stop once the conversation's input plus output tokens over all its runs reach this (0: no bound)." name:"conversation-max-tokens"`
	ConversationMaxUSD    float64 `help:"Stop once the conversation costs this many US dollars over all its runs (0: no bound)." name:"conversation-max-usd"`
	ConversationDir       string  `help:"Keep conversations as files in this directory instead of in the authority (offline use and tests)." name:"conversation-dir"`

	HookCmd     string        `help:"A program run before and after each tool call with a JSON event on stdin; it refuses a call by printing {\"refuse\": \"reason\"}. Split on spaces; it runs without the model key and agent token." name:"hook-cmd"`
	HookTimeout time.Duration `help:"How long one run of --hook-cmd may take." default:"10s" name:"hook-timeout"`
	HoldWait    time.Duration `help:"How long a running call is kept open for the model while the runtime asks its state." default:"5m" name:"hold-wait"`
	LogLevel    string        `help:"Log level: debug, info, warn or error." enum:"debug,info,warn,error" default:"warn"`
}

// agentRuntime is what a runtime command works with; close it when done.
type agentRuntime struct {
	flags    runtimeFlags
	key      agent.Key
	provider agent.Provider
	gateway  *mcpclient.Client
	store    agent.ConversationStore
	prices   agent.Prices
	log      *slog.Logger
	e        *env
}

// open builds the provider and connects to the gateway. Flags left empty are taken from
// the environment the command was given.
func (f runtimeFlags) open(ctx context.Context, e *env) (*agentRuntime, error) {
	for _, d := range []struct {
		flag *string
		env  string
	}{{&f.URL, "DOCKET_MCP_URL"}, {&f.ModelURL, "DOCKET_MODEL_URL"}, {&f.Model, "DOCKET_MODEL"}} {
		if *d.flag == "" {
			*d.flag = e.Getenv(d.env)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.LogLevel)); err != nil {
		return nil, &usageError{err: err}
	}
	rt := &agentRuntime{flags: f, e: e, log: slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level}))}
	dir, err := dataDir(e)
	if err != nil {
		return nil, err
	}
	rt.prices = agent.DefaultPrices()
	if f.PriceFile != "" {
		b, err := os.ReadFile(f.PriceFile)
		if err != nil {
			return nil, &contract.Error{Code: contract.CodeModelConfig, Teaching: fmt.Sprintf("the price file %s cannot be read; pass a readable file", f.PriceFile), Err: err}
		}
		over, err := agent.ParsePrices(b)
		if err != nil {
			return nil, err
		}
		rt.prices = rt.prices.With(over)
	}
	if err := (agent.Budget{MaxTurns: f.MaxTurns, MaxTokens: f.MaxTokens, MaxUSD: f.MaxUSD}).Validate(); err != nil {
		return nil, err
	}
	if err := f.conversationBudget().Validate(); err != nil {
		return nil, err
	}
	if rt.provider, err = rt.newProvider(); err != nil {
		return nil, err
	}
	token, err := agentToken(e, f.TokenFile)
	if err != nil {
		return nil, err
	}
	url := f.URL
	if url == "" {
		base, err := serverURL(e, dir)
		if err != nil {
			return nil, err
		}
		url = base + "/mcp"
	}
	if f.ConversationDir != "" {
		rt.store = agent.FileConversations{Dir: f.ConversationDir}
	} else {
		root, err := apiRoot(url)
		if err != nil {
			return nil, err
		}
		rt.store = &agent.AuthorityConversations{API: &apiclient.Client{URL: root, Token: token}, Key: rt.key}
	}
	rt.gateway, err = mcpclient.Dial(ctx, mcpclient.Config{URL: url, Token: token, Logger: rt.log})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Stderr, "docket agent: model %s; gateway %s\n", rt.provider.Name(), url)
	return rt, nil
}

// conversationBudget is the budget of each conversation over all its runs.
func (f runtimeFlags) conversationBudget() agent.Budget {
	return agent.Budget{MaxTurns: f.ConversationMaxTurns, MaxTokens: f.ConversationMaxTokens, MaxUSD: f.ConversationMaxUSD}
}

// apiRoot is the authority's root for the gateway at mcpURL: docket serve mounts /mcp
// beside /api/v1 (DESIGN.md §9.3: conversations are kept in the authority).
func apiRoot(mcpURL string) (string, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", &usageError{err: fmt.Errorf("the gateway URL %q is not an absolute http(s) URL", mcpURL)}
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/mcp")
	u.RawQuery, u.Fragment, u.RawPath = "", "", ""
	return strings.TrimRight(u.String(), "/"), nil
}

// hook is the --hook-cmd hook, nil without one.
func (f runtimeFlags) hook() agent.Hook {
	argv := strings.Fields(f.HookCmd)
	if len(argv) == 0 {
		return nil
	}
	return agent.CommandHook{Argv: argv, Timeout: f.HookTimeout}
}

func (rt *agentRuntime) newProvider() (agent.Provider, error) {
	f := rt.flags
	cfg, err := agent.ModelConfig{Provider: agent.ProviderKind(f.Provider), URL: f.ModelURL, Model: f.Model, KeyFile: f.ModelKeyFile, Script: f.Script}.Resolve()
	if err != nil {
		return nil, err
	}
	if cfg.Provider == agent.ProviderScripted {
		s, err := scripted.Load(cfg.Script)
		if err != nil {
			return nil, err
		}
		return scripted.New(s, filepath.Base(cfg.Script))
	}
	if rt.key, err = agent.LoadKey(cfg.KeyFile, rt.e.Getenv); err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case agent.ProviderAnthropic:
		return anthropic.New(anthropic.Config{URL: cfg.URL, Model: cfg.Model, Key: rt.key})
	case agent.ProviderEmulated:
		inner, err := openai.New(openai.Config{URL: cfg.URL, Model: cfg.Model, Key: rt.key})
		if err != nil {
			return nil, err
		}
		return emulated.New(emulated.Config{Inner: inner})
	}
	return openai.New(openai.Config{URL: cfg.URL, Model: cfg.Model, Key: rt.key})
}

// agentToken reads the agent's bearer token from file, else DOCKET_AGENT_TOKEN.
func agentToken(e *env, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(e.Getenv(mcpclient.TokenEnv)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &exitError{code: exitCredential, err: fmt.Errorf("read the agent token file: %w", err)}
	}
	return strings.TrimSpace(string(b)), nil
}

// loop returns a governed loop with a fresh budget: budgets bound one run.
func (rt *agentRuntime) loop(out io.Writer) (*agent.Loop, error) {
	f := rt.flags
	meter, err := agent.NewMeter(agent.Budget{MaxTurns: f.MaxTurns, MaxTokens: f.MaxTokens, MaxUSD: f.MaxUSD}, f.Model, rt.prices)
	if err != nil {
		return nil, err
	}
	return agent.NewLoop(agent.LoopConfig{
		Provider: rt.provider, Gateway: rt.gateway, Store: rt.store, Meter: meter,
		ConversationBudget: f.conversationBudget(), Hook: f.hook(),
		HoldWait: f.HoldWait, Logger: rt.log,
		OnTool: func(c agent.ToolCall, r agent.ToolResult) {
			fmt.Fprintf(out, "  %s %s -> %s\n", c.Name, c.ID, clip(r.Content, 160))
		},
	})
}

func (rt *agentRuntime) close() { rt.gateway.Close() }

// failure maps a runtime error to the process's exit (DESIGN.md §1): 3 for a missing or
// rejected credential, 4 for a replaced connection, 1 otherwise. The model key is
// scrubbed from whatever is printed.
func (rt *agentRuntime) failure(err error) error {
	if err == nil {
		return nil
	}
	err = rt.key.ScrubError(err)
	switch {
	case errors.Is(err, mcpclient.ErrReplaced):
		return &exitError{code: exitReplaced, err: err}
	case errors.Is(err, mcpclient.ErrCredentialRejected), contract.CodeOf(err) == contract.CodeUnauthenticated:
		return &exitError{code: exitCredential, err: err}
	}
	return err
}

// openFailure is failure for errors before a runtime exists.
func openFailure(err error) error {
	rt := &agentRuntime{}
	return rt.failure(err)
}

// clip shortens s to n runes on one line, for progress output.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}

func newConversationID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "c-" + hex.EncodeToString(b)
}

// agentRunCmd runs one task to completion.
type agentRunCmd struct {
	runtimeFlags
	Conversation string `help:"Conversation to start or resume (default: a new one)."`
	Task         string `arg:"" optional:"" help:"The task; empty resumes --conversation where it stopped."`
}

func (c *agentRunCmd) Run(ctx context.Context, e *env) error {
	id := c.Conversation
	if id == "" {
		if strings.TrimSpace(c.Task) == "" {
			return &usageError{err: errors.New("give a TASK, or --conversation ID to resume one")}
		}
		id = newConversationID()
	}
	if err := agent.CheckConversationID(id); err != nil {
		return &usageError{err: err}
	}
	rt, err := c.open(ctx, e)
	if err != nil {
		return openFailure(err)
	}
	defer rt.close()
	fmt.Fprintf(e.Stderr, "docket agent: conversation %s (resume with --conversation %s)\n", id, id)
	l, err := rt.loop(e.Stderr)
	if err != nil {
		return err
	}
	out, err := l.Send(ctx, id, c.Task)
	if out.Final != "" {
		fmt.Fprintln(e.Stdout, out.Final)
	}
	return rt.failure(err)
}

// agentChatCmd talks with the model on stdin, one line a message.
type agentChatCmd struct {
	runtimeFlags
	Conversation string `help:"Conversation to start or resume (default: a new one)."`
}

func (c *agentChatCmd) Run(ctx context.Context, e *env) error {
	id := c.Conversation
	if id == "" {
		id = newConversationID()
	}
	if err := agent.CheckConversationID(id); err != nil {
		return &usageError{err: err}
	}
	rt, err := c.open(ctx, e)
	if err != nil {
		return openFailure(err)
	}
	defer rt.close()
	fmt.Fprintf(e.Stderr, "docket agent: conversation %s; one line is one message; end with EOF\n", id)
	sc := bufio.NewScanner(e.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for fmt.Fprint(e.Stderr, "> "); sc.Scan(); fmt.Fprint(e.Stderr, "> ") {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		l, err := rt.loop(e.Stderr)
		if err != nil {
			return err
		}
		out, err := l.Send(ctx, id, line)
		if out.Final != "" {
			fmt.Fprintln(e.Stdout, out.Final)
		}
		if err != nil {
			return rt.failure(err)
		}
	}
	fmt.Fprintln(e.Stderr)
	return sc.Err()
}

// agentServeCmd takes tasks on a loopback endpoint, one at a time.
type agentServeCmd struct {
	runtimeFlags
	Listen string `help:"Loopback address for the task endpoint." default:"127.0.0.1:0"`
}

// taskRequest is the body of POST /task.
type taskRequest struct {
	Text        string          `json:"text"`
	CaseType    string          `json:"caseType,omitempty"`
	BusinessKey json.RawMessage `json:"businessKey,omitempty"`
	SessionKey  string          `json:"sessionKey,omitempty"` // the same key continues the same conversation
}

// taskAnswer is the answer of POST /task.
type taskAnswer struct {
	SessionKey   string           `json:"sessionKey,omitempty"`
	Conversation string           `json:"conversation"`
	Final        string           `json:"final,omitempty"`
	ErrorCode    contract.Code    `json:"errorCode,omitempty"`
	Teaching     string           `json:"teaching,omitempty"`
	Stop         agent.StopReason `json:"stop,omitempty"`
}

const maxTaskBody = 1 << 20

func (c *agentServeCmd) Run(ctx context.Context, e *env) error {
	host, _, err := net.SplitHostPort(c.Listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return &usageError{err: fmt.Errorf("--listen %q is not a loopback address; the task endpoint listens on loopback only", c.Listen)}
	}
	rt, err := c.open(ctx, e)
	if err != nil {
		return openFailure(err)
	}
	defer rt.close()
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen for tasks: %w", err)
	}
	key := make([]byte, 24)
	rand.Read(key)
	ts := &taskServer{rt: rt, key: hex.EncodeToString(key), addr: ln.Addr().String(), fatal: make(chan error, 1)}
	srv := &http.Server{Handler: ts.routes(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.Stdout, "docket agent serve: POST http://%s/task with header \"Authorization: Bearer %s\"\n", ts.addr, ts.key)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-ts.fatal:
	case runErr = <-served:
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && runErr == nil {
		runErr = fmt.Errorf("shut down the task endpoint: %w", err)
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return rt.failure(runErr)
}

// taskServer serves POST /task, one task at a time over the Agent's one connection.
type taskServer struct {
	rt   *agentRuntime
	key  string
	addr string
	// fatal receives the error that ends the runtime (credential rejected, connection
	// replaced); Run reads it once and shuts the server down.
	fatal chan error
	mu    sync.Mutex // one task at a time
}

func (s *taskServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /task", s.handleTask)
	return mux
}

func (s *taskServer) handleTask(w http.ResponseWriter, r *http.Request) {
	if r.Host != s.addr {
		writeTask(w, http.StatusForbidden, taskAnswer{ErrorCode: contract.CodeHostNotAllowed, Teaching: "the task endpoint answers only to " + s.addr})
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.key)) != 1 {
		writeTask(w, http.StatusUnauthorized, taskAnswer{ErrorCode: contract.CodeUnauthenticated, Teaching: "send the per-run key docket agent serve printed as a bearer token"})
		return
	}
	var req taskRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxTaskBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || strings.TrimSpace(req.Text) == "" {
		writeTask(w, http.StatusBadRequest, taskAnswer{SessionKey: req.SessionKey, ErrorCode: contract.CodeInvalidArgument,
			Teaching: "send a JSON object {text, caseType?, businessKey?, sessionKey?} with a non-empty text and no other fields"})
		return
	}
	id := newConversationID()
	if req.SessionKey != "" {
		sum := sha256.Sum256([]byte(req.SessionKey))
		id = "s-" + hex.EncodeToString(sum[:12])
	}
	text := req.Text
	if req.CaseType != "" {
		text += "\n\nCase type: " + req.CaseType
	}
	if len(req.BusinessKey) > 0 {
		text += "\nBusiness key: " + string(req.BusinessKey)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ans := taskAnswer{SessionKey: req.SessionKey, Conversation: id}
	l, err := s.rt.loop(io.Discard)
	var out agent.Outcome
	if err == nil {
		out, err = l.Send(r.Context(), id, text)
	}
	ans.Final, ans.Stop = out.Final, out.Stop
	if err = s.rt.failure(err); err != nil {
		if _, ok := errors.AsType[*exitError](err); ok {
			select {
			case s.fatal <- err:
			default:
			}
		}
		ans.ErrorCode, ans.Teaching = codeOf(err), s.rt.key.Scrub(err.Error())
		writeTask(w, http.StatusOK, ans)
		return
	}
	writeTask(w, http.StatusOK, ans)
}

func codeOf(err error) contract.Code {
	if be, ok := errors.AsType[*agent.BudgetError](err); ok {
		return be.Code()
	}
	if code := contract.CodeOf(err); code != "" {
		return code
	}
	return contract.CodeInternal
}

func writeTask(w http.ResponseWriter, status int, a taskAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(a)
}
