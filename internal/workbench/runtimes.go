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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/supervisor"
)

// Files beside each Agent's runtime, in AgentsDir/<agent id>/ (directory mode 0700,
// files 0600). The model key is written there by the first-use form, or by a person.
const (
	AgentsDir       = "agents"
	AgentTokenFile  = "agent.token" // the Agent's token, taken once when docket start first runs it
	ModelKeyFile    = "model.key"   // the default place of the model key
	TaskFile        = "task.json"   // where the runtime's task endpoint and its key are
	agentChildParts = "agent-"      // a runtime child is named agent-<agent id>
)

// AgentTokenEnv carries an Agent's token to its runtime child, never a flag.
const AgentTokenEnv = "DOCKET_AGENT_TOKEN"

// Bounds of the runtimes' supervision.
const (
	syncEvery     = 3 * time.Second  // how often the profiles are read again
	reportTimeout = 10 * time.Second // how long one report of a runtime's state may take
	maxReasonText = 400              // runes of a log line quoted in a reason
	tellLines     = 6                // lines of its log printed when a child exits
)

// workerChild is the name of the supervised worker (see [WorkerChild]).
const workerChild = "worker"

// runtimes runs one supervised `docket agent serve` per enabled profile of the project,
// and reports each runtime's state to the authority, where docket agent profile list,
// docket doctor and the console's Agents page show it. It is safe for concurrent use.
type runtimes struct {
	cfg     Config
	sup     *supervisor.Supervisor
	base    string        // serve's internal URL, with its path key
	kick    chan struct{} // asks for a sync now; buffered 1
	reports chan report   // to the reporter; buffered

	mu      sync.Mutex
	running map[contract.AgentID]contract.ProfileSpec // the spec each started child runs
	names   map[contract.AgentID]string               // the Agent's name, for what is printed
	failed  map[contract.AgentID]string               // the last failure reported of a runtime not started
	warned  string                                    // the last failure to read the profiles, said once
	looping map[string]string                         // by child name: why a child in a crash loop keeps exiting
	told    map[string]string                         // by child name: the log lines printed at its last exit
}

// report is the state of one supervised child for the authority: an Agent's runtime, or
// the worker of the Connection connection.
type report struct {
	agent      contract.AgentID
	connection string
	st         contract.RuntimeStatus
}

// what names the child a report is of, for what is printed.
func (rep report) what() string {
	if rep.connection != "" {
		return "worker of " + rep.connection
	}
	return "runtime of " + string(rep.agent)
}

func newRuntimes(cfg Config) *runtimes {
	return &runtimes{cfg: cfg, kick: make(chan struct{}, 1), reports: make(chan report, 256),
		running: map[contract.AgentID]contract.ProfileSpec{}, names: map[contract.AgentID]string{}, failed: map[contract.AgentID]string{},
		looping: map[string]string{}, told: map[string]string{}}
}

func (r *runtimes) project() string { return cmpOr(r.cfg.Project, "default") }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// member is a client of serve as the data dir's member, with the token read anew each
// time (a docket login replaces it).
func (r *runtimes) member() (*apiclient.Client, error) {
	b, err := os.ReadFile(filepath.Join(r.cfg.Dir, datadir.TokenFile))
	if err != nil {
		return nil, fmt.Errorf("read the member's token in the data dir (docket login writes it): %w", err)
	}
	return &apiclient.Client{URL: r.base, Token: strings.TrimSpace(string(b))}, nil
}

// Sync asks for the profiles to be read again now.
func (r *runtimes) Sync() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run syncs the runtimes with the profiles until ctx ends, then stops every runtime and
// reports it stopped while serve still answers.
func (r *runtimes) run(ctx context.Context) {
	reported := make(chan struct{})
	rctx, stopReports := context.WithCancel(context.WithoutCancel(ctx))
	go func() { defer close(reported); r.reporter(rctx) }()
	tick := time.NewTicker(syncEvery)
	defer tick.Stop()
	for {
		r.sync(ctx)
		select {
		case <-ctx.Done():
			r.stopAll(context.WithoutCancel(ctx))
			stopReports()
			<-reported
			return
		case <-tick.C:
		case <-r.kick:
		}
	}
}

