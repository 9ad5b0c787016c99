// Package demo provides docket demo: the verified calculation run end to end through
// the real governed loop, with docket serve and docket worker as child processes, the
// admin verbs run as a person would, and an agent runtime in this process.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/supervisor"
	"github.com/docketrun/docket/internal/workbench"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
)

// Config is one run of the demo. Exe, Stdout, Stderr, Getenv and Docket are required.
type Config struct {
	Keep         string        // keep the data dir here (new or empty; created if missing); "": a temporary one, removed on success
	Approve      bool          // make the write Action need a person, and play the person
	ModelURL     string        // drive the demo with a real model at this endpoint; "" and no Provider: the scripted model
	Model        string        // the model name the endpoint knows
	Provider     string        // anthropic, openai or emulated; "": picked from ModelURL
	ModelKeyFile string        // file holding the model key; "": $DOCKET_MODEL_KEY
	MaxTurns     int           // stop a real model after this many turns
	Timeout      time.Duration // give up after this long

	Exe    string              // the program whose serve and worker subcommands run as the children
	Stdout io.Writer           // each step, as it is taken
	Stderr io.Writer           // where the kept data dir is named after a failure, and the runtime's log
	Getenv func(string) string // the caller's environment; its DOCKET_ variables never reach the demo's commands

	// Docket runs one docket command in this process, exactly as a person typing it
	// would, with vars as its only DOCKET_ variables and an empty stdin.
	Docket func(ctx context.Context, args []string, vars map[string]string, stdout, stderr io.Writer) error
}

// UsageError is a Config that cannot run as given. It reads as Err.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// serveReady is how long docket serve may take to answer its first health call.
const serveReady = 30 * time.Second

// Names the demo gives what it creates.
const (
	demoMember     = "demo"
	demoAgentName  = "calc"
	demoConnection = "laptop"
	demoSource     = "workspace"
	demoOutput     = "out/result.json"
	demoTask       = "Run the verified calculation for job calc-001: load data/input.json, open its Case, write the derived result to out/result.json, verify it, and close the Case as completed."
)

// demoTools are the Tools the example's Actions run; the demo locks exactly these.
var demoTools = []contract.ToolID{worker.WorkspaceTool(worker.OpReadJSON), worker.WorkspaceTool(worker.OpWriteJSON)}

// Run runs the demo: it initializes a data dir, starts docket serve and docket worker
// as child processes, sets them up with the admin verbs, and lets an agent (scripted
// unless a model is named) drive the whole flow through the MCP gateway, printing each
// step. It stops its children before it returns.
func Run(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("the demo took longer than --timeout %s", cfg.Timeout))
	defer cancel()
	d, err := newDemo(cfg)
	if err != nil {
		return err
	}
	err = d.run(ctx)
	if cerr := d.close(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// children is the part of the supervisor the demo uses.
type children interface {
	Start(c supervisor.Child) error
	Pid(name string) int
	LogPath(name string) string
	Done() <-chan struct{}
	Err() error
	Close(ctx context.Context) error
}

// demo is one run of the demo: its data dir, its children and what the steps learned.
type demo struct {
	cfg    Config
	dir    string // the data dir (DOCKET_HOME of every command the demo runs)
	tmp    bool   // dir is removed at the end
	ws     string // the workspace the worker's Source is fenced to
	pass   string // the demo member's passphrase
	step   int
	sup    children
	base   string // the URL of docket serve
	conKey string // the Connection key, for the worker only
	said   strings.Builder

	// What the agent's run learns, for the member's decision, which onTool takes
	// between the model's turns: the first error deciding met, and what was printed.
	approveErr error
	shown      map[string]bool   // the Board's news already printed, so each is printed once
	tools      map[string]string // Action name -> the Tool its execution runs
}

func newDemo(cfg Config) (*demo, error) {
	d := &demo{cfg: cfg, dir: cfg.Keep}
	if d.dir == "" {
		tmp, err := os.MkdirTemp("", "docket-demo-")
		if err != nil {
			return nil, fmt.Errorf("make the data dir: %w", err)
		}
		d.dir, d.tmp = tmp, true
	} else {
		abs, err := filepath.Abs(d.dir)
		if err != nil {
			return nil, fmt.Errorf("make the data dir: %w", err)
		}
		d.dir = abs
		if ents, err := os.ReadDir(d.dir); err == nil && len(ents) > 0 {
			return nil, &UsageError{Err: fmt.Errorf("--keep %s: the directory is not empty; name a new or empty one", cfg.Keep)}
		}
		if err := os.MkdirAll(d.dir, 0o700); err != nil {
			return nil, fmt.Errorf("make the data dir: %w", err)
		}
	}
	d.ws = filepath.Join(d.dir, "workspace")
	d.sup = supervisor.New(supervisor.Config{LogDir: filepath.Join(d.dir, datadir.LogsDir), StopGrace: 10 * time.Second})
	return d, nil
}

// close stops the children, newest first, and removes a temporary data dir when the
// demo succeeded; after a failure it is kept, with the children's logs, and named.
func (d *demo) close(ok bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := d.sup.Close(ctx)
	switch {
	case d.tmp && ok:
		if rerr := os.RemoveAll(d.dir); err == nil && rerr != nil {
			err = fmt.Errorf("remove the data dir: %w", rerr)
		}
	case !ok:
		fmt.Fprintf(d.cfg.Stderr, "docket demo: the data dir and the children's logs are in %s\n", d.dir)
	}
	return err
}

// run takes the steps in order; each is a method that prints what it did.
func (d *demo) run(ctx context.Context) error {
	d.say("Docket demo: the verified calculation through the real governed loop.")
	where := "removed at the end; --keep DIR keeps it"
	if !d.tmp {
		where = "kept"
	}
	d.say("data dir %s (%s)", d.dir, where)
	// A child that exits on its own ends the run at once, whatever step is waiting.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-d.sup.Done():
			cancel(d.sup.Err())
		case <-ctx.Done():
		}
	}()
	steps := []func(context.Context) error{
		d.prepare, d.initialize, d.startServe, d.install, d.createAgent, d.createConnection,
		d.bindSource, d.lockTools, d.startWorker, d.runAgent, d.showCase, d.showOutput, d.verifyEvents,
	}
	for _, s := range steps {
		if err := s(ctx); err != nil {
			if serr := context.Cause(ctx); serr != nil && d.sup.Err() != nil {
				return fmt.Errorf("%w (%v; see %s)", err, serr, filepath.Join(d.dir, "logs"))
			}
			return err
		}
	}
	d.say("\nThe model proposed; the Board derived; the worker executed; the log remembers.")
	return nil
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.cfg.Stdout, format+"\n", args...) }

