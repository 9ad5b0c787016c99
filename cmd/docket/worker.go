package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/dbquery"
	httpadapter "github.com/docketrun/docket/internal/worker/adapters/http"
	mcpadapter "github.com/docketrun/docket/internal/worker/adapters/mcp"
	runadapter "github.com/docketrun/docket/internal/worker/adapters/run"
	workspaceadapter "github.com/docketrun/docket/internal/worker/adapters/workspace"
)

// workerCmd runs a worker for one Connection (DESIGN.md §1, §8): outbound only, it polls
// the authority's /work and never listens. The Connection key comes from
// DOCKET_CONNECTION_KEY or --key-file, never from a flag's value.
type workerCmd struct {
	URL        string `help:"The authority's URL (default $DOCKET_URL, else the url file docket serve writes)."`
	KeyFile    string `name:"key-file" help:"File holding the Connection key (default: $DOCKET_CONNECTION_KEY)." type:"path"`
	Manifest   string `required:"" help:"Tool manifest (docket-worker-tools/1 JSON)." type:"path"`
	Vault      string `help:"Source vault (JSON, mode 0600): each Source's root, DSN or token. Required unless --print-tools." type:"path"`
	Root       string `help:"Worker root holding run-adapter programs (default: the manifest's directory)." type:"path"`
	Project    string `help:"The Connection's project." default:"default" env:"DOCKET_PROJECT"`
	LogLevel   string `help:"Log level: debug, info, warn or error." enum:"debug,info,warn,error" default:"info"`
	PrintTools bool   `name:"print-tools" help:"Print each Tool this worker can run with the digest to lock it at (docket tool lock --digest), then exit. Needs no key or vault."`
}

func (c *workerCmd) Run(ctx context.Context, e *env) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level})).With("component", "worker")
	root := c.Root
	if root == "" {
		root = filepath.Dir(c.Manifest)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	adapters, closeAdapters := workerAdapters(root)
	// Adapters holding pools, sessions or child servers are closed however Run ends;
	// a close error is logged, not returned, so it never hides why the worker stopped.
	defer func() {
		if err := closeAdapters(); err != nil {
			log.Warn("closing adapters", "err", err)
		}
	}()
	mb, err := os.ReadFile(c.Manifest)
	if err != nil {
		return fmt.Errorf("read the tool manifest: %w", err)
	}
	m, err := worker.ParseManifest(mb, adapters)
	if err != nil {
		return err
	}
	if c.PrintTools {
		return printTools(e.Stdout, m, adapters)
	}
	key, err := c.key(e)
	if err != nil {
		return err
	}
	conn, ok := connectionOf(key)
	if !ok {
		return &exitError{code: exitCredential, err: fmt.Errorf("the Connection key is not dkt_con_<id>.<secret>; copy it as docket connection create printed it")}
	}
	if c.Vault == "" {
		return &usageError{err: errors.New("--vault is required to run a worker; pass the Source vault file")}
	}
	base := c.URL
	if base == "" {
		dir, err := dataDir(e)
		if err != nil {
			return err
		}
		if base, err = serverURL(e, dir); err != nil {
			return err
		}
	}
	v, err := worker.LoadVault(c.Vault)
	if err != nil {
		return err
	}
	ex, err := worker.NewExecutor(worker.Config{Project: contract.ProjectID(c.Project), Connection: conn, Key: []byte(key),
		Manifest: m, Vault: v, Adapters: adapters, Logger: log})
	if err != nil {
		return err
	}
	id, err := newWorkerID()
	if err != nil {
		return err
	}
	r, err := worker.NewRunner(worker.RunConfig{Hop: &worker.Hop{URL: base, Key: key}, Executor: ex, WorkerID: id, Logger: log})
	if err != nil {
		return err
	}
	log.Info("docket worker polling", "url", base, "workerId", id, "tools", len(ex.Descriptors()))
	err = r.Run(ctx)
	if code := contract.CodeOf(err); code == contract.CodeUnauthenticated || code == contract.CodeCredentialRevoked {
		return &exitError{code: exitCredential, err: err}
	}
	return err
}

// workerAdapters returns every adapter a manifest may name (DESIGN.md §8.3), with run
// programs resolved under root, and a function that closes those holding resources:
// database pools and MCP sessions (and their stdio servers).
func workerAdapters(root string) (map[string]worker.Adapter, func() error) {
	db := &dbquery.Adapter{}
	mcp := &mcpadapter.Adapter{}
	adapters := map[string]worker.Adapter{
		worker.AdapterWorkspace:    workspaceadapter.Adapter{},
		worker.AdapterRun:          &runadapter.Adapter{Root: root},
		worker.AdapterHTTP:         &httpadapter.Adapter{},
		worker.AdapterDBQuery:      db,
		worker.AdapterDBExecFenced: db,
		worker.AdapterMCP:          mcp,
	}
	return adapters, func() error { return errors.Join(db.Close(), mcp.Close()) }
}

// printTools writes one line per Tool the worker would advertise: its id, its digest and
// its adapter, the digest being what docket tool lock needs.
func printTools(w io.Writer, m *worker.Manifest, adapters map[string]worker.Adapter) error {
	for _, id := range m.IDs() {
		t, digest, _ := m.Lookup(id)
		if _, ok := adapters[t.Adapter]; !ok {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", id, digest, t.Adapter); err != nil {
			return err
		}
	}
	return nil
}

// key reads the Connection key: DOCKET_CONNECTION_KEY, else --key-file.
func (c *workerCmd) key(e *env) (string, error) {
	if k := strings.TrimSpace(e.Getenv("DOCKET_CONNECTION_KEY")); k != "" {
		return k, nil
	}
	if c.KeyFile == "" {
		return "", &exitError{code: exitCredential, err: fmt.Errorf("no Connection key: set DOCKET_CONNECTION_KEY or pass --key-file")}
	}
	b, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return "", &exitError{code: exitCredential, err: fmt.Errorf("read the Connection key file: %w", err)}
	}
	return strings.TrimSpace(string(b)), nil
}

// connectionOf returns the Connection id a key names: "dkt_con_<id>.<secret>".
func connectionOf(key string) (contract.ConnectionID, bool) {
	rest, ok := strings.CutPrefix(key, contract.PrefixConnection)
	id, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return "", false
	}
	cid, err := contract.ParseConnectionID(id)
	return cid, err == nil
}

// newWorkerID mints the random id of this worker process.
func newWorkerID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "wkr-" + hex.EncodeToString(b), nil
}