// sync starts a runtime for each enabled profile that has none, and stops the runtime of
// a profile that was disabled, changed or removed (a changed one starts again on the new
// profile).
func (r *runtimes) sync(ctx context.Context) {
	cl, err := r.member()
	var ps []contract.AgentProfile
	if err == nil {
		ps, err = cl.Profiles(ctx, r.project())
	}
	if err != nil {
		if ctx.Err() == nil {
			r.warnOnce(fmt.Sprintf("docket start: cannot read the agent profiles, so no runtime is started or stopped: %v", err))
		}
		return
	}
	r.warnOnce("")
	want := map[contract.AgentID]contract.AgentProfile{}
	for _, p := range ps {
		if p.Enabled {
			want[p.Agent] = p
		}
	}
	r.mu.Lock()
	var stop []contract.AgentID
	for id, spec := range r.running {
		if p, ok := want[id]; !ok || !p.ProfileSpec.SameRuntime(spec) {
			stop = append(stop, id)
		}
	}
	for _, p := range ps {
		r.names[p.Agent] = p.AgentName
	}
	r.mu.Unlock()
	for _, id := range stop {
		r.stop(ctx, id)
	}
	for id, p := range want {
		r.mu.Lock()
		_, runs := r.running[id]
		r.mu.Unlock()
		if !runs {
			r.start(ctx, cl, p)
		}
	}
}

func (r *runtimes) warnOnce(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if msg != "" && msg != r.warned {
		fmt.Fprintln(r.cfg.Stderr, msg)
	}
	r.warned = msg
}

// start starts the runtime of p, or reports why it cannot start.
func (r *runtimes) start(ctx context.Context, cl *apiclient.Client, p contract.AgentProfile) {
	child, err := r.child(ctx, cl, p)
	if err == nil {
		r.mu.Lock()
		// Recorded before the start, so that the start's report finds its Agent.
		r.running[p.Agent] = p.ProfileSpec
		delete(r.failed, p.Agent)
		r.mu.Unlock()
		if err = r.sup.Start(child); err != nil {
			r.mu.Lock()
			delete(r.running, p.Agent)
			r.mu.Unlock()
		}
	}
	if err == nil {
		fmt.Fprintf(r.cfg.Stdout, "  agent   %s (%s), log %s\n", p.AgentName, strings.TrimSpace(p.Provider+" "+p.Model), r.sup.LogPath(child.Name))
		return
	}
	reason := err.Error()
	r.mu.Lock()
	again := r.failed[p.Agent] == reason
	r.failed[p.Agent] = reason
	r.mu.Unlock()
	if again {
		return
	}
	fmt.Fprintf(r.cfg.Stderr, "docket start: agent %s is not started: %s\n", p.AgentName, reason)
	r.send(report{agent: p.Agent, st: contract.RuntimeStatus{State: contract.RuntimeFailed, Reason: reason}})
}

// stop stops the runtime of agent and reports it stopped.
func (r *runtimes) stop(ctx context.Context, agent contract.AgentID) {
	r.mu.Lock()
	delete(r.running, agent)
	r.mu.Unlock()
	reason := "its profile was changed or disabled"
	if err := r.sup.Stop(ctx, childName(agent)); err != nil {
		reason += "; " + err.Error()
	}
	r.send(report{agent: agent, st: contract.RuntimeStatus{State: contract.RuntimeStopped, Reason: reason}})
}

// stopAll stops every runtime at docket start's end and reports each stopped, and each
// that could not start stopped as well: no runtime is left reported failed by a docket
// start that is gone.
func (r *runtimes) stopAll(ctx context.Context) {
	r.mu.Lock()
	var ids []contract.AgentID
	for id := range r.running {
		ids = append(ids, id)
	}
	r.running = map[contract.AgentID]contract.ProfileSpec{}
	failed := r.failed
	r.failed = map[contract.AgentID]string{}
	r.mu.Unlock()
	for id, why := range failed {
		r.send(report{agent: id, st: contract.RuntimeStatus{State: contract.RuntimeStopped, Reason: "docket start stopped; the runtime was not started: " + why}})
	}
	for _, id := range ids {
		reason := "docket start stopped"
		if err := r.sup.Stop(ctx, childName(id)); err != nil {
			reason += "; " + err.Error()
		}
		r.send(report{agent: id, st: contract.RuntimeStatus{State: contract.RuntimeStopped, Reason: reason}})
	}
	// The worker stops with serve, after this; it is reported stopped while serve answers.
	r.send(report{connection: Connection, st: contract.RuntimeStatus{State: contract.RuntimeStopped, Reason: "docket start stopped"}})
}