func (d *demo) stepf(format string, args ...any) {
	d.step++
	d.say("\n%d. "+format, append([]any{d.step}, args...)...)
}

// vars are the DOCKET_ variables of the commands the demo runs: the demo's own, so that
// a user's token or server never leaks in.
func (d *demo) vars() map[string]string {
	return map[string]string{datadir.HomeEnv: d.dir, "DOCKET_PASSPHRASE": d.pass}
}

// getenv is the environment of what the demo runs in this process: the caller's, except
// that every DOCKET_ variable is the demo's own.
func (d *demo) getenv(k string) string {
	if strings.HasPrefix(k, "DOCKET_") {
		return d.vars()[k]
	}
	return d.cfg.Getenv(k)
}

// docket runs a docket command in this process, against the demo's data dir, exactly as
// a person typing it would, and returns what it printed.
func (d *demo) docket(ctx context.Context, args ...string) ([]byte, error) {
	var out, errb strings.Builder
	if err := d.cfg.Docket(ctx, args, d.vars(), &out, &errb); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg != "" {
			return nil, fmt.Errorf("docket %s: %w (%s)", strings.Join(args, " "), err, msg)
		}
		return nil, fmt.Errorf("docket %s: %w", strings.Join(args, " "), err)
	}
	return []byte(out.String()), nil
}

