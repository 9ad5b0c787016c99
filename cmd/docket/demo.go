package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/supervisor"
	"github.com/docketrun/docket/internal/workbench"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
)

// demoCmd runs the verified calculation (DESIGN.md §9.4) as the real governed loop: it
// initializes a data dir, starts docket serve and docket worker as child processes of
// this binary, sets them up with the admin verbs, and lets an agent (scripted unless a
// model is named) drive the whole flow through the MCP gateway, printing each step.
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

func (c *demoCmd) Run(ctx context.Context, e *env) error {
	for _, d := range []struct {
		flag *string
		env  string
	}{{&c.ModelURL, "DOCKET_MODEL_URL"}, {&c.Model, "DOCKET_MODEL"}} {
		if *d.flag == "" {
			*d.flag = e.Getenv(d.env)
		}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.Timeout, fmt.Errorf("the demo took longer than --timeout %s", c.Timeout))
	defer cancel()
	d, err := newDemo(c, e)
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
		return agentExit(fmt.Errorf("demo: %w", err))
	}
	return nil
}

// demo is one run of the demo: its data dir, its children and what the steps learned.
type demo struct {
	cmd    *demoCmd
	e      *env
	dir    string // the data dir (DOCKET_HOME of every command the demo runs)
	tmp    bool   // dir is removed at the end
	ws     string // the workspace the worker's Source is fenced to
	pass   string // the demo member's passphrase
	step   int
	sup    *supervisor.Supervisor
	base   string // the URL of docket serve
	conKey string // the Connection key, for the worker only
	said   strings.Builder

	// Knobs tests turn: extra flags for docket serve, the URL the worker is given for
	// serve's (a test puts a proxy between them), and whether a worker that exits is
	// restarted rather than ending the demo.
	serveFlags    []string
	workerURL     func(base string) string
	restartWorker bool

	// While the agent runs: its context and runtime, for the member's decision, which
	// onTool takes between the model's turns, and the first error deciding met.
	ctx        context.Context
	rt         *runner.Runtime
	approveErr error
	shown      map[string]bool   // the Board's news already printed, so each is printed once
	tools      map[string]string // Action name -> the Tool its execution runs
}

func newDemo(c *demoCmd, e *env) (*demo, error) {
	d := &demo{cmd: c, e: e, dir: c.Keep}
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
			return nil, &usageError{err: fmt.Errorf("--keep %s: the directory is not empty; name a new or empty one", c.Keep)}
		}
		if err := os.MkdirAll(d.dir, 0o700); err != nil {
			return nil, fmt.Errorf("make the data dir: %w", err)
		}
	}
	d.ws = filepath.Join(d.dir, "workspace")
	d.sup = supervisor.New(supervisor.Config{LogDir: filepath.Join(d.dir, "logs"), StopGrace: 10 * time.Second})
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
		fmt.Fprintf(d.e.Stderr, "docket demo: the data dir and the children's logs are in %s\n", d.dir)
	}
	return err
}

// run takes the steps in order; each is a method that prints what it did.
func (d *demo) run(ctx context.Context) error {
	d.say("Docket demo: the verified calculation (DESIGN.md §9.4) through the real governed loop.")
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

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.e.Stdout, format+"\n", args...) }

func (d *demo) stepf(format string, args ...any) {
	d.step++
	d.say("\n%d. "+format, append([]any{d.step}, args...)...)
}

// getenv is the environment of the commands the demo runs in this process: the caller's,
// except that every DOCKET_ variable is the demo's own, so a user's token or server
// never leaks in.
func (d *demo) getenv(k string) string {
	switch k {
	case "DOCKET_HOME":
		return d.dir
	case "DOCKET_PASSPHRASE":
		return d.pass
	}
	if strings.HasPrefix(k, "DOCKET_") {
		return ""
	}
	return d.e.Getenv(k)
}

// docket runs a docket command in this process, against the demo's data dir, exactly as
// a person typing it would, and returns what it printed.
func (d *demo) docket(ctx context.Context, args ...string) ([]byte, error) {
	var out, errb bytes.Buffer
	err := run(ctx, args, &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: d.getenv})
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg != "" {
			return nil, fmt.Errorf("docket %s: %w (%s)", strings.Join(args, " "), err, msg)
		}
		return nil, fmt.Errorf("docket %s: %w", strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
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
		return writePrivate(to, b)
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
	if d.cmd.Approve {
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
// It refuses a file where that line is not exactly where the example puts it, rather
// than run a demo that silently needs no one.
func writeNeedsPerson(toml []byte) ([]byte, error) {
	const anchor = "name          = \"write_result\"\n"
	i := bytes.Index(toml, []byte(anchor))
	if i < 0 {
		return nil, errors.New("capability.toml declares no write_result Action")
	}
	rest := toml[i+len(anchor):]
	const from, to = "approval      = \"none\"", "approval      = \"person\""
	j := bytes.Index(rest, []byte(from))
	if k := bytes.Index(rest, []byte("[[action]]")); j < 0 || k >= 0 && j > k {
		return nil, errors.New("capability.toml's write_result has no approval = \"none\" line to raise")
	}
	out := append([]byte{}, toml[:i+len(anchor)]...)
	out = append(out, rest[:j]...)
	out = append(out, to...)
	return append(out, rest[j+len(from):]...), nil
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
		if err := writePrivate(filepath.Join(d.dir, "passphrase"), []byte(d.pass+"\n")); err != nil {
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

// childEnv is the environment of a child: the caller's without any DOCKET_ variable,
// plus the demo's data dir and what the child is given.
func (d *demo) childEnv(extra ...string) []string {
	return workbench.ChildEnviron(append([]string{"DOCKET_HOME=" + d.dir}, extra...)...)
}

func (d *demo) startServe(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program to start docket serve: %w", err)
	}
	c := workbench.ServeChild(exe, d.childEnv(), false, "127.0.0.1:0")
	c.Args = append(c.Args, d.serveFlags...)
	if err := d.sup.Start(c); err != nil {
		return err
	}
	_, base, err := waitHealthy(ctx, &env{Getenv: d.getenv}, d.dir, 30*time.Second)
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
	if d.cmd.Approve {
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
	if err := writePrivate(filepath.Join(d.dir, "agent-token"), []byte(at.Token+"\n")); err != nil {
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
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program to start docket worker: %w", err)
	}
	url := d.base
	if d.workerURL != nil {
		url = d.workerURL(d.base)
	}
	c := workbench.WorkerChild(exe, d.childEnv("DOCKET_URL="+url, connectionKeyEnv+"="+d.conKey), d.restartWorker,
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