func childName(agent contract.AgentID) string { return agentChildParts + string(agent) }

// onChange tells what a supervised child did: an exit on docket start's terminal, and the
// state of the worker and of each runtime to the authority, where the Workers and Agents
// pages and docket doctor show it.
func (r *runtimes) onChange(c supervisor.Change) {
	st := r.status(c)
	r.tell(c)
	if c.Name == workerChild {
		r.send(report{connection: Connection, st: st})
		return
	}
	if id, ok := strings.CutPrefix(c.Name, agentChildParts); ok {
		r.send(report{agent: contract.AgentID(id), st: st})
	}
}

// status is the state a child's change leaves it in. A child in a crash loop stays in it
// when it is started again, until its process has run long enough to be settled.
func (r *runtimes) status(c supervisor.Change) contract.RuntimeStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	looping := r.looping[c.Name]
	switch {
	case c.Started && looping != "" && !c.Settled:
		return contract.RuntimeStatus{State: contract.RuntimeCrashLoop, Pid: c.Pid, Restarts: max(c.Runs-1, 0), Reason: looping}
	case c.Started:
		delete(r.looping, c.Name)
		return contract.RuntimeStatus{State: contract.RuntimeRunning, Pid: c.Pid, Restarts: max(c.Runs-1, 0)}
	case c.CrashLooping():
		why := r.loopReason(c)
		r.looping[c.Name] = why
		return contract.RuntimeStatus{State: contract.RuntimeCrashLoop, Restarts: c.Runs, Reason: why}
	}
	return contract.RuntimeStatus{State: contract.RuntimeRestarting, Restarts: c.Runs, Reason: r.exitReason(c)}
}

