// Package workbench provides docket start: the local workbench that initializes a data
// dir on first use, runs docket serve, a worker and one runtime per enabled Agent profile
// as supervised children, and puts a run-key gate in front of serve.
package workbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/environ"
	"github.com/docketrun/docket/internal/material"
	"github.com/docketrun/docket/internal/supervisor"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// Files of the data dir that docket start keeps, and the Connection its worker runs for.
const (
	PidFile    = "start.pid"      // the pid of the running docket start, for docket stop
	KeyFile    = "connection-key" // the key of the Connection "local", for its worker
	Connection = "local"
)

// pathKeyPrefix begins the path of every request to docket start's serve, before the
// serve key (console.PathKeyPrefix).
const pathKeyPrefix = "/k/"

// ConnectionKeyEnv carries a Connection key to a worker child; keys never travel in
// flags, which any process on the machine can read.
const ConnectionKeyEnv = "DOCKET_CONNECTION_KEY"

// Bounds of one run.
const (
	serveReady = 30 * time.Second // how long serve may take to answer its first health call
	closeGrace = 30 * time.Second // how long the children may take to stop
)

// Config is one docket start. Dir, Exe, Init and CreateConnection are required.
type Config struct {
	Dir string // the data dir, absolute
	// Listen is the loopback address of the workbench URL, e.g. 127.0.0.1:7420. Empty, or
	// with port 0, keeps the address of the last run (StateFile), else DefaultListen or
	// a port the system picks.
	Listen string
	// RotateKey makes a new run key instead of keeping the last run's: the old URL, and
	// every browser that opened it, stop working.
	RotateKey bool
	Project   string // the project whose Agents' profiles are run; "": default
	DB        string // serve's store: a SQLite path or postgres://…; "": the data dir's
	Manifest  string // the worker's tool manifest; "": Dir/tools.json, written empty when missing
	Vault     string // the worker's Source vault; "": Dir/vault.json, written empty when missing
	Exe       string // the program whose serve and worker subcommands run as the children
	// PassEnv names the variables of this process's environment its children keep besides
	// the basics (see [ChildEnviron]): a proxy the runtimes need, or what a run Tool's
	// env.pass names, which the worker can hand on only if it has it. Checked by
	// [CheckPassEnv].
	PassEnv []string

	Stdout io.Writer // where the workbench URL and the children are printed
	Stderr io.Writer // where a failure to stop the children is printed

	// Init initializes Dir (docket init). Run calls it only when Dir holds no key yet.
	Init func(ctx context.Context) error
	// CreateConnection creates the Connection named name through the serve at url, as the
	// data dir's member, and returns its key. Run calls it once per data dir and keeps
	// the key in KeyFile.
	CreateConnection func(ctx context.Context, url, name string) (key string, err error)
	// InstallExample lays out and sets up the verified-calculation example through the
	// serve at url, as the data dir's member: its capability, the workspace Source in the
	// vault and in the authority, and the Tools its Actions run, locked. nil: the Get
	// started page's install is refused.
	InstallExample func(ctx context.Context, url string, spec ExampleSpec) error
	// CheckModel sends the model a profile names one small request, with key (empty:
	// none), and returns the endpoint's error: the first-use form refuses to save a model
	// that does not answer unless the person ticks "save without checking"
	// (docs/workbench.md). Nil checks nothing.
	CheckModel func(ctx context.Context, spec contract.ProfileSpec, key string) error
	// Discover runs the discovery of an mcp Source of the Connection local for the tools
	// page (ToolsPath). Nil: the governed read docket.mcp.discover@1 through the worker,
	// as the Agent ToolsAgent.
	Discover Discoverer
}

// CheckListen refuses an address that is not loopback: the workbench is for the person
// at this machine.
func CheckListen(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return fmt.Errorf("--listen %q is not a loopback address; docket start listens on loopback only", listen)
	}
	return nil
}

// CheckPassEnv refuses a name in pass that cannot be passed to a child: not a plain
// variable name, or a DOCKET_ variable, which docket start sets for each child itself.
func CheckPassEnv(pass []string) error {
	for _, name := range pass {
		if err := environ.CheckName(name); err != nil {
			return fmt.Errorf("--pass-env: %w", err)
		}
	}
	return nil
}