// docketJSON runs a docket command with -o json and decodes its answer into out.
func (d *demo) docketJSON(ctx context.Context, out any, args ...string) error {
	b, err := d.docket(ctx, append(args, "-o", "json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("docket %s: decode: %w", strings.Join(args, " "), err)
	}
	return nil
}

// prepare lays out the example in the data dir: the capability (with the write's
// approval raised to person under --approve), the workspace with the input file, the
// worker's tool manifest and vault, and the scripted model's script.
func (d *demo) prepare(context.Context) error {
	files := verifiedcalculation.Files
	copyOut := func(name, to string, edit func([]byte) ([]byte, error)) error {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		if edit != nil {
			if b, err = edit(b); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		return datadir.WritePrivate(to, b)
	}
	capDir := filepath.Join(d.dir, "capability")
	rules, err := fs.Glob(files, "capability/*.dl")
	if err != nil {
		return err
	}
	for _, r := range rules {
		if err := copyOut(r, filepath.Join(capDir, filepath.Base(r)), nil); err != nil {
			return fmt.Errorf("lay out the capability: %w", err)
		}
	}
	var approval func([]byte) ([]byte, error)
	if d.cfg.Approve {
		approval = func(b []byte) ([]byte, error) { return writeNeedsPerson(b) }
	}
	if err := copyOut("capability/capability.toml", filepath.Join(capDir, "capability.toml"), approval); err != nil {
		return fmt.Errorf("lay out the capability: %w", err)
	}
	pkg, err := capability.Load(capDir)
	if err != nil {
		return fmt.Errorf("load the capability: %w", err)
	}
	d.tools = map[string]string{}
	for _, a := range pkg.Declarations.Actions {
		if a.Execution != nil {
			d.tools[a.Name] = string(a.Execution.Tool)
		}
	}
	if err := copyOut("data/input.json", filepath.Join(d.ws, "data", "input.json"), nil); err != nil {
		return fmt.Errorf("lay out the workspace: %w", err)
	}
	if err := copyOut("tools.json", filepath.Join(d.dir, "tools.json"), nil); err != nil {
		return fmt.Errorf("write the tool manifest: %w", err)
	}
	vault := func(b []byte) ([]byte, error) { return expandVault(b, d.ws) }
	if err := copyOut("vault.template.json", filepath.Join(d.dir, "vault.json"), vault); err != nil {
		return fmt.Errorf("write the vault: %w", err)
	}
	if err := copyOut("script.json", filepath.Join(d.dir, "script.json"), nil); err != nil {
		return fmt.Errorf("write the script: %w", err)
	}
	return nil
}

// writeNeedsPerson returns capability.toml with write_result's approval set to person.
// It edits the decoded document, not its bytes, so any layout of the file works; it
// refuses a file whose write_result does not declare approval = "none", rather than run
// a demo that silently needs no one.
func writeNeedsPerson(file []byte) ([]byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal(file, &doc); err != nil {
		return nil, fmt.Errorf("read capability.toml: %w", err)
	}
	actions, _ := doc["action"].([]map[string]any)
	var write map[string]any
	for _, a := range actions {
		if a["name"] == "write_result" {
			write = a
		}
	}
	if write == nil {
		return nil, errors.New("capability.toml declares no write_result Action")
	}
	if write["approval"] != "none" {
		return nil, errors.New("capability.toml's write_result has no approval = \"none\" to raise")
	}
	write["approval"] = "person"
	var out strings.Builder
	if err := toml.NewEncoder(&out).Encode(doc); err != nil {
		return nil, fmt.Errorf("write capability.toml: %w", err)
	}
	return []byte(out.String()), nil
}

// expandVault fills the vault template's $WORKSPACE with the workspace's absolute path,
// JSON-quoted; any other $ in the template is an error.
func expandVault(tmpl []byte, ws string) ([]byte, error) {
	quoted, err := json.Marshal(ws)
	if err != nil {
		return nil, err
	}
	var bad string
	out := os.Expand(string(tmpl), func(k string) string {
		if k == "WORKSPACE" {
			return string(quoted[1 : len(quoted)-1])
		}
		bad = k
		return ""
	})
	if bad != "" {
		return nil, fmt.Errorf("the vault template names $%s; it may only name $WORKSPACE", bad)
	}
	return []byte(out), nil
}

func (d *demo) initialize(ctx context.Context) error {
	b := make([]byte, 16)
	rand.Read(b)
	d.pass = hex.EncodeToString(b)
	if !d.tmp {
		if err := datadir.WritePrivate(filepath.Join(d.dir, "passphrase"), []byte(d.pass+"\n")); err != nil {
			return err
		}
	}
	var out struct {
		Member  contract.Member  `json:"member"`
		Project contract.Project `json:"project"`
	}
	if err := d.docketJSON(ctx, &out, "init", "--member", demoMember); err != nil {
		return err
	}
	d.stepf("docket init: installation key, SQLite store, member %s, project %s", out.Member.Name, out.Project.ID)
	if !d.tmp {
		d.say("   the member's passphrase is in %s", filepath.Join(d.dir, "passphrase"))
	}
	return nil
}

// childEnv is the environment of a child: the allow-list of docket start's children
// (the basics of the caller's environment, never a DOCKET_ variable), plus the demo's
// data dir and what the child is given.
func (d *demo) childEnv(extra ...string) []string {
	return workbench.ChildEnviron(nil, append([]string{datadir.HomeEnv + "=" + d.dir}, extra...)...)
}

func (d *demo) startServe(ctx context.Context) error {
	if err := d.sup.Start(workbench.ServeChild(d.cfg.Exe, d.childEnv(), false, "127.0.0.1:0")); err != nil {
		return err
	}
	_, base, err := apiclient.WaitHealthy(ctx, serveReady, nil, func() (string, error) { return datadir.ServerURL(d.getenv, d.dir) })
	if err != nil {
		return err
	}
	d.base = base
	d.stepf("docket serve: the authority listens at %s (child process %d, log %s)", base, d.sup.Pid("serve"), d.sup.LogPath("serve"))
	return nil
}

func (d *demo) install(ctx context.Context) error {
	var in contract.Installed
	if err := d.docketJSON(ctx, &in, "capability", "install", filepath.Join(d.dir, "capability")); err != nil {
		return err
	}
	d.stepf("docket capability install: %s@%s, release digest %s", in.Release.ID, in.Release.Version, in.Release.Digest)
	if d.cfg.Approve {
		d.say("   --approve: write_result is installed with approval = \"person\"")
	} else {
		d.say("   write_result runs without approval (run with --approve to need a person)")
	}
	return nil
}

func (d *demo) createAgent(ctx context.Context) error {
	var at contract.AgentToken
	if err := d.docketJSON(ctx, &at, "agent", "create", demoAgentName); err != nil {
		return err
	}
	if err := datadir.WritePrivate(filepath.Join(d.dir, "agent-token"), []byte(at.Token+"\n")); err != nil {
		return err
	}
	d.stepf("docket agent create %s: agent %s; its token is kept for the runtime alone", demoAgentName, at.Agent.ID)
	return nil
}

func (d *demo) createConnection(ctx context.Context) error {
	var ck contract.ConnectionKey
	if err := d.docketJSON(ctx, &ck, "connection", "create", demoConnection); err != nil {
		return err
	}
	d.conKey = ck.Key
	d.stepf("docket connection create %s: connection %s; its key goes to the worker alone", demoConnection, ck.Connection.ID)
	return nil
}

func (d *demo) bindSource(ctx context.Context) error {
	var src contract.Source
	if err := d.docketJSON(ctx, &src, "source", "bind", "--connection", demoConnection, "--name", demoSource,
		"--type", "file", "--words", "calculation_input,output_file"); err != nil {
		return err
	}
	d.stepf("docket source bind: %s (%s, %s for %s); its root lives only in the worker's vault",
		src.Name, src.Type, src.Tier, strings.Join(src.Words, ", "))
	return nil
}

// lockTools locks the Tools the Actions run, at the digests the worker advertises: the
// demo reads the same manifest the worker will, through the worker's own code.
func (d *demo) lockTools(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join(d.dir, "tools.json"))
	if err != nil {
		return err
	}
	m, err := worker.ParseManifest(b, map[string]worker.Adapter{worker.AdapterWorkspace: workspace.Adapter{}})
	if err != nil {
		return fmt.Errorf("read the tool manifest: %w", err)
	}
	d.stepf("docket tool lock: the Tools the Actions run, at the digests the worker advertises")
	for _, id := range demoTools {
		_, digest, ok := m.Lookup(id)
		if !ok {
			return fmt.Errorf("the worker has no tool %s", id)
		}
		if _, err := d.docket(ctx, "tool", "lock", "--connection", demoConnection, "--tool", string(id), "--digest", digest); err != nil {
			return err
		}
		d.say("   %s  %s", id, digest)
	}
	return nil
}

func (d *demo) startWorker(ctx context.Context) error {
	c := workbench.WorkerChild(d.cfg.Exe, d.childEnv(datadir.URLEnv+"="+d.base, workbench.ConnectionKeyEnv+"="+d.conKey), false,
		filepath.Join(d.dir, "tools.json"), filepath.Join(d.dir, "vault.json"))
	if err := d.sup.Start(c); err != nil {
		return err
	}
	d.stepf("docket worker: executes for connection %s, fenced to %s (child process %d, log %s)",
		demoConnection, d.ws, d.sup.Pid("worker"), d.sup.LogPath("worker"))
	return nil
}

func (d *demo) showCase(ctx context.Context) error {
	var cases []contract.Case
	if err := d.docketJSON(ctx, &cases, "case", "list"); err != nil {
		return err
	}
	if len(cases) != 1 {
		return fmt.Errorf("the project holds %d Cases, want the one the agent opened", len(cases))
	}
	cs := cases[0]
	if cs.Status != contract.CaseClosed || cs.Disposition != contract.DispositionCompleted {
		return fmt.Errorf("case %s is %s %s, want closed completed", cs.CaseID, cs.Status, cs.Disposition)
	}
	d.stepf("docket case show %s: closed, %s, release %s", cs.CaseID, cs.Disposition, cs.Release)
	return nil
}

func (d *demo) showOutput(context.Context) error {
	b, err := os.ReadFile(filepath.Join(d.ws, filepath.FromSlash(demoOutput)))
	if err != nil {
		return fmt.Errorf("read the output file: %w", err)
	}
	d.stepf("%s, as the worker wrote it:\n%s", demoOutput, strings.TrimRight(string(b), "\n"))
	return nil
}

func (d *demo) verifyEvents(ctx context.Context) error {
	out, err := d.docket(ctx, "events", "verify")
	if err != nil {
		return err
	}
	d.stepf("docket events verify: %s", strings.TrimSpace(string(out)))
	return nil
}
