// Package runner provides the agent runtime assembled from plain configuration: the
// model provider, the Agent's connection to the gateway, the conversation store and the
// price table, and the loops and task endpoint that run on them.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/agent/provider/emulated"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/failover"
	"github.com/docketrun/docket/internal/material"
)

// MaterialsDir is the material area's directory in the data dir, where docket start
// keeps the bytes of the files members add and the worker's "materials" Source reads.
const MaterialsDir = "materials"

// Config is what a runtime is built from. Secrets come from files or the environment,
// never from the configuration itself. Getenv and Stderr are required.
type Config struct {
	URL          string  // the gateway's MCP endpoint, or several serves' comma separated; "": $DOCKET_MCP_URL, else the running docket serve's URL plus /mcp
	TokenFile    string  // file holding the agent token; "": $DOCKET_AGENT_TOKEN
	Provider     string  // anthropic, openai, emulated or scripted; "": picked from ModelURL or Script
	ModelURL     string  // the model endpoint's root URL; "": $DOCKET_MODEL_URL
	Model        string  // the model name the endpoint knows; "": $DOCKET_MODEL
	ModelKeyFile string  // file holding the model key; "": $DOCKET_MODEL_KEY
	Script       string  // a script of tool calls for the scripted provider
	PriceFile    string  // TOML price table overriding the built-in one; "": none
	MaxTurns     int     // model turns of one run; 0: no bound
	MaxTokens    int64   // input plus output tokens of one run; 0: no bound
	MaxUSD       float64 // US dollars of one run; 0: no bound
	// ContextWindow is the model's context window in tokens; 0: agent.ContextWindow's
	// for the model (a scripted model, which has none, is then never compacted).
	ContextWindow int
	// OutputLimit is the bytes of a tool result shown to the model; 0: agent.DefaultOutputLimit.
	OutputLimit int

	// ModelFirstByte and ModelIdle bound each model request: the wait for its answer's
	// first byte, and between two reads of the answer; 0 takes agent.DefaultFirstByte and
	// agent.DefaultIdle. A request past either fails its task with model_stalled.
	ModelFirstByte time.Duration
	ModelIdle      time.Duration

	// ModelAttempts and ModelRetryWait bound the retries of a model request that failed
	// for a reason that means "later" (a rate limit, a server failure, a cut answer; see
	// agent.RetryPolicy): the attempts in all, and the back-off waited in all; 0 takes
	// agent.DefaultRetryAttempts and agent.DefaultRetryWait.
	ModelAttempts  int
	ModelRetryWait time.Duration
	// Thinking asks a reasoning model to think: on, off, or ""/default for the provider's
	// own default (agent.Thinking).
	Thinking string

	ConversationMaxTurns  int     // model turns of a conversation over all its runs; 0: no bound
	ConversationMaxTokens int64   // tokens of a conversation over all its runs; 0: no bound
	ConversationMaxUSD    float64 // US dollars of a conversation over all its runs; 0: no bound
	ConversationDir       string  // keep conversations as files here instead of in the authority; "": the authority

	// MaterialDir is the material area whose texts the runtime shows its model when their
	// disclosure is allowed (docs/materials.md); "": <data dir>/materials. Materials are
	// shown only with the authority (not with ConversationDir).
	MaterialDir string

	// InstructionsFile is an AGENTS.md-style text given to the model as its standing
	// instructions; "": none. When InstructionsDigest is set, the file's content must
	// have that digest (the one its profile recorded), or the runtime does not start.
	InstructionsFile   string
	InstructionsDigest string
	// Workspace is the directory the Agent works in, whose instruction files and skills
	// the model is given (agent.ReadWorkspace); "": none.
	Workspace string

	// TaskFile, when set, is where ServeTasks writes its endpoint and per-run key (a
	// [TaskEndpoint], mode 0600) instead of printing the key: docket start's supervised
	// runtimes, whose output is a log.
	TaskFile string

	HookCmd     string        // a program run before and after each tool call, split on spaces; "": none
	HookTimeout time.Duration // how long one run of HookCmd may take
	HoldWait    time.Duration // how long a running call is kept open while the runtime asks its state
	LogLevel    string        // debug, info, warn or error; "": info

	Getenv func(string) string // the environment defaults and the model key are read from
	Stderr io.Writer           // the runtime's log and its banner

	Tracer trace.TracerProvider // traces each model turn; nil: none

	// Trust is what the runtime trusts of serve over https, for both /mcp and /api/v1
	// (docket agent --ca); nil: the system's roots.
	Trust *certs.Trust
}

