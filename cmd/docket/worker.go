package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/dbquery"
	httpadapter "github.com/docketrun/docket/internal/worker/adapters/http"
	materialadapter "github.com/docketrun/docket/internal/worker/adapters/material"
	mcpadapter "github.com/docketrun/docket/internal/worker/adapters/mcp"
	runadapter "github.com/docketrun/docket/internal/worker/adapters/run"
	workspaceadapter "github.com/docketrun/docket/internal/worker/adapters/workspace"
	"github.com/docketrun/docket/internal/worker/hardening"
)

// workerCmd groups the worker's verbs: run (the default, docket worker --manifest …), and
// on the worker's own machine mcp add and tools discover, which edit its manifest and
// vault (docs/workers.md, "Bringing your own tools").
type workerCmd struct {
	Run   workerRunCmd   `cmd:"" default:"withargs" help:"Run a worker for one Connection (the default: docket worker --manifest … is docket worker run --manifest …)."`
	MCP   workerMCPCmd   `cmd:"" name:"mcp" help:"Add an MCP server to this worker's vault as a Source."`
	Tools workerToolsCmd `cmd:"" help:"Discover an MCP Source's tools and add them to this worker's manifest."`
}

// workerRunCmd runs a worker for one Connection: outbound only, it polls
// the authority's /work and never listens. The Connection key comes from --key-file or
// DOCKET_CONNECTION_KEY, never from a flag's value; once read, the variable is removed
// from the worker's environment, and the worker makes itself non-dumpable so the
// programs it starts cannot read the key from /proc.
type workerRunCmd struct {
	URL        string `help:"The authority's URL, https:// for a serve on another machine (default $DOCKET_URL, else the url file docket serve writes). Several serves over one PostgreSQL are given comma separated (--url https://a:7420,https://b:7420): the worker uses the first and moves to the next when it stops answering."`
	CA         string `name:"ca" help:"The CA file that signed serve's certificate (docket cert's ca.pem); default $DOCKET_CA, else the data dir's tls/ca.pem, else the system's roots." type:"existingfile"`
	KeyFile    string `name:"key-file" help:"File holding the Connection key, preferred over $DOCKET_CONNECTION_KEY." type:"path"`
	Manifest   string `required:"" help:"Tool manifest (docket-worker-tools/1 JSON)." type:"path"`
	Vault      string `help:"Source vault (JSON, mode 0600): each Source's root, DSN or token. Required unless --print-tools." type:"path"`
	Root       string `help:"Worker root holding run-adapter programs (default: the manifest's directory)." type:"path"`
	Project    string `help:"The Connection's project." default:"default" env:"DOCKET_PROJECT"`
	LogLevel   string `help:"Log level: debug, info, warn or error." enum:"debug,info,warn,error" default:"info"`
	PrintTools bool   `name:"print-tools" help:"Print every Tool the manifest holds with the digest to lock it at (docket tool lock --digest) and whether --workspace-tools lets this worker offer it, then exit. Needs no key or vault."`
	// WorkspaceTools is the local ceiling on the built-in workspace Tools:
	// a worker started by hand offers no write Tool unless told to. docket start and docket
	// demo pass read-write to the worker they start.
	WorkspaceTools string `name:"workspace-tools" help:"Which built-in workspace Tools this worker offers, whatever is locked: off, read or read-write." enum:"off,read,read-write" default:"read"`
	Parallel       int    `help:"How many served calls this worker runs at once (1 runs them one after another); each is claimed before it runs and reported after, once." default:"8"`
}

// workerKeyEnv is the variable a worker reads its Connection key from when it has no
// --key-file.
const workerKeyEnv = "DOCKET_CONNECTION_KEY"

