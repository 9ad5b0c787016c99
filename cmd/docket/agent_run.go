package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/runner"
)

// runtimeFlags are the flags docket agent run, chat and serve share.
// Secrets come from files or the environment, never from flags.
type runtimeFlags struct {
	URL          string  `help:"The gateway's MCP endpoint, https://…/mcp for a serve on another machine (default: $DOCKET_MCP_URL, else the URL of the running docket serve plus /mcp). Several serves over one PostgreSQL are given comma separated (https://a:7420/mcp,https://b:7420/mcp): the runtime moves to the next when the one in use stops answering."`
	CA           string  `name:"ca" help:"The CA file that signed serve's certificate (docket cert's ca.pem); default $DOCKET_CA, else the data dir's tls/ca.pem, else the system's roots." type:"existingfile"`
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
	OutputLimit  int     `help:"Bytes of a tool result shown to the model; a longer one is kept whole as an artifact and shown cut with its ref (0: 16384; at least 512)." name:"output-limit"`
	Window       int     `help:"The model's context window in tokens; nearing it, older turns are compacted into a summary (0: the window of a known model, else 32768; a scripted model is never compacted)." name:"context-window"`

	ConversationMaxTurns  int     `help:"Stop once the conversation has taken this many model turns over all its runs (0: no bound)." name:"conversation-max-turns"`
	ConversationMaxTokens int64   `help:"Stop once the conversation's input plus output tokens over all its runs reach this (0: no bound)." name:"conversation-max-tokens"`
	ConversationMaxUSD    float64 `help:"Stop once the conversation costs this many US dollars over all its runs (0: no bound)." name:"conversation-max-usd"`
	ConversationDir       string  `help:"Keep conversations as files in this directory instead of in the authority (offline use and tests)." name:"conversation-dir"`

	InstructionsFile   string `help:"An AGENTS.md-style file given to the model as its standing instructions." name:"instructions-file" type:"path"`
	InstructionsDigest string `help:"The digest the instructions file must have (its profile's); the runtime does not start when it differs." name:"instructions-digest"`
	Workspace          string `help:"The directory the Agent works in: its AGENTS.md and CLAUDE.md files from the root down are standing instructions, and its .docket/skills and .claude/skills are listed to the model." type:"path"`

	HookCmd     string        `help:"A program run before and after each tool call with a JSON event on stdin; it refuses a call by printing {\"refuse\": \"reason\"}. Split on spaces; it runs without the model key and agent token." name:"hook-cmd"`
	HookTimeout time.Duration `help:"How long one run of --hook-cmd may take." default:"10s" name:"hook-timeout"`
	HoldWait    time.Duration `help:"How long a running call is kept open for the model while the runtime asks its state." default:"5m" name:"hold-wait"`
	LogLevel    string        `help:"Log level: debug, info, warn or error." enum:"debug,info,warn,error" default:"warn"`

	ModelFirstByte time.Duration `help:"How long a model request may wait for the first byte of its answer before its task fails with model_stalled." default:"5m" name:"model-first-byte"`
	ModelIdle      time.Duration `help:"How long a model's answer may pause between two reads before its task fails with model_stalled." default:"2m" name:"model-idle"`
	ModelAttempts  int           `help:"Attempts of one model request, the first included, when it fails for a reason that means later (429, 5xx, overloaded, a cut answer, a stall); 1 sends each once." default:"5" name:"model-attempts"`
	ModelRetryWait time.Duration `help:"The back-off one model request may wait in all between its attempts (Retry-After honoured)." default:"2m" name:"model-retry-wait"`
	Thinking       string        `help:"Ask a reasoning model to think: on, off, or default (the provider's own)." enum:"default,on,off" default:"default"`
}

// config maps the flags to the runtime's configuration, which reads its defaults and
// the model key from the command's environment.
func (f runtimeFlags) config(e *env) (runner.Config, error) {
	dir, err := dataDir(e)
	if err != nil {
		return runner.Config{}, err
	}
	trust, err := clientTrust(e, dir, f.CA)
	if err != nil {
		return runner.Config{}, err
	}
	return runner.Config{
		URL: f.URL, TokenFile: f.TokenFile, Provider: f.Provider, ModelURL: f.ModelURL, Model: f.Model,
		ModelKeyFile: f.ModelKeyFile, Script: f.Script, PriceFile: f.PriceFile,
		MaxTurns: f.MaxTurns, MaxTokens: f.MaxTokens, MaxUSD: f.MaxUSD, ContextWindow: f.Window, OutputLimit: f.OutputLimit,
		ConversationMaxTurns: f.ConversationMaxTurns, ConversationMaxTokens: f.ConversationMaxTokens,
		ConversationMaxUSD: f.ConversationMaxUSD, ConversationDir: f.ConversationDir,
		InstructionsFile: f.InstructionsFile, InstructionsDigest: f.InstructionsDigest, Workspace: f.Workspace,
		HookCmd: f.HookCmd, HookTimeout: f.HookTimeout, HoldWait: f.HoldWait, LogLevel: f.LogLevel,
		ModelFirstByte: f.ModelFirstByte, ModelIdle: f.ModelIdle, ModelAttempts: f.ModelAttempts, ModelRetryWait: f.ModelRetryWait, Thinking: f.Thinking,
		Getenv: e.Getenv, Stderr: e.Stderr, Trust: trust,
	}, nil
}