// Kind is the class of an [Error], which a command maps to its exit status.
type Kind int

const (
	KindUsage      Kind = iota + 1 // the configuration cannot work as given
	KindCredential                 // the agent token is missing or was rejected
	KindReplaced                   // another runtime took over the Agent's connection
)

// Error is a failure of the runtime that ends it, with its class. It reads as Err.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Runtime is an assembled agent runtime: one provider and one gateway connection, used
// by one loop at a time. Close it when done.
type Runtime struct {
	cfg          Config
	instructions string // the standing instructions, read from InstructionsFile and the Workspace
	skills       []agent.Skill
	key          agent.Key
	provider     agent.Provider
	watch        *agent.Watch // what the model request in flight waits on, for the lease keeper
	gateway      *mcpclient.Client
	store        agent.ConversationStore
	api          *apiclient.Client // the authority's /api/v1 with the Agent's token; nil with ConversationDir
	materialDir  string            // the material area; "" with ConversationDir
	prices       agent.Prices
	log          *slog.Logger
	// budgets asks the authority's budgets before each model request; nil with
	// ConversationDir (no authority). modelKind and modelName are the provider and model
	// its reservations are priced by.
	budgets              agent.Holder
	modelKind, modelName string
	window               int // the model's context window, 0 for a scripted model with none set
	// onTool, when set, also sees each call a task's run answered: docket agent run's
	// progress on a pinned run.
	onTool func(agent.ToolCall, agent.ToolResult)
}

// Open builds the provider and connects to the gateway. Fields left empty are taken from
// the environment cfg.Getenv reads.
func Open(ctx context.Context, cfg Config) (*Runtime, error) {
	rt, err := open(ctx, cfg)
	if err != nil {
		return nil, (&Runtime{}).Failure(err)
	}
	return rt, nil
}