// Run initializes the data dir on first use, then runs docket serve, a worker and the
// Agents' runtimes as supervised child processes, restarting each with back-off when it exits, until ctx
// ends or the gate fails. People reach serve through the gate at cfg.Listen, where every
// route needs this run's key; the worker and the admin verbs use serve's internal
// address, from the url file, with their own credentials.
//
// The worker runs for the Connection "local", created on first use, with the manifest
// and vault of the data dir. Each enabled Agent profile of the project gets a supervised
// runtime (docket agent serve), started, restarted and stopped as the profiles say, its
// state reported to the authority. The gate's address and run key are kept in the data
// dir across runs, so the printed URL stays the same until --rotate-key.
func Run(ctx context.Context, cfg Config) error {
	if err := CheckPassEnv(cfg.PassEnv); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, datadir.KeyFile)); errors.Is(err, os.ErrNotExist) {
		if err := cfg.Init(ctx); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	release, err := claimPidFile(filepath.Join(cfg.Dir, PidFile))
	if err != nil {
		return err
	}
	defer release()
	rts := newRuntimes(cfg)
	sup := supervisor.New(supervisor.Config{LogDir: filepath.Join(cfg.Dir, datadir.LogsDir), OnChange: rts.onChange})
	rts.sup = sup
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeGrace)
		defer cancel()
		if cerr := sup.Close(sctx); cerr != nil {
			fmt.Fprintf(cfg.Stderr, "docket start: %v\n", cerr)
		}
	}()
	kids, err := startChildren(ctx, cfg, sup)
	if err != nil {
		return err
	}
	base := kids.base
	rts.base = base
	saved, err := loadState(cfg.Dir)
	if err != nil {
		return err
	}
	addr := saved.address(cfg.Listen)
	if err := CheckListen(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s (the workbench keeps its last address; pass --listen to choose another): %w", addr, err)
	}
	serveURL, err := url.Parse(base)
	if err != nil {
		ln.Close()
		return fmt.Errorf("serve's URL %q: %w", base, err)
	}
	runKey := saved.RunKey
	if runKey == "" || cfg.RotateKey {
		runKey = newRunKey()
	}
	_, gatePort, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		ln.Close()
		return fmt.Errorf("the gate's address: %w", err)
	}
	if err := saveState(cfg.Dir, state{Listen: ln.Addr().String(), RunKey: runKey}); err != nil {
		ln.Close()
		return err
	}
	gate := newRunGate(runKey, gatePort, serveURL)
	fu := &firstUse{rts: rts, runKey: runKey, xorigin: http.NewCrossOriginProtection()}
	local := http.NewServeMux()
	local.Handle(ModelPath, fu)
	local.Handle(ExamplePath, &exampleInstaller{rts: rts, token: ExampleToken(kids.serveKey), worker: kids.worker,
		spec:    ExampleSpec{Dir: filepath.Join(cfg.Dir, ExampleDir), Manifest: kids.manifest, Vault: kids.vault},
		xorigin: http.NewCrossOriginProtection()})
	tp := &toolsPage{rts: rts, runKey: runKey, files: toolset.Files{Manifest: kids.manifest, Vault: kids.vault}, discover: cfg.Discover,
		xorigin: http.NewCrossOriginProtection()}
	if tp.discover == nil {
		tp.discover = tp.governedDiscover
	}
	local.Handle(ToolsPath, tp)
	local.Handle(ToolsPath+"/", tp)
	area := filepath.Join(cfg.Dir, MaterialsDir)
	local.Handle(MaterialsPath, &materialAdder{rts: rts, token: MaterialsToken(kids.serveKey), area: material.Area{Dir: area},
		read:    &materialReader{rts: rts, files: toolset.Files{Manifest: kids.manifest, Vault: kids.vault}, root: area},
		xorigin: http.NewCrossOriginProtection()})
	local.Handle("/", fu) // fu refuses every other path with where the console is
	gate.local = local
	gate.firstVisit = func(r *http.Request) bool { return r.URL.Path == "/" && fu.needsModel(r.Context()) }
	gctx, stopGate := context.WithCancel(ctx)
	defer stopGate()
	gated := make(chan error, 1) // written once, when the gate stops
	go func() { gated <- serveGate(gctx, ln, gate) }()
	w := cfg.Stdout
	fmt.Fprintf(w, "docket start: open http://%s/?key=%s\n", ln.Addr(), runKey)
	fmt.Fprintf(w, "  data dir %s\n", cfg.Dir)
	fmt.Fprintf(w, "  serve   pid %d at %s (for workers and admin verbs, with the key in the data dir's url file), log %s\n", sup.Pid("serve"), serveURL.Host, sup.LogPath("serve"))
	fmt.Fprintf(w, "  worker  pid %d, connection %s, log %s\n", sup.Pid("worker"), Connection, sup.LogPath("worker"))
	fmt.Fprintf(w, "  agents: one runtime per enabled profile (docket agent profile list); the first visit asks for the default model when there is none\n")
	fmt.Fprintf(w, "stop with Ctrl-C or docket stop\n")
	rctx, stopRuntimes := context.WithCancel(ctx)
	synced := make(chan struct{})
	go func() { defer close(synced); rts.run(rctx) }()
	// The runtimes stop, and are reported stopped, before serve does.
	defer func() { stopRuntimes(); <-synced }()
	select {
	case <-ctx.Done():
		fmt.Fprintf(w, "docket start: stopping\n")
		return <-gated
	case err := <-gated:
		return err
	}
}

