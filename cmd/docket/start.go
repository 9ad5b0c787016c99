package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/supervisor"
)

// startCmd is the local workbench (DESIGN.md §1): it initializes the data dir on first
// use, then runs docket serve and a worker as supervised child processes, restarting
// either with back-off when it exits, until Ctrl-C or docket stop. People reach serve
// through start's own loopback address, where every route needs this run's key
// (DESIGN.md §11); the worker and the admin verbs use serve's internal address, from the
// url file, with their own credentials.
//
// The worker runs for the Connection "local", created on first use, with the manifest
// and vault of the data dir (empty ones are written when missing). Docket has no notion
// yet of agents marked to start, so start runs none: run them with docket agent run.
type startCmd struct {
	Listen         string `help:"Loopback address of the workbench URL, guarded by the per-run key." default:"127.0.0.1:7420"`
	DB             string `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
	Member         string `help:"Name of the first member, on first use." default:"admin"`
	PassphraseFile string `help:"File holding the first member's passphrase, on first use (else DOCKET_PASSPHRASE, else a prompt)." type:"path"`
	Manifest       string `help:"The worker's tool manifest (default: $DOCKET_HOME/tools.json, written empty when missing)." type:"path"`
	Vault          string `help:"The worker's Source vault (default: $DOCKET_HOME/vault.json, written empty when missing)." type:"path"`
}

// Files of the data dir that docket start keeps.
const (
	startPidFile    = "start.pid"      // the pid of the running docket start, for docket stop
	startKeyFile    = "connection-key" // the key of the Connection "local", for its worker
	startConnection = "local"
	logsDir         = "logs" // one log per child: serve.log, worker.log
)

// connectionKeyEnv carries a Connection key to a worker child; keys never travel in flags.
const connectionKeyEnv = "DOCKET_CONNECTION_KEY"

func (c *startCmd) Run(ctx context.Context, e *env) error {
	host, _, err := net.SplitHostPort(c.Listen)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return &usageError{err: fmt.Errorf("--listen %q is not a loopback address; docket start listens on loopback only", c.Listen)}
	}
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := c.initOnce(ctx, e, dir); err != nil {
		return err
	}
	release, err := claimPidFile(filepath.Join(dir, startPidFile))
	if err != nil {
		return err
	}
	defer release()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program to start its children: %w", err)
	}
	sup := supervisor.New(supervisor.Config{LogDir: filepath.Join(dir, logsDir)})
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if cerr := sup.Close(sctx); cerr != nil {
			fmt.Fprintf(e.Stderr, "docket start: %v\n", cerr)
		}
	}()
	base, err := c.startChildren(ctx, e, sup, exe, dir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	serveURL, err := url.Parse(base)
	if err != nil {
		ln.Close()
		return fmt.Errorf("serve's URL %q: %w", base, err)
	}
	runKey := newRunKey()
	_, gatePort, _ := net.SplitHostPort(ln.Addr().String())
	gctx, stopGate := context.WithCancel(ctx)
	defer stopGate()
	gated := make(chan error, 1) // written once, when the gate stops
	go func() { gated <- serveGate(gctx, ln, newRunGate(runKey, gatePort, serveURL)) }()
	fmt.Fprintf(e.Stdout, "docket start: open http://%s/?key=%s\n", ln.Addr(), runKey)
	fmt.Fprintf(e.Stdout, "  data dir %s\n", dir)
	fmt.Fprintf(e.Stdout, "  serve   pid %d at %s (for workers and admin verbs), log %s\n", sup.Pid("serve"), base, sup.LogPath("serve"))
	fmt.Fprintf(e.Stdout, "  worker  pid %d, connection %s, log %s\n", sup.Pid("worker"), startConnection, sup.LogPath("worker"))
	fmt.Fprintf(e.Stdout, "  no agents are started: run one with docket agent run\n")
	fmt.Fprintf(e.Stdout, "stop with Ctrl-C or docket stop\n")
	select {
	case <-ctx.Done():
		fmt.Fprintf(e.Stdout, "docket start: stopping\n")
		return <-gated
	case err := <-gated:
		return err
	}
}

// initOnce initializes the data dir with docket init unless it already holds a key.
func (c *startCmd) initOnce(ctx context.Context, e *env, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, keyFile)); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	args := []string{"init", "--member", c.Member}
	if c.DB != "" {
		args = append(args, "--db", c.DB)
	}
	if c.PassphraseFile != "" {
		args = append(args, "--passphrase-file", c.PassphraseFile)
	}
	return run(ctx, args, e)
}

// startChildren starts serve, waits until it answers, and starts the worker of the
// Connection "local"; it returns serve's internal URL.
func (c *startCmd) startChildren(ctx context.Context, e *env, sup *supervisor.Supervisor, exe, dir string) (string, error) {
	// serve keeps one internal port across restarts, so the gate and the worker keep
	// finding it.
	port, err := freeLoopbackPort()
	if err != nil {
		return "", err
	}
	sc := serveChild(exe, childEnviron([]string{"DOCKET_HOME=" + dir}), true, "127.0.0.1:"+port)
	if c.DB != "" {
		sc.Args = append(sc.Args, "--db", c.DB)
	}
	if err := sup.Start(sc); err != nil {
		return "", err
	}
	// The admin verbs start runs itself go to this run's serve, by its address: a url
	// file left by an older serve must not lead them elsewhere. They use the data dir's
	// token, whatever DOCKET_TOKEN says.
	internal := "http://127.0.0.1:" + port
	local := &env{Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Getenv: func(k string) string {
		switch k {
		case "DOCKET_HOME":
			return dir
		case "DOCKET_URL":
			return internal
		case "DOCKET_TOKEN":
			return ""
		}
		return e.Getenv(k)
	}}
	_, base, err := waitHealthy(ctx, local, dir, 30*time.Second)
	if err != nil {
		return "", fmt.Errorf("%w (see %s)", err, sup.LogPath("serve"))
	}
	key, err := localConnectionKey(ctx, local, dir)
	if err != nil {
		return "", err
	}
	manifest, vault, err := c.workerFiles(dir)
	if err != nil {
		return "", err
	}
	wenv := append(childEnviron([]string{"DOCKET_HOME=" + dir, "DOCKET_URL=" + base}), connectionKeyEnv+"="+key)
	if err := sup.Start(workerChild(exe, wenv, true, manifest, vault)); err != nil {
		return "", err
	}
	return base, nil
}

// workerFiles returns the worker's manifest and vault, writing empty ones into the data
// dir when the defaults are missing.
func (c *startCmd) workerFiles(dir string) (manifest, vault string, err error) {
	manifest, vault = c.Manifest, c.Vault
	for _, f := range []struct {
		path *string
		name string
		body string
	}{
		{&manifest, "tools.json", "{\n  \"format\": \"docket-worker-tools/1\",\n  \"tools\": {}\n}\n"},
		{&vault, "vault.json", "{\n  \"sources\": {}\n}\n"},
	} {
		if *f.path != "" {
			continue
		}
		*f.path = filepath.Join(dir, f.name)
		if _, err := os.Stat(*f.path); errors.Is(err, os.ErrNotExist) {
			if err := writePrivate(*f.path, []byte(f.body)); err != nil {
				return "", "", err
			}
		}
	}
	return manifest, vault, nil
}

// localConnectionKey returns the key of the Connection "local", creating the Connection
// and saving its key (mode 0600) on first use.
func localConnectionKey(ctx context.Context, e *env, dir string) (string, error) {
	path := filepath.Join(dir, startKeyFile)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the local Connection key: %w", err)
	}
	var out strings.Builder
	sub := &env{Stdin: e.Stdin, Stdout: &out, Stderr: e.Stderr, Getenv: e.Getenv}
	if err := run(ctx, []string{"connection", "create", startConnection, "-o", "json"}, sub); err != nil {
		return "", fmt.Errorf("create the Connection %s: %w", startConnection, err)
	}
	var ck contract.ConnectionKey
	if err := json.Unmarshal([]byte(out.String()), &ck); err != nil {
		return "", fmt.Errorf("create the Connection %s: decode: %w", startConnection, err)
	}
	if err := writePrivate(path, []byte(ck.Key+"\n")); err != nil {
		return "", err
	}
	return ck.Key, nil
}

// serveChild is docket serve as a supervised child.
func serveChild(exe string, env []string, restart bool, listen string) supervisor.Child {
	return supervisor.Child{Name: "serve", Path: exe, Env: env, Restart: restart,
		Args: []string{"docket", "serve", "--listen", listen}}
}

// workerChild is docket worker as a supervised child; its key is in env.
func workerChild(exe string, env []string, restart bool, manifest, vault string) supervisor.Child {
	return supervisor.Child{Name: "worker", Path: exe, Env: env, Restart: restart,
		Args: []string{"docket", "worker", "--manifest", manifest, "--vault", vault}}
}

// childEnviron is this process's environment without any DOCKET_ variable, plus extra:
// a child learns its data dir, URL and key from its parent alone.
func childEnviron(extra []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "DOCKET_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// claimPidFile writes this process's pid to path, refusing when a live docket start
// already holds it, and returns the function that removes it.
func claimPidFile(path string) (func(), error) {
	if pid, err := readPidFile(path); err == nil && supervisor.Alive(pid) {
		return nil, fmt.Errorf("docket start is already running here (pid %d); stop it with docket stop", pid)
	}
	if err := writePrivate(path, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

func readPidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds no pid", path)
	}
	return pid, nil
}