func open(ctx context.Context, f Config) (*Runtime, error) {
	for _, d := range []struct {
		field *string
		env   string
	}{{&f.URL, "DOCKET_MCP_URL"}, {&f.ModelURL, "DOCKET_MODEL_URL"}, {&f.Model, "DOCKET_MODEL"}} {
		if *d.field == "" {
			*d.field = f.Getenv(d.env)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.LogLevel)); f.LogLevel != "" && err != nil {
		return nil, &Error{Kind: KindUsage, Err: err}
	}
	rt := &Runtime{cfg: f, log: slog.New(slog.NewTextHandler(f.Stderr, &slog.HandlerOptions{Level: level}))}
	dir, err := datadir.Dir(f.Getenv)
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
	if f.OutputLimit != 0 && f.OutputLimit < agent.MinOutputLimit {
		return nil, &Error{Kind: KindUsage, Err: fmt.Errorf("the output limit %d is below %d bytes, where the cut note would not fit; raise it or leave it out", f.OutputLimit, agent.MinOutputLimit)}
	}
	if err := f.runBudget().Validate(); err != nil {
		return nil, err
	}
	if err := f.conversationBudget().Validate(); err != nil {
		return nil, err
	}
	if rt.instructions, err = readInstructions(f.InstructionsFile, f.InstructionsDigest); err != nil {
		return nil, err
	}
	if f.Workspace != "" {
		ws, err := agent.ReadWorkspace(f.Workspace)
		if err != nil {
			return nil, err
		}
		rt.instructions = strings.TrimSpace(rt.instructions + "\n\n" + ws.Instructions)
		rt.skills = ws.Skills
	}
	if rt.provider, err = rt.newProvider(); err != nil {
		return nil, err
	}
	rt.provider = agent.Traced(agent.WithRetries(rt.provider, agent.RetryPolicy{Attempts: f.ModelAttempts, MaxWait: f.ModelRetryWait, Watch: rt.watch}), f.Tracer)
	token, err := agentToken(f.Getenv, f.TokenFile)
	if err != nil {
		return nil, err
	}
	list := f.URL
	if list == "" {
		base, err := datadir.ServerURL(f.Getenv, dir)
		if err != nil {
			return nil, err
		}
		list = gatewayURLs(base)
	}
	// Several serves over one store (docs/deploy.md, "PostgreSQL with several serves"):
	// the gateway's and /api/v1's requests go to the serve in use, and both move on
	// together when it stops answering.
	urls, err := failover.Parse(list)
	if err != nil {
		return nil, err
	}
	serves, err := failover.New(urls, rt.log)
	if err != nil {
		return nil, err
	}
	mcpURL := serves.First()
	if f.ConversationDir != "" {
		rt.store = agent.FileConversations{Dir: f.ConversationDir}
	} else {
		root, err := apiRoot(mcpURL)
		if err != nil {
			return nil, err
		}
		rt.api = &apiclient.Client{URL: root, Token: token, HTTP: serves.Client(f.Trust.Client())}
		rt.budgets = authorityBudgets{api: rt.api, provider: rt.modelKind, model: rt.modelName}
		rt.store = &agent.AuthorityConversations{API: rt.api, Key: rt.key}
		rt.materialDir = f.MaterialDir
		if rt.materialDir == "" {
			rt.materialDir = filepath.Join(dir, MaterialsDir)
		}
	}
	// HTTP/1.1 over TLS too: a runtime hosts one Agent, and an HTTP/2 connection of its
	// own costs serve more per Agent (docs/security.md, "Network surface").
	gw := f.Trust.Transport()
	gw.Protocols = new(http.Protocols)
	gw.Protocols.SetHTTP1(true)
	rt.gateway, err = mcpclient.Dial(ctx, mcpclient.Config{URL: mcpURL, Token: token, Logger: rt.log,
		HTTP: &http.Client{Transport: serves.Transport(f.Trust.Explain(gw))}})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f.Stderr, "docket agent: model %s; gateway %s\n", rt.provider.Name(), list)
	return rt, nil
}

// runBudget is the budget of one run.
func (f Config) runBudget() agent.Budget {
	return agent.Budget{MaxTurns: f.MaxTurns, MaxTokens: f.MaxTokens, MaxUSD: f.MaxUSD}
}

// conversationBudget is the budget of each conversation over all its runs.
func (f Config) conversationBudget() agent.Budget {
	return agent.Budget{MaxTurns: f.ConversationMaxTurns, MaxTokens: f.ConversationMaxTokens, MaxUSD: f.ConversationMaxUSD}
}

// gatewayURLs is the gateway's endpoint at each serve of base, the serves' URLs comma
// separated as $DOCKET_URL gives them.
func gatewayURLs(base string) string {
	parts := strings.Split(base, ",")
	for i, p := range parts {
		parts[i] = strings.TrimRight(strings.TrimSpace(p), "/") + "/mcp"
	}
	return strings.Join(parts, ",")
}

// apiRoot is the authority's root for the gateway at mcpURL: docket serve mounts /mcp
// beside /api/v1, where conversations are kept so that a runtime on any machine can
// resume them.
func apiRoot(mcpURL string) (string, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", &Error{Kind: KindUsage, Err: fmt.Errorf("the gateway URL %q is not an absolute http(s) URL", mcpURL)}
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/mcp")
	u.RawQuery, u.Fragment, u.RawPath = "", "", ""
	return strings.TrimRight(u.String(), "/"), nil
}

// hook is the HookCmd hook, nil without one.
func (f Config) hook() agent.Hook {
	argv := strings.Fields(f.HookCmd)
	if len(argv) == 0 {
		return nil
	}
	return agent.CommandHook{Argv: argv, Timeout: f.HookTimeout}
}