// agentExit maps a runtime's failure to the process's exit: 2 for a configuration that
// cannot work, 3 for a missing or rejected credential, 4 for a replaced connection, 1
// otherwise.
func agentExit(err error) error {
	re, ok := errors.AsType[*runner.Error](err)
	if !ok {
		return err
	}
	switch re.Kind {
	case runner.KindUsage:
		return &usageError{err: re.Err}
	case runner.KindCredential:
		return &exitError{code: exitCredential, err: re.Err}
	case runner.KindReplaced:
		return &exitError{code: exitReplaced, err: re.Err}
	}
	return err
}

// agentRunCmd runs one task to completion.
type agentRunCmd struct {
	runtimeFlags
	Conversation string        `help:"Conversation to start or resume (default: a new one)."`
	Output       string        `short:"o" help:"Output format: text, or json (one event a line: each tool call, then the end)." enum:"text,json" default:"text"`
	Wait         time.Duration `help:"When the task's writes wait for a decision or still run, wait this long for their outcomes and resume the conversation with them (0: exit 6 at once)."`
	CaseType     string        `help:"Pin the run's work to this Case Type (with --key), as docket task post pins: the task is posted to the authority, which refuses the conversation's calls on any other." name:"case-type"`
	Key          string        `help:"The pinned Case's business key: a JSON object, or name=value pairs separated by commas."`
	Case         string        `help:"A Case to bring into the conversation's focus (posts the task to the authority, as --case-type does)."`
	Task         string        `arg:"" optional:"" help:"The task; empty resumes --conversation where it stopped."`
}

func (c *agentRunCmd) Run(ctx context.Context, e *env) error {
	id := c.Conversation
	if id == "" {
		if strings.TrimSpace(c.Task) == "" {
			return &usageError{err: errors.New("give a TASK, or --conversation ID to resume one")}
		}
		id = runner.NewConversationID()
	}
	if err := agent.CheckConversationID(id); err != nil {
		return &usageError{err: err}
	}
	pin, err := c.pin()
	if err != nil {
		return &usageError{err: err}
	}
	cfg, err := c.config(e)
	if err != nil {
		return err
	}
	tp, stopTracing, err := startTracing(ctx, e, slog.New(slog.NewTextHandler(e.Stderr, nil)), "docket-agent")
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg.Tracer = tp
	rt, err := runner.Open(ctx, cfg)
	if err != nil {
		return agentExit(err)
	}
	defer rt.Close()
	fmt.Fprintf(e.Stderr, "docket agent: conversation %s (resume with --conversation %s)\n", id, id)
	progress, events := runner.Progress(e.Stderr), &runner.EventWriter{W: e.Stdout}
	if c.Output == "json" {
		progress = func(call agent.ToolCall, r agent.ToolResult) { events.Emit(runner.ToolEvent(id, call, r)) }
	}
	var end runner.Event
	if pin != (pinFlags{}) {
		end, err = pinnedRun(ctx, rt, id, c.Task, pin, c.Wait, progress)
	} else {
		end, err = plainRun(ctx, rt, id, c.Task, c.Wait, progress, e)
	}
	if c.Output == "json" {
		events.Emit(end)
	} else {
		reportClosed(e, end.ClosedCases)
		if end.Final != "" {
			fmt.Fprintln(e.Stdout, end.Final)
		}
	}
	return errors.Join(agentExit(err), events.Err())
}

// agentChatCmd talks with the model on stdin, one line a message.
type agentChatCmd struct {
	runtimeFlags
	Conversation string `help:"Conversation to start or resume (default: a new one)."`
}

func (c *agentChatCmd) Run(ctx context.Context, e *env) error {
	id := c.Conversation
	if id == "" {
		id = runner.NewConversationID()
	}
	if err := agent.CheckConversationID(id); err != nil {
		return &usageError{err: err}
	}
	cfg, err := c.config(e)
	if err != nil {
		return err
	}
	rt, err := runner.Open(ctx, cfg)
	if err != nil {
		return agentExit(err)
	}
	defer rt.Close()
	fmt.Fprintf(e.Stderr, "docket agent: conversation %s; one line is one message; end with EOF\n", id)
	sc := bufio.NewScanner(e.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for fmt.Fprint(e.Stderr, "> "); sc.Scan(); fmt.Fprint(e.Stderr, "> ") {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		l, err := rt.Loop(runner.Progress(e.Stderr), nil)
		if err != nil {
			return err
		}
		out, err := l.Send(ctx, id, line)
		if out.Final != "" {
			fmt.Fprintln(e.Stdout, out.Final)
		}
		if err != nil {
			return agentExit(rt.Failure(err))
		}
	}
	fmt.Fprintln(e.Stderr)
	return sc.Err()
}

// agentServeCmd takes the Agent's tasks from the authority by long-poll, one at a time,
// and offers POST /task on loopback.
type agentServeCmd struct {
	runtimeFlags
	Listen   string `help:"Loopback address for the task endpoint." default:"127.0.0.1:0"`
	TaskFile string `help:"Write the task endpoint's URL and per-run key to this file (mode 0600); default a fresh file in the temporary directory, removed at exit. The key is never printed." name:"task-file" type:"path"`
}

func (c *agentServeCmd) Run(ctx context.Context, e *env) error {
	if err := runner.CheckTaskListen(c.Listen); err != nil {
		return &usageError{err: err}
	}
	cfg, err := c.config(e)
	if err != nil {
		return err
	}
	cfg.TaskFile = c.TaskFile
	rt, err := runner.Open(ctx, cfg)
	if err != nil {
		return agentExit(err)
	}
	defer rt.Close()
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen for tasks: %w", err)
	}
	return agentExit(rt.ServeTasks(ctx, ln, e.Stdout))
}
