package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
)

// startCmd is the local workbench: it initializes the data dir on first use, then runs
// docket serve, a worker and one runtime per enabled Agent profile as supervised child
// processes until Ctrl-C or docket stop.
// People reach serve through start's own loopback address, where every route needs this
// run's key. The work is [workbench.Run]'s; this maps the flags and lends it the verbs
// it runs as a person would (docket init, docket connection create).
type startCmd struct {
	Listen         string   `help:"Loopback address of the workbench URL, guarded by the run key (default: the last run's, else 127.0.0.1:7420; port 0 keeps the last run's port too)."`
	RotateKey      bool     `help:"Make a new run key: the URL printed before, and every browser that opened it, stop working." name:"rotate-key"`
	DB             string   `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
	Member         string   `help:"Name of the first member, on first use." default:"admin"`
	PassphraseFile string   `help:"File holding the first member's passphrase, on first use (else DOCKET_PASSPHRASE, else a prompt)." type:"path"`
	Manifest       string   `help:"The worker's tool manifest (default: $DOCKET_HOME/tools.json, written empty when missing)." type:"path"`
	Vault          string   `help:"The worker's Source vault (default: $DOCKET_HOME/vault.json, written empty when missing)." type:"path"`
	PassEnv        []string `name:"pass-env" sep:"none" help:"A variable of this shell that serve, the worker and the runtimes keep besides the basics (PATH, HOME, LANG, …); repeat for more. Nothing else of the environment reaches them."`
}

func (c *startCmd) Run(ctx context.Context, e *env) error {
	if c.Listen != "" {
		if err := workbench.CheckListen(c.Listen); err != nil {
			return &usageError{err: err}
		}
	}
	if err := workbench.CheckPassEnv(c.PassEnv); err != nil {
		return &usageError{err: err}
	}
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program to start its children: %w", err)
	}
	return workbench.Run(ctx, workbench.Config{
		Dir: dir, Listen: c.Listen, RotateKey: c.RotateKey, DB: c.DB, Manifest: c.Manifest, Vault: c.Vault, Exe: exe, PassEnv: c.PassEnv,
		Stdout: e.Stdout, Stderr: e.Stderr,
		Init: func(ctx context.Context) error { return c.init(ctx, e) },
		CreateConnection: func(ctx context.Context, url, name string) (string, error) {
			return createConnection(ctx, e, dir, url, name)
		},
		CheckModel: func(ctx context.Context, spec contract.ProfileSpec, key string) error {
			return runner.Probe(ctx, runner.ProbeConfig{Provider: spec.Provider, URL: spec.ModelURL, Model: spec.Model, Key: agent.NewKey(key)})
		},
		InstallExample: func(ctx context.Context, url string, spec workbench.ExampleSpec) error {
			return installExample(ctx, e, dir, url, spec)
		},
	})
}

// init initializes the data dir with docket init.
func (c *startCmd) init(ctx context.Context, e *env) error {
	args := []string{"init", "--member", c.Member}
	if c.DB != "" {
		args = append(args, "--db", c.DB)
	}
	if c.PassphraseFile != "" {
		args = append(args, "--passphrase-file", c.PassphraseFile)
	}
	return run(ctx, args, e)
}

// createConnection runs docket connection create against the serve at url, with the
// data dir's token whatever DOCKET_TOKEN says, and returns the new Connection's key.
func createConnection(ctx context.Context, e *env, dir, url, name string) (string, error) {
	var out strings.Builder
	sub := &env{Stdin: e.Stdin, Stdout: &out, Stderr: e.Stderr, Getenv: func(k string) string {
		switch k {
		case "DOCKET_HOME":
			return dir
		case "DOCKET_URL":
			return url
		case "DOCKET_TOKEN":
			return ""
		}
		return e.Getenv(k)
	}}
	if err := run(ctx, []string{"connection", "create", name, "-o", "json"}, sub); err != nil {
		return "", err
	}
	var ck contract.ConnectionKey
	if err := json.Unmarshal([]byte(out.String()), &ck); err != nil {
		return "", fmt.Errorf("decode: %w", err)
	}
	return ck.Key, nil
}