func (rt *Runtime) newProvider() (agent.Provider, error) {
	f := rt.cfg
	if f.ModelFirstByte < 0 || f.ModelIdle < 0 {
		return nil, &Error{Kind: KindUsage, Err: errors.New("the model's first-byte and idle deadlines are positive durations (or 0 for the defaults)")}
	}
	if err := (agent.RetryPolicy{Attempts: f.ModelAttempts, MaxWait: f.ModelRetryWait}).Validate(); err != nil {
		return nil, &Error{Kind: KindUsage, Err: err}
	}
	rt.watch = &agent.Watch{}
	deadlines := agent.Deadlines{FirstByte: f.ModelFirstByte, Idle: f.ModelIdle, Watch: rt.watch}
	cfg, err := agent.ModelConfig{Provider: agent.ProviderKind(f.Provider), URL: f.ModelURL, Model: f.Model, KeyFile: f.ModelKeyFile, Script: f.Script}.Resolve()
	if err != nil {
		return nil, err
	}
	rt.modelKind, rt.modelName = string(cfg.Provider), cfg.Model
	if cfg.Provider != agent.ProviderScripted || f.ContextWindow > 0 {
		rt.window, _ = agent.ContextWindow(cfg.Model, f.ContextWindow)
	}
	if cfg.Provider == agent.ProviderScripted {
		s, err := scripted.Load(cfg.Script)
		if err != nil {
			return nil, err
		}
		return scripted.New(s, filepath.Base(cfg.Script))
	}
	thinking, err := agent.ParseThinking(f.Thinking)
	if err != nil {
		return nil, &Error{Kind: KindUsage, Err: err}
	}
	if rt.key, err = agent.LoadKey(cfg.KeyFile, f.Getenv); err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case agent.ProviderAnthropic:
		return anthropic.New(anthropic.Config{URL: cfg.URL, Model: cfg.Model, Key: rt.key, Deadlines: deadlines, Thinking: thinking})
	case agent.ProviderEmulated:
		inner, err := openai.New(openai.Config{URL: cfg.URL, Model: cfg.Model, Key: rt.key, Deadlines: deadlines, Thinking: thinking})
		if err != nil {
			return nil, err
		}
		return emulated.New(emulated.Config{Inner: inner})
	}
	return openai.New(openai.Config{URL: cfg.URL, Model: cfg.Model, Key: rt.key, Deadlines: deadlines, Thinking: thinking})
}

// maxInstructions bounds an instructions file in bytes: standing instructions, not a
// corpus.
const maxInstructions = 256 << 10

// readInstructions reads the standing instructions from file, checking its content
// against digest when one is given.
func readInstructions(file, digest string) (string, error) {
	if file == "" {
		if digest != "" {
			return "", &Error{Kind: KindUsage, Err: errors.New("an instructions digest is given without the instructions file")}
		}
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &contract.Error{Code: contract.CodeModelConfig, Teaching: fmt.Sprintf("the instructions file %s cannot be read; pass a readable file", file), Err: err}
	}
	if len(b) > maxInstructions {
		return "", contract.Errorf(contract.CodeModelConfig, "the instructions file %s is over %d bytes; keep standing instructions short", file, maxInstructions)
	}
	if got := contract.Sum(b).String(); digest != "" && got != digest {
		return "", contract.Errorf(contract.CodeModelConfig, "the instructions file %s changed since its profile was set (its digest is %s, the profile recorded %s); read it again and set the profile again (docket agent profile set … --instructions %s)", file, got, digest, file)
	}
	return string(b), nil
}

// agentToken reads the agent's bearer token from file, else DOCKET_AGENT_TOKEN.
func agentToken(getenv func(string) string, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(mcpclient.TokenEnv)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &Error{Kind: KindCredential, Err: fmt.Errorf("read the agent token file: %w", err)}
	}
	return strings.TrimSpace(string(b)), nil
}

