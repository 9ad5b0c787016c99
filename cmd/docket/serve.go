package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/gateway"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/telemetry"
	"github.com/docketrun/docket/internal/workbench"
	"github.com/docketrun/docket/internal/workhop"
)

// serveCmd runs the authority: the store, the Boards and the console API on a loopback
// listener, or beyond loopback over TLS or behind named proxies.
type serveCmd struct {
	Listen    string        `help:"Address to listen on; beyond loopback it needs --tls-cert/--tls-key or --behind-proxy." default:"127.0.0.1:7420"`
	DB        string        `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
	Host      []string      `help:"Names people and workers reach serve by, besides the loopback names: NAME (answered with no port and at the listener's port) or NAME:PORT."`
	LogLevel  string        `help:"Log level: debug, info, warn or error." enum:"debug,info,warn,error" default:"info"`
	Hold      time.Duration `help:"How long a held MCP call waits for its outcome before it answers running." default:"50s"`
	TaskLease time.Duration `help:"How long an agent runtime's claim holds a task before another runtime may take it; the runtime renews it while it works." default:"2m" name:"task-lease"`
	// Checkpoint is how often each project's moved log head is signed (docs/provability.md).
	Checkpoint time.Duration `help:"How often to sign a checkpoint of each project's log head that moved." default:"1m"`
	LeaseTTL   time.Duration `name:"lease-ttl" help:"How long a worker's lease lasts without renewal." default:"30s"`
	MaxConns   int           `name:"max-connections" help:"Most open connections, not requests: an HTTP/2 connection carries up to 250 at once; more connections wait to be accepted (default: the open-file limit less a reserve for the store and logs)."`
	BodyTime   time.Duration `name:"body-timeout" help:"How long a request's body may take to arrive whole; a slower one is cut." default:"30s"`
	// ScheduleGrace is how late a schedule's fire may come and still be on time; past it,
	// the schedule's missed-fire policy decides (docs/workbench.md, Schedules).
	ScheduleGrace time.Duration `name:"schedule-grace" help:"How late a schedule's fire may be and still count as on time; later ones follow the schedule's --missed policy." default:"1m"`
	// MaxWrites bounds each Agent's writes at /mcp per minute (docs/security.md, "Bounds").
	MaxWrites int `name:"max-writes-per-minute" help:"Most writes (calls that become Operations) one Agent may make at /mcp in any minute; one past it is refused operation_limit and writes nothing. Reads never count." default:"120"`
	serveDoor
	serveNotices
}

// fdReserve is the open files serve keeps for its store, logs and data dir when it sizes
// its connection bound from the open-file limit.
const fdReserve = 256

// maxConns returns the bound on open connections: the flag, else the open-file limit
// less fdReserve, else console's default.
func (c *serveCmd) maxConns() int {
	if c.MaxConns > 0 {
		return c.MaxConns
	}
	if n := fdLimit() - fdReserve; n > 0 {
		return n
	}
	return console.DefaultMaxConns
}

func (c *serveCmd) Run(ctx context.Context, e *env) error {
	if c.MaxWrites < 1 {
		return &usageError{err: fmt.Errorf("--max-writes-per-minute %d is not a bound; give 1 or more (default 120)", c.MaxWrites)}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level}))
	kp, proxies, err := c.open(ctx, c.Listen)
	if err != nil {
		return err
	}
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	key, err := identity.ReadKeyFile(filepath.Join(dir, keyFile))
	if err != nil {
		return fmt.Errorf("%w (run docket init first)", err)
	}
	// A data dir made before signing keys existed gets its keyring on this first serve.
	signer, created, err := signing.LoadOrCreate(filepath.Join(dir, signing.FileName), rand.Reader, time.Now())
	if err != nil {
		return err
	}
	if created {
		log.Info("signing key created", logKeyID, signer.KeyID())
	}
	st, err := openStore(ctx, dir, c.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	// Metrics and traces: one registry of serve's own, served at
	// /metrics behind the API's authentication; spans exported when OTLP is configured.
	tp, stopTracing, err := startTracing(ctx, e, log, "docket-serve")
	if err != nil {
		return err
	}
	defer stopTracing()
	tel := telemetry.New(telemetry.Config{Tracer: tp, State: st})
	a, err := authority.New(authority.Config{Store: tel.Store(st), Key: key, Logger: log, Signer: signer, TaskLease: c.TaskLease})
	if err != nil {
		return err
	}
	ids := a.Directory() // the principals: the console, the gateway and the hop authenticate with it
	defer ids.Close()    // after the listener stops: the credential rechecks end and are waited for
	tel.CountRebuilds(a.ProjectionRebuilds)
	if err := a.Restore(ctx); err != nil {
		return err
	}
	hosts := make([]string, len(c.Host))
	for i, h := range c.Host {
		hosts[i] = strings.ToLower(h)
	}
	// One Operations serves the gateway, the decision routes and the worker hop, so a
	// call held at /mcp settles when its worker reports at /work.
	ops := authority.NewOperations(a, operation.Config{HoldBound: c.Hold, MaxWritesPerMinute: c.MaxWrites})
	opr := ops.Operations() // Requests, retries, hooks, artifacts: the facade adds nothing to them
	defer opr.Close()       // after the listener's shutdown below: the goroutines that follow the logs for held calls end and are waited for
	dispatcher := authority.NewDispatcher(ops, operation.DispatcherConfig{LeaseTTL: c.LeaseTTL})
	tel.ObserveQueues(func(ctx context.Context) ([]telemetry.QueuedWork, error) {
		qs, err := dispatcher.Queues(ctx)
		out := make([]telemetry.QueuedWork, len(qs))
		for i, q := range qs {
			out[i] = telemetry.QueuedWork{Project: string(q.Project), Connection: string(q.Connection), Queued: q.Queued}
		}
		return out, err
	})
	schedules, err := authority.NewSchedules(a, authority.SchedulesConfig{Grace: c.ScheduleGrace})
	if err != nil {
		return err
	}
	notices, err := c.notices(a, e.Getenv)
	if err != nil {
		return err
	}
	hop, err := workhop.New(workhop.Config{
		Identity:   ids,
		Dispatcher: dispatcher,
		Logger:     log,
		Observer:   tel,
	})
	if err != nil {
		return err
	}
	// docket start's serve answers only at a path its gate and children know
	// (docs/workbench.md): its port is on loopback, where any local process can reach it.
	pathKey := e.Getenv(datadir.ServeKeyEnv)
	var wb *console.Workbench
	if pathKey != "" {
		// Only docket start hands serve a path key: its own pages install the example and
		// give an Agent a model, and the console's Get started page leads to them.
		wb = &console.Workbench{ExamplePath: workbench.ExamplePath, ExampleToken: workbench.ExampleToken(pathKey), ModelPath: workbench.ModelPath, ToolsPath: workbench.ToolsPath,
			MaterialsPath: workbench.MaterialsPath, MaterialsToken: workbench.MaterialsToken(pathKey)}
	}
	srv, err := console.New(console.Config{Identity: ids, Authority: a, Requests: opr, Operations: ops, Reconciler: dispatcher, Policies: a, Recovery: opr,
		Schedules: schedules, Notices: notices, Cards: ops, Hooks: opr, Artifacts: opr,
		Logger: log, Version: versionLine(), Hosts: hosts, PathKey: pathKey, Workbench: wb,
		MaxConns: c.maxConns(), BodyTimeout: c.BodyTime, TLS: serverTLS(kp), Proxies: proxies,
		Metrics: tel.Handler(), Observe: tel.HTTP,
		Routes: map[string]http.Handler{
			"/mcp":                 gateway.New(gateway.Config{Auth: ids, Ops: ops, Strips: opr, Pins: a, Logger: log, Middleware: []mcp.Middleware{tel.MCP}}),
			"POST /work":           hop,
			"GET " + jwksPath:      jwksHandler(a.PublicKeys(), "application/jwk-set+json"),
			"GET " + directoryPath: directoryHandler(a.KeyDirectory),
		}})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	url := listenURL(ln.Addr(), kp != nil)
	keyed := url
	if pathKey != "" {
		keyed += console.PathKeyPrefix + pathKey
	}
	if c.PublicURL == "" {
		notices.SetPublicURL(url)
	}
	urlPath := filepath.Join(dir, urlFile)
	if err := writePrivate(urlPath, []byte(keyed+"\n")); err != nil {
		ln.Close()
		return err
	}
	defer os.Remove(urlPath)
	log.Info("docket serve listening", logURL, url, logPathKey, pathKey != "", logTLS, kp != nil, logProxies, len(proxies))
	defer reloadOnHUP(ctx, kp, log)()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The sweeps beside the operations: leases whose worker died, and Requests that no
	// longer take a decision (expired, or their Agent revoked or re-tokened).
	var sweeps sync.WaitGroup
	sweeps.Go(func() {
		if err := dispatcher.Run(ctx); err != nil {
			log.Error("lease sweep stopped", logErr, err)
		}
	})
	sweeps.Go(func() {
		if err := opr.Run(ctx); err != nil {
			log.Error("request sweep stopped", logErr, err)
		}
	})
	// Schedules wake at each due time rather than on a fixed tick (see Schedules.Run).
	sweeps.Go(func() {
		if err := schedules.Run(ctx); err != nil {
			log.Error("schedule sweep stopped", logErr, err)
		}
	})
	sweeps.Go(func() {
		if err := notices.Run(ctx); err != nil {
			log.Error("notices stopped", logErr, err)
		}
	})
	sweeps.Go(func() {
		if err := a.RunCheckpoints(ctx, c.Checkpoint); err != nil {
			log.Error("checkpoints stopped", logErr, err)
		}
	})
	err = srv.Run(ctx, ln)
	cancel()
	sweeps.Wait()
	return err
}