func (c *workerRunCmd) Run(ctx context.Context, e *env) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return err
	}
	if c.Parallel < 1 {
		return &usageError{err: fmt.Errorf("--parallel %d: a worker runs at least one call at a time; pass 1 or more", c.Parallel)}
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level})).With(logComponent, "worker")
	root := c.Root
	if root == "" {
		root = filepath.Dir(c.Manifest)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	ceiling, err := worker.ParseWorkspaceAccess(c.WorkspaceTools)
	if err != nil {
		return &usageError{err: err}
	}
	adapters, closeAdapters := workerAdapters(root, c.protected(e))
	// Adapters holding pools, sessions or child servers are closed however Run ends;
	// a close error is logged, not returned, so it never hides why the worker stopped.
	defer func() {
		if err := closeAdapters(); err != nil {
			log.Warn("closing adapters", logErr, err)
		}
	}()
	// A refusal names the file with the fix, so that the line docket start quotes from
	// the worker's log says what to edit (docs/workbench.md).
	m, err := worker.LoadManifest(c.Manifest, adapters)
	if err != nil {
		return err
	}
	if c.PrintTools {
		return printTools(e.Stdout, m, adapters, ceiling)
	}
	if err := hardening.Process(); err != nil {
		return err
	}
	key, err := c.key(e)
	if err != nil {
		return err
	}
	conn, ok := identity.ParseConnectionKey(identity.Token(key))
	if !ok {
		return &exitError{code: exitCredential, err: fmt.Errorf("the Connection key is not dkt_con_<id>.<secret>; copy it as docket connection create printed it")}
	}
	if c.Vault == "" {
		return &usageError{err: errors.New("--vault is required to run a worker; pass the Source vault file")}
	}
	base, trust, err := serveTarget(e, c.URL, c.CA)
	if err != nil {
		return err
	}
	serves, err := parseServes(base, log)
	if err != nil {
		return err
	}
	v, err := worker.LoadVault(c.Vault)
	if err != nil {
		return err
	}
	ex, err := worker.NewExecutor(worker.Config{Project: contract.ProjectID(c.Project), Connection: conn, Key: []byte(key),
		Manifest: m, Vault: v, Adapters: adapters, Workspace: ceiling, Logger: log})
	if err != nil {
		return err
	}
	id, err := newWorkerID()
	if err != nil {
		return err
	}
	tp, stopTracing, err := startTracing(ctx, e, log, "docket-worker")
	if err != nil {
		return err
	}
	defer stopTracing()
	r, err := worker.NewRunner(worker.RunConfig{Hop: &worker.Hop{URL: serves.First(), Key: key, Client: serves.Client(worker.HopClient(c.Parallel+2, trust))}, Executor: ex, WorkerID: id, Logger: log, Tracer: tp, Parallel: c.Parallel})
	if err != nil {
		return err
	}
	// The vault and the manifest reload on SIGHUP and when their file changes; a
	// manifest reloaded is advertised on the next poll.
	hup, mhup := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	signal.Notify(mhup, syscall.SIGHUP)
	defer signal.Stop(hup)
	defer signal.Stop(mhup)
	wctx, stopWatch := context.WithCancel(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { ex.WatchVault(wctx, c.Vault, hup, worker.DefaultVaultPoll) })
	watching.Go(func() { ex.WatchManifest(wctx, c.Manifest, adapters, mhup, worker.DefaultVaultPoll) })
	defer func() { stopWatch(); watching.Wait() }()
	log.Info("docket worker polling", logURL, apiclient.Origin(serves.First()), logWorker, id, logTools, len(ex.Descriptors()), logWorkspaceTools, ceiling)
	err = r.Run(ctx)
	if code := contract.CodeOf(err); code == contract.CodeUnauthenticated || code == contract.CodeCredentialRevoked {
		return &exitError{code: exitCredential, err: err}
	}
	return err
}

// workerAdapters returns every adapter a manifest may name, with run
// programs resolved under root and the workspace kept from the worker's own files in
// protected, and a function that closes those holding resources: database pools and MCP
// sessions (and their stdio servers).
func workerAdapters(root string, protected []string) (map[string]worker.Adapter, func() error) {
	db := &dbquery.Adapter{}
	mcp := &mcpadapter.Adapter{}
	adapters := map[string]worker.Adapter{
		worker.AdapterWorkspace:    workspaceadapter.Adapter{Protected: protected},
		worker.AdapterRun:          &runadapter.Adapter{Root: root},
		worker.AdapterHTTP:         &httpadapter.Adapter{},
		worker.AdapterDBQuery:      db,
		worker.AdapterDBExecFenced: db,
		worker.AdapterMCP:          mcp,
		worker.AdapterMaterial:     materialadapter.Adapter{},
	}
	return adapters, func() error { return errors.Join(db.Close(), mcp.Close()) }
}

// key reads the Connection key: --key-file, else DOCKET_CONNECTION_KEY. Either way the
// variable is then removed from this process's environment, so nothing the worker starts
// later inherits it. That does not clear the copy the kernel keeps of the environment
// the process started with (/proc/self/environ): the worker being non-dumpable keeps
// that from other processes of its user, and a key file keeps it out entirely.
func (c *workerRunCmd) key(e *env) (string, error) {
	fromEnv := strings.TrimSpace(e.Getenv(workerKeyEnv))
	if err := os.Unsetenv(workerKeyEnv); err != nil {
		return "", fmt.Errorf("clear %s: %w", workerKeyEnv, err)
	}
	if c.KeyFile == "" {
		if fromEnv == "" {
			return "", &exitError{code: exitCredential, err: fmt.Errorf("no Connection key: pass --key-file or set %s", workerKeyEnv)}
		}
		return fromEnv, nil
	}
	b, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return "", &exitError{code: exitCredential, err: fmt.Errorf("read the Connection key file: %w", err)}
	}
	return strings.TrimSpace(string(b)), nil
}

// protected returns the worker's own files the workspace must never read or replace:
// its vault, its manifest and its data dir. A data dir that cannot be found is left out;
// the vault and manifest are always there.
func (c *workerRunCmd) protected(e *env) []string {
	out := []string{c.Manifest}
	if c.Vault != "" {
		out = append(out, c.Vault)
	}
	if c.KeyFile != "" {
		out = append(out, c.KeyFile)
	}
	if dir, err := dataDir(e); err == nil {
		out = append(out, dir)
	}
	// The workspace compares real paths: a relative DOCKET_HOME must not slip by.
	for i, p := range out {
		if abs, err := filepath.Abs(p); err == nil {
			out[i] = abs
		}
	}
	return out
}

// newWorkerID mints the random id of this worker process.
func newWorkerID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "wkr-" + hex.EncodeToString(b), nil
}
