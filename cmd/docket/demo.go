package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/demo"
)

// demoCmd runs the verified calculation as the real governed loop: serve and worker as
// child processes of this binary, the admin verbs run in this process as a person would,
// and an agent (scripted unless a model is named) driving the flow through the MCP
// gateway. The steps are [demo.Run]'s; this maps the flags and lends it the verbs.
type demoCmd struct {
	Keep         string        `name:"keep" help:"Keep the data dir in DIR (new or empty; created if missing) instead of a temporary one." placeholder:"DIR"`
	Approve      bool          `help:"Make the write Action need a person: show the request, its digest and the decision."`
	ModelURL     string        `name:"model-url" help:"Drive the demo with a real model at this endpoint (default: $DOCKET_MODEL_URL; without it or --provider: the scripted model)."`
	Model        string        `help:"The model name the endpoint knows (default: $DOCKET_MODEL)."`
	Provider     string        `help:"Model provider: anthropic, openai or emulated (default: picked from --model-url)." enum:",anthropic,openai,emulated" default:""`
	ModelKeyFile string        `name:"model-key-file" help:"File holding the model key (default: $DOCKET_MODEL_KEY)."`
	MaxTurns     int           `name:"max-turns" help:"Stop a real model after this many turns." default:"20"`
	Timeout      time.Duration `help:"Give up after this long." default:"3m"`
}

func (c *demoCmd) Run(ctx context.Context, e *env) error {
	cfg := demo.Config{
		Keep: c.Keep, Approve: c.Approve, ModelURL: c.ModelURL, Model: c.Model, Provider: c.Provider,
		ModelKeyFile: c.ModelKeyFile, MaxTurns: c.MaxTurns, Timeout: c.Timeout,
		Stdout: e.Stdout, Stderr: e.Stderr, Getenv: e.Getenv, Docket: inProcess(e),
	}
	if cfg.ModelURL == "" {
		cfg.ModelURL = e.Getenv("DOCKET_MODEL_URL")
	}
	if cfg.Model == "" {
		cfg.Model = e.Getenv("DOCKET_MODEL")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: find this program to start its children: %w", err)
	}
	cfg.Exe = exe
	err = demo.Run(ctx, cfg)
	if ue, ok := errors.AsType[*demo.UsageError](err); ok {
		return &usageError{err: ue.Err}
	}
	return agentExit(err)
}

// inProcess runs docket commands in this process, with the caller's environment except
// that vars are their only DOCKET_ variables.
func inProcess(e *env) func(ctx context.Context, args []string, vars map[string]string, stdout, stderr io.Writer) error {
	return func(ctx context.Context, args []string, vars map[string]string, stdout, stderr io.Writer) error {
		getenv := func(k string) string {
			if strings.HasPrefix(k, "DOCKET_") {
				return vars[k]
			}
			return e.Getenv(k)
		}
		return run(ctx, args, &env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: getenv})
	}
}