// tell prints a child's exit on docket start's terminal with its restart count and the
// last lines of its log, which name the cause, and a crash loop by that name; a child
// that is up again after quick exits is said to be.
func (r *runtimes) tell(c supervisor.Change) {
	who := c.Name
	if id, ok := strings.CutPrefix(c.Name, agentChildParts); ok {
		r.mu.Lock()
		who = "the runtime of agent " + cmpOr(r.names[contract.AgentID(id)], id)
		r.mu.Unlock()
	}
	w := r.cfg.Stderr
	if c.Started {
		if c.Settled {
			fmt.Fprintf(w, "docket start: %s is up again (pid %d), after %d restart(s)\n", who, c.Pid, max(c.Runs-1, 0))
		}
		return
	}
	how := "with status 0"
	if c.Err != nil {
		how = "(" + c.Err.Error() + ")"
	}
	next := "it is not restarted"
	if c.Restart {
		next = fmt.Sprintf("restart %d in %s", c.Runs, c.Backoff.Round(time.Millisecond))
	}
	if c.Quick > supervisor.CrashLoop {
		next += ", still in a crash loop"
	}
	fmt.Fprintf(w, "docket start: %s exited %s; %s\n", who, how, next)
	if c.Quick == supervisor.CrashLoop {
		fmt.Fprintf(w, "docket start: %s is in a crash loop: it exited %d times in a row, each within %s of starting; fix what its log says, and docket start picks it up at the next restart\n", who, c.Quick, supervisor.DefaultStable)
	}
	log := r.sup.LogPath(c.Name)
	lines := lastLines(log, tellLines)
	if len(lines) == 0 {
		return
	}
	text := strings.Join(lines, "\n")
	r.mu.Lock()
	same := r.told[c.Name] == text
	r.told[c.Name] = text
	r.mu.Unlock()
	if same {
		fmt.Fprintf(w, "  the last lines of %s are as before\n", log)
		return
	}
	fmt.Fprintf(w, "  the last lines of %s:\n", log)
	for _, l := range lines {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// loopReason says why a child in a crash loop keeps exiting: first the last line it
// wrote, which names the cause and its fix (a worker's names the file to fix), then how
// often it exited and where its log is.
func (r *runtimes) loopReason(c supervisor.Change) string {
	log := r.sup.LogPath(c.Name)
	line := strings.TrimPrefix(lastLine(log), "docket: ")
	if line == "" {
		line = "it wrote nothing to its log"
	}
	how := "status 0"
	if c.Err != nil {
		how = c.Err.Error()
	}
	why := fmt.Sprintf("%s (it exited %d times in a row, each within %s of starting, last with %s", line, c.Quick, supervisor.DefaultStable, how)
	if log != "" {
		why += "; log " + log
	}
	return why + ")"
}

// exitReason says how a runtime exited, with the last line it wrote, which names the
// cause (a refused key file, a rejected token, an unreachable model).
func (r *runtimes) exitReason(c supervisor.Change) string {
	how := "exited with status 0"
	if c.Err != nil {
		how = "exited: " + c.Err.Error()
	}
	if c.Restart {
		how += "; restarting it after a back-off"
	}
	log := r.sup.LogPath(c.Name)
	if line := lastLine(log); line != "" {
		how += "; its last words: " + line
	}
	if log != "" {
		how += " (log " + log + ")"
	}
	return how
}

// lastLine is the last line a child wrote into its log, not the supervisor's own, cut
// to maxReasonText runes; "" when there is none to read.
func lastLine(path string) string {
	if ls := lastLines(path, 1); len(ls) == 1 {
		return ls[0]
	}
	return ""
}

// lastLines is up to n of the last lines a child wrote into its log, oldest first, not
// the supervisor's own, each cut to maxReasonText runes; none when there is none to read.
func lastLines(path string, n int) []string {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const tail = 8 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		if _, err := f.Seek(-tail, io.SeekEnd); err != nil {
			return nil
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- supervisor:") {
			continue
		}
		if rs := []rune(l); len(rs) > maxReasonText {
			l = string(rs[:maxReasonText]) + "…"
		}
		out = append(out, l)
	}
	slices.Reverse(out)
	return out
}

func (r *runtimes) send(rep report) {
	select {
	case r.reports <- rep:
	default:
		fmt.Fprintf(r.cfg.Stderr, "docket start: too many reports queued; dropped the %s state of the %s\n", rep.st.State, rep.what())
	}
}

// reporter sends each report to the authority, in order, until ctx ends and the queue is
// empty.
func (r *runtimes) reporter(ctx context.Context) {
	for {
		select {
		case rep := <-r.reports:
			r.deliver(ctx, rep)
		case <-ctx.Done():
			for {
				select {
				case rep := <-r.reports:
					r.deliver(ctx, rep)
				default:
					return
				}
			}
		}
	}
}

func (r *runtimes) deliver(ctx context.Context, rep report) {
	// A report is sent even while docket start stops: the last one says it stopped.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	cl, err := r.member()
	if err == nil && rep.connection != "" {
		err = cl.ReportWorker(ctx, r.project(), rep.connection, rep.st)
	} else if err == nil {
		err = cl.ReportRuntime(ctx, r.project(), string(rep.agent), rep.st)
	}
	if err != nil && contract.CodeOf(err) != contract.CodeNotFound {
		fmt.Fprintf(r.cfg.Stderr, "docket start: report the %s state of the %s: %v\n", rep.st.State, rep.what(), err)
	}
}

// child is the supervised runtime of p: docket agent serve with the profile's model,
// budgets and instructions, the Agent's token in its environment and its key file beside
// it. It refuses, with the fix, a profile whose files are not there.
func (r *runtimes) child(ctx context.Context, cl *apiclient.Client, p contract.AgentProfile) (supervisor.Child, error) {
	dir := filepath.Join(r.cfg.Dir, AgentsDir, string(p.Agent))
	args := []string{"docket", "agent", "serve", "--listen", "127.0.0.1:0", "--task-file", filepath.Join(dir, TaskFile),
		"--provider", p.Provider}
	add := func(flag, v string) {
		if v != "" && v != "0" {
			args = append(args, flag, v)
		}
	}
	add("--model-url", p.ModelURL)
	add("--model", p.Model)
	add("--max-turns", strconv.Itoa(p.MaxTurns))
	add("--max-tokens", strconv.FormatInt(p.MaxTokens, 10))
	add("--max-usd", strconv.FormatFloat(p.MaxUSD, 'f', -1, 64))
	add("--context-window", strconv.Itoa(p.ContextWindow))
	add("--thinking", p.Thinking)
	add("--model-attempts", strconv.Itoa(p.ModelAttempts))
	for _, d := range []struct {
		flag string
		s    int
	}{{"--model-retry-wait", p.ModelRetryWaitSeconds}, {"--model-first-byte", p.ModelFirstByteSeconds}, {"--model-idle", p.ModelIdleSeconds}} {
		if d.s > 0 {
			add(d.flag, strconv.Itoa(d.s)+"s")
		}
	}
	for _, f := range []struct{ flag, path, what string }{
		{"--script", p.Script, "script"}, {"--instructions-file", p.InstructionsFile, "instructions file"}, {"--workspace", p.Workspace, "workspace"},
	} {
		if f.path == "" {
			continue
		}
		path := r.resolve(f.path)
		if _, err := os.Stat(path); err != nil {
			return supervisor.Child{}, fmt.Errorf("the profile's %s %s cannot be read here (%v); put it there or set the profile again", f.what, path, errors.Unwrap(err))
		}
		add(f.flag, path)
	}
	add("--instructions-digest", p.InstructionsDigest)
	key, err := r.keyFile(p)
	if err != nil {
		return supervisor.Child{}, err
	}
	add("--model-key-file", key)
	token, err := r.agentToken(ctx, cl, p, dir)
	if err != nil {
		return supervisor.Child{}, err
	}
	env := ChildEnviron(r.cfg.PassEnv, datadir.HomeEnv+"="+r.cfg.Dir, datadir.URLEnv+"="+r.base, AgentTokenEnv+"="+token)
	return supervisor.Child{Name: childName(p.Agent), Path: r.cfg.Exe, Env: env, Restart: true, Args: args}, nil
}

// resolve takes a profile's path from the data dir when it is relative.
func (r *runtimes) resolve(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(r.cfg.Dir, path)
}

// keyFile is the key file the runtime of p reads, checked: "" when the endpoint takes no
// key. A key the endpoint needs and that is not there is refused with where to put it.
func (r *runtimes) keyFile(p contract.AgentProfile) (string, error) {
	if p.KeyFile == "" {
		if NeedsKey(p.Provider, p.ModelURL) {
			return "", fmt.Errorf("the profile names no key file, and %s at %s needs a key; enter it in the workbench's first-use form, or write it to a file (mode 0600) and set the profile again with --key-file", p.Provider, cmpOr(apiclient.Origin(p.ModelURL), "its public endpoint"))
		}
		return "", nil
	}
	path := r.resolve(p.KeyFile)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("the model key file %s is not there; write the key into it (mode 0600), or enter it in the workbench's first-use form", path)
	case err != nil:
		return "", fmt.Errorf("the model key file %s cannot be read: %v", path, errors.Unwrap(err))
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("the model key file %s is readable by others (mode %v); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	return path, nil
}

// agentToken is the Agent's token, kept in dir: taken once, by replacing the Agent's
// token, when docket start first runs the Agent (a token is shown only when made).
func (r *runtimes) agentToken(ctx context.Context, cl *apiclient.Client, p contract.AgentProfile, dir string) (string, error) {
	path := filepath.Join(dir, AgentTokenFile)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the Agent's token: %w", err)
	}
	var at contract.AgentToken
	if err := cl.Do(ctx, http.MethodPost, apiclient.ProjectPath(r.project(), "agents", string(p.Agent), "token"), nil, &at); err != nil {
		return "", fmt.Errorf("take a token for the Agent's runtime: %w", err)
	}
	if err := saveAgentToken(dir, at.Token); err != nil {
		return "", err
	}
	return at.Token, nil
}

// saveAgentToken keeps an Agent's token in its directory of the data dir, mode 0600.
func saveAgentToken(dir, token string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the Agent's directory: %w", err)
	}
	return datadir.WritePrivate(filepath.Join(dir, AgentTokenFile), []byte(token+"\n"))
}

// NeedsKey reports whether a model endpoint of provider at modelURL needs a key: every
// one but an OpenAI-compatible (or emulated) server on loopback, which local servers
// run without keys, and the scripted provider, which runs no model.
func NeedsKey(provider, modelURL string) bool {
	switch provider {
	case contract.ProviderScripted:
		return false
	case contract.ProviderOpenAI, contract.ProviderEmulated:
		u, err := url.Parse(modelURL)
		if err != nil || modelURL == "" {
			return true
		}
		h := u.Hostname()
		if h == "localhost" {
			return false
		}
		ip := net.ParseIP(h)
		return ip == nil || !ip.IsLoopback()
	}
	return true
}