// Loop returns a governed loop with a fresh budget, since budgets bound one run.
// onTool sees each answered call and onDelta the model's streamed output; either may be
// nil.
func (rt *Runtime) Loop(onTool func(agent.ToolCall, agent.ToolResult), onDelta func(agent.Delta)) (*agent.Loop, error) {
	f := rt.cfg
	meter, err := agent.NewMeter(f.runBudget(), f.Model, rt.prices)
	if err != nil {
		return nil, err
	}
	cfg := agent.LoopConfig{
		Provider: rt.provider, Gateway: rt.gateway, Store: rt.store, Meter: meter,
		ConversationBudget: f.conversationBudget(), Budgets: rt.budgets, Hook: f.hook(), Instructions: rt.instructions, Skills: rt.skills,
		HoldWait: f.HoldWait, Logger: rt.log, OnTool: onTool, OnDelta: onDelta,
	}
	cfg.ContextWindow = rt.window
	cfg.Bounder.Limit = f.OutputLimit
	if rt.api != nil {
		// Outcomes are awaited on the authority's events, not by asking the strip, and
		// results over the inline bound are kept by the authority, so the model's
		// ReadArtifact refs outlive this process (docs/mcp.md, "Artifacts").
		cfg.Waiter = rt.api
		cfg.Bounder.Sink = agent.AuthorityArtifacts{API: rt.api, Key: rt.key}
		cfg.Materials = agent.AuthorityMaterials{API: rt.api, Area: material.Area{Dir: rt.materialDir}}
	}
	return agent.NewLoop(cfg)
}

// Progress returns an onTool for [Runtime.Loop] that prints one line per answered call
// to w.
func Progress(w io.Writer) func(agent.ToolCall, agent.ToolResult) {
	return func(c agent.ToolCall, r agent.ToolResult) {
		if code, teaching := Refusal(r); code != "" {
			// A refusal is printed whole: its code and teaching say what to do.
			fmt.Fprintf(w, "  %s %s -> %s: %s\n", c.Name, c.ID, code, teaching)
			return
		}
		fmt.Fprintf(w, "  %s %s -> %s\n", c.Name, c.ID, Clip(r.Content, 160))
	}
}

// Refusal is the errorCode and teaching of a tool result that carries one; "" otherwise.
func Refusal(r agent.ToolResult) (contract.Code, string) {
	var head struct {
		ErrorCode contract.Code `json:"errorCode"`
		Teaching  string        `json:"teaching"`
	}
	if json.Unmarshal([]byte(r.Content), &head) != nil {
		return "", ""
	}
	return head.ErrorCode, strings.Join(strings.Fields(head.Teaching), " ")
}

// Provider is the runtime's model provider.
func (rt *Runtime) Provider() agent.Provider { return rt.provider }

// Gateway is the runtime's connection to the gateway.
func (rt *Runtime) Gateway() *mcpclient.Client { return rt.gateway }

// Close ends the gateway connection. A session that does not end cleanly is logged, not
// returned: by then the run's outcome is settled and saved, and it must not be changed
// by the goodbye.
func (rt *Runtime) Close() {
	if err := rt.gateway.Close(); err != nil {
		rt.log.Warn("gateway session not ended", logErr, err)
	}
}

// Failure classifies an error that ends the runtime: a replaced connection and a missing
// or rejected credential become an [*Error] of that kind; the model key is scrubbed from
// whatever err says.
func (rt *Runtime) Failure(err error) error {
	if err == nil {
		return nil
	}
	err = rt.key.ScrubError(err)
	switch {
	case errors.Is(err, mcpclient.ErrReplaced):
		return &Error{Kind: KindReplaced, Err: err}
	case errors.Is(err, mcpclient.ErrCredentialRejected), contract.CodeOf(err) == contract.CodeUnauthenticated:
		if _, ok := errors.AsType[*Error](err); ok {
			return err
		}
		return &Error{Kind: KindCredential, Err: err}
	}
	return err
}

// Clip shortens s to n runes on one line, for progress output.
func Clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}

// NewConversationID returns a fresh conversation id.
func NewConversationID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "c-" + hex.EncodeToString(b)
}