// children is what startChildren started: serve's internal URL and path key, and the
// worker with its manifest and vault.
type children struct {
	base, serveKey  string
	worker          supervisor.Child
	manifest, vault string
}

// startChildren starts serve, waits until it answers, and starts the worker of the
// Connection "local".
func startChildren(ctx context.Context, cfg Config, sup *supervisor.Supervisor) (children, error) {
	// serve keeps one internal port across restarts, so the gate and the worker keep
	// finding it.
	port, err := freeLoopbackPort()
	if err != nil {
		return children{}, err
	}
	// serve answers only under /k/<a key of this run>, which the gate and the worker
	// get from here and the admin verbs from the url file serve writes (mode 0600).
	serveKey := newRunKey()
	sc := ServeChild(cfg.Exe, ChildEnviron(cfg.PassEnv, datadir.HomeEnv+"="+cfg.Dir, datadir.ServeKeyEnv+"="+serveKey), true, "127.0.0.1:"+port)
	if cfg.DB != "" {
		sc.Args = append(sc.Args, "--db", cfg.DB)
	}
	if err := sup.Start(sc); err != nil {
		return children{}, err
	}
	// What start asks of serve goes to this run's serve, by its address: a url file left
	// by an older serve must not lead it elsewhere.
	internal := "http://127.0.0.1:" + port + pathKeyPrefix + serveKey
	_, base, err := apiclient.WaitHealthy(ctx, serveReady, nil, func() (string, error) { return internal, nil })
	if err != nil {
		return children{}, fmt.Errorf("%w (see %s)", err, sup.LogPath("serve"))
	}
	key, err := localConnectionKey(ctx, cfg, base)
	if err != nil {
		return children{}, err
	}
	manifest, vault, err := workerFiles(cfg)
	if err != nil {
		return children{}, err
	}
	wenv := ChildEnviron(cfg.PassEnv, datadir.HomeEnv+"="+cfg.Dir, "DOCKET_URL="+base, ConnectionKeyEnv+"="+key)
	wc := WorkerChild(cfg.Exe, wenv, true, manifest, vault)
	if err := sup.Start(wc); err != nil {
		return children{}, err
	}
	return children{base: base, serveKey: serveKey, worker: wc, manifest: manifest, vault: vault}, nil
}

// workerFiles returns the worker's manifest and vault, writing empty ones into the data
// dir when the defaults are missing.
func workerFiles(cfg Config) (manifest, vault string, err error) {
	manifest, vault = cfg.Manifest, cfg.Vault
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
		*f.path = filepath.Join(cfg.Dir, f.name)
		if _, err := os.Stat(*f.path); errors.Is(err, os.ErrNotExist) {
			if err := datadir.WritePrivate(*f.path, []byte(f.body)); err != nil {
				return "", "", err
			}
		}
	}
	return manifest, vault, nil
}

// localConnectionKey returns the key of the Connection "local", creating the Connection
// and saving its key (mode 0600) on first use.
func localConnectionKey(ctx context.Context, cfg Config, base string) (string, error) {
	path := filepath.Join(cfg.Dir, KeyFile)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the local Connection key: %w", err)
	}
	key, err := cfg.CreateConnection(ctx, base, Connection)
	if err != nil {
		return "", fmt.Errorf("create the Connection %s: %w", Connection, err)
	}
	if err := datadir.WritePrivate(path, []byte(key+"\n")); err != nil {
		return "", err
	}
	return key, nil
}
