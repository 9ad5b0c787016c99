package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/gowebpki/jcs"
)

// Config configures an [Executor]: what the worker knows on its own, against which every
// served grant is checked.
type Config struct {
	Project    contract.ProjectID    // required: the project of the worker's Connection
	Connection contract.ConnectionID // required
	Key        []byte                // required: the Connection key that signs grants
	Manifest   *Manifest             // required; replaced by [Executor.SetManifest]
	Vault      *Vault                // required; may hold no Sources; replaced by [Executor.SetVault]
	Adapters   map[string]Adapter    // by adapter name; a Tool whose adapter is missing is not served
	Workspace  WorkspaceAccess       // ceiling on the built-in workspace Tools; default WorkspaceRead
	Now        func() time.Time      // default time.Now
	Logger     *slog.Logger          // default slog.Default()
	// CallLimit bounds one call whose Tool's fence names no timeout; default
	// DefaultCallLimit. A call past its limit plus CallGrace is abandoned (see [Executor.Run]).
	CallLimit time.Duration
	// CallGrace is how long past its limit an adapter may take to give up on its own;
	// default DefaultCallGrace.
	CallGrace time.Duration
}

// Limits of one call, as the executor enforces them around every adapter.
const (
	DefaultCallLimit = 30 * time.Second
	DefaultCallGrace = 5 * time.Second
)

// Executor turns served work rows into adapter calls: a row is run only
// when its grant agrees with everything in its [Config]. It is safe for concurrent use.
type Executor struct {
	cfg      Config
	vault    atomic.Pointer[Vault]    // the vault in use; SetVault replaces it
	manifest atomic.Pointer[Manifest] // the manifest in use; SetManifest replaces it
	// manifestProblem is why the manifest file's last edit was not loaded; nil when the
	// file in use is the file on disk.
	manifestProblem atomic.Pointer[string]
	adapters        map[string]string // adapter name → its [AdapterDigest], computed once in NewExecutor
}

// NewExecutor returns an Executor, or an error naming a missing required field.
func NewExecutor(cfg Config) (*Executor, error) {
	switch {
	case cfg.Project == "" || cfg.Connection == "":
		return nil, fmt.Errorf("new executor: project and connection are required")
	case len(cfg.Key) == 0:
		return nil, fmt.Errorf("new executor: the connection key is required")
	case cfg.Manifest == nil || cfg.Vault == nil:
		return nil, fmt.Errorf("new executor: a manifest and a vault are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workspace == "" {
		cfg.Workspace = WorkspaceRead
	}
	if _, err := ParseWorkspaceAccess(string(cfg.Workspace)); err != nil {
		return nil, fmt.Errorf("new executor: %w", err)
	}
	if cfg.CallLimit <= 0 {
		cfg.CallLimit = DefaultCallLimit
	}
	if cfg.CallGrace <= 0 {
		cfg.CallGrace = DefaultCallGrace
	}
	e := &Executor{cfg: cfg, adapters: map[string]string{}}
	for name, a := range cfg.Adapters {
		d, err := AdapterDigest(name, a)
		if err != nil {
			return nil, fmt.Errorf("new executor: %w", err)
		}
		e.adapters[name] = d
	}
	e.vault.Store(cfg.Vault)
	e.manifest.Store(cfg.Manifest)
	return e, nil
}

// SetVault makes v the vault every later Prepare reads; rows prepared before keep the
// Source they selected. v must not be nil.
func (e *Executor) SetVault(v *Vault) {
	if v != nil {
		e.vault.Store(v)
	}
}

// Job is a served row whose grant verified: it may be claimed, then run once. A Job
// whose [Job.Refusal] is set is claimed and reported refused without running, so the
// Operation carries the reason instead of waiting silently.
type Job struct {
	Row        contract.WorkRow
	Grant      contract.Grant
	WorkerID   string
	Generation int64
	call       Call
	adapter    Adapter
	refusal    error // a *contract.Error: why this worker will not run the call
}

// Refusal returns why the worker refuses to run j, or nil when it will run it.
func (j *Job) Refusal() error { return j.refusal }

// Descriptors returns the descriptors of every Tool this worker can run, sorted by id,
// for Poll.
func (e *Executor) Descriptors() []contract.ToolDescriptor { return e.descriptorsOf(e.manifest.Load()) }

// descriptorsOf is Descriptors with m the manifest in use.
func (e *Executor) descriptorsOf(m *Manifest) []contract.ToolDescriptor {
	var out []contract.ToolDescriptor
	for _, id := range m.IDs() {
		t, digest, _ := m.Lookup(id)
		_, ok := e.cfg.Adapters[t.Adapter]
		if !ok || !e.cfg.Workspace.Offers(t) {
			continue
		}
		st := t.SourceTypes
		if st == nil {
			st = []string{}
		}
		out = append(out, t.describe(id, digest, e.adapters[t.Adapter], st))
	}
	return out
}

// VaultNames returns the names of the Sources the vault in use holds, sorted: names
// only, never a value, for Poll.
func (e *Executor) VaultNames() []string { return e.vault.Load().Names() }

// AdapterDigest is the digest a grant pins for adapter a registered as name: the sha256
// of JCS {"adapter": name, "version": a's [Versioner] version or "1"}.
func AdapterDigest(name string, a Adapter) (string, error) {
	version := "1"
	if v, ok := a.(Versioner); ok {
		version = v.Version()
	}
	raw, err := json.Marshal(map[string]string{"adapter": name, "version": version})
	if err != nil {
		return "", fmt.Errorf("digest adapter %s: %w", name, err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("digest adapter %s: %w", name, err)
	}
	return grant.Digest(canon), nil
}

// Prepare checks row as served to worker workerID under generation: its target and tool
// spec, the local Tool and its digest, the grant (MAC, then every field against what the
// worker knows), the arguments and the Source. A row whose grant does not verify must be
// neither claimed nor run; the error is a *contract.Error. A row whose grant verifies
// but that this worker will not run (a Tool it lacks or holds at another digest, a Tool
// above its workspace ceiling, a Source missing from its vault, arguments that do not
// fit) is returned as a Job with [Job.Refusal] set: claimed and reported refused, so the
// refusal reaches the Operation with its reason.
func (e *Executor) Prepare(row contract.WorkRow, workerID string, generation int64) (*Job, error) {
	return e.prepare(row, row.Parts(), workerID, generation)
}

// prepare is Prepare of row whose target, tool spec and arguments are already decoded
// into parts: a served row's are decoded from its answer's parse ([contract.ServedWork]).
func (e *Executor) prepare(row contract.WorkRow, parts contract.RowParts, workerID string, generation int64) (*Job, error) {
	target := parts.Target
	if parts.TargetErr != nil {
		return nil, contract.Errorf(contract.CodeWorkRow, "work %s has a malformed target; the authority must serve {source, sourceType, sourceDigest}.", row.ID)
	}
	spec := parts.ToolSpec
	if parts.ToolSpecErr != nil {
		return nil, contract.Errorf(contract.CodeWorkRow, "work %s has a malformed toolSpec; the authority must serve {tool, digest, kind}.", row.ID)
	}
	if row.Project != e.cfg.Project {
		return nil, contract.Errorf(contract.CodeWorkRow, "work %s is for project %s, but this worker serves %s; check the worker's Connection.", row.ID, row.Project, e.cfg.Project)
	}
	reqDigest, err := grant.RequestDigest(row.Args, row.Target, row.ToolSpec)
	if err != nil {
		return nil, err
	}
	want := contract.Grant{Project: e.cfg.Project, Invocation: row.Invocation, Action: row.Action, Tool: spec.Tool,
		Source: target.Source, SourceDigest: target.SourceDigest, Connection: e.cfg.Connection,
		WorkerID: workerID, Generation: generation, RequestDigest: reqDigest}
	t, digest, ok := e.manifest.Load().Lookup(spec.Tool)
	a, has := e.cfg.Adapters[t.Adapter]
	var refusal error
	switch {
	case !ok || !has:
		refusal = contract.Errorf(contract.CodeToolUnknown, "work %s names tool %s, which this worker does not run; add it to the manifest or lock another Tool.", row.ID, spec.Tool)
	case spec.Digest != digest || spec.Kind != t.Kind:
		refusal = contract.Errorf(contract.CodeToolDigest, "work %s pins another definition of tool %s than this worker's manifest; lock the Tool again with its current digest.", row.ID, spec.Tool)
	default:
		want.ToolDigest, want.AdapterDigest = digest, e.adapters[t.Adapter]
	}
	if refusal != nil {
		// The worker cannot name the digests it would pin; the grant's own are checked
		// against its MAC, so only authentic work is claimed to be refused.
		signed, err := grant.Decode(row.Grant)
		if err != nil {
			return nil, refusal
		}
		want.ToolDigest, want.AdapterDigest = signed.ToolDigest, signed.AdapterDigest
	}
	g, err := grant.Verify(e.cfg.Key, row.Grant, want, e.cfg.Now())
	switch {
	case err != nil && refusal != nil:
		return nil, refusal
	case err != nil:
		return nil, fmt.Errorf("work %s: %w", row.ID, err)
	}
	job := &Job{Row: row, Grant: g, WorkerID: workerID, Generation: generation, refusal: refusal}
	if refusal != nil {
		return job, nil
	}
	if !e.cfg.Workspace.Offers(t) {
		job.refusal = contract.Errorf(contract.CodeWorkspaceCeiling, "tool %s is above this worker's workspace ceiling (%s); start the worker with --workspace-tools read-write to let it write.", spec.Tool, e.cfg.Workspace)
		return job, nil
	}
	args := parts.Args
	if parts.ArgsErr != nil || args == nil {
		job.refusal = contract.Errorf(contract.CodeToolArgs, "work %s has args that are not one JSON object of scalars; the Action's params must be strings, numbers or booleans.", row.ID)
		return job, nil
	}
	src, rest, err := SelectSource(spec.Tool, t, args, target, e.vault.Load())
	if err == nil {
		err = t.CheckArgs(spec.Tool, rest)
	}
	if err == nil && g.PathCheck != "" {
		err = checkDelegatedPath(src, args, g.PathCheck)
	}
	if err != nil {
		job.refusal = err
		return job, nil
	}
	job.call = Call{Tool: spec.Tool, Def: t, Source: src, Args: rest, Invocation: row.Invocation}
	job.adapter = a
	return job, nil
}

// Run executes a claimed job once and returns its report. It never retries: an adapter
// that cannot tell whether its effect happened reports the effect unknown. A job with a
// [Job.Refusal] is reported refused without running.
//
// Every call runs under a deadline: its Tool's fence.timeoutMs, else the CallLimit. An
// adapter still running CallGrace past it (stuck in a system call that ignores its
// context) is abandoned: Run reports a read refused and anything else unknown, and
// returns, so one stuck call never stalls the Connection. The abandoned goroutine ends
// when its call does.
func (e *Executor) Run(ctx context.Context, j *Job) contract.ReportRequest {
	if j.refusal != nil {
		out, err := Refuse(j.refusal)
		e.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "work refused", slog.String(logWork, j.Row.ID),
			slog.String(logCode, string(out.Code)), slog.Any(logErr, err))
		return e.report(j, out)
	}
	out, err := e.execute(ctx, j)
	if err != nil {
		e.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "tool call failed", slog.String(logWork, j.Row.ID),
			slog.String(logTool, string(j.call.Tool)), slog.String(logStatus, string(out.Status)), slog.Any(logErr, err))
	}
	return e.report(j, out)
}

// execute runs j's adapter under the call's deadline, abandoning it past the grace.
func (e *Executor) execute(ctx context.Context, j *Job) (Outcome, error) {
	limit := e.cfg.CallLimit
	if f := j.call.Def.Fence; f != nil && f.TimeoutMs > 0 {
		limit = time.Duration(f.TimeoutMs) * time.Millisecond
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned adapter's send never blocks
	go func() {
		out, err := j.adapter.Execute(cctx, j.call)
		done <- result{out, err}
	}()
	grace := time.NewTimer(limit + e.cfg.CallGrace)
	defer grace.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-grace.C:
	}
	cause := &contract.Error{Code: contract.CodeToolTimeout,
		Teaching: fmt.Sprintf("tool %s did not return within %s and was abandoned; raise fence.timeoutMs or check what it reads.", j.call.Tool, limit),
		Err:      fmt.Errorf("adapter %s ignored its deadline", j.call.Def.Adapter)}
	if j.call.Def.Kind == contract.ToolKindRead {
		return Refuse(cause)
	}
	return Unknown(cause)
}

// report turns out into j's report.
func (e *Executor) report(j *Job, out Outcome) contract.ReportRequest {
	r := contract.ReportRequest{ID: j.Row.ID, WorkerID: j.WorkerID, Generation: j.Generation, Grant: j.Row.Grant}
	switch out.Status {
	case StatusOK:
		r.OK = true
		rows := out.Rows
		if rows == nil {
			rows = []contract.Args{}
		}
		r.Result = &contract.WorkResult{Rows: rows}
	case StatusRefused:
		r.Code, r.Reason = out.Code, out.Reason
	default:
		// Anything but an explicit ok or refusal is reported unknown: never guessed.
		r.EffectUnknown = true
		r.Code, r.Reason = out.Code, out.Reason
		if r.Code == "" {
			r.Code, r.Reason = contract.CodeEffectUnknown, "the tool ended without saying what it did; a person must check the target."
		}
	}
	return r
}

// Claim returns the Claim the worker sends before it runs j.
func (j *Job) Claim() contract.ClaimRequest {
	return contract.ClaimRequest{ID: j.Row.ID, WorkerID: j.WorkerID, Generation: j.Generation, Grant: j.Row.Grant}
}
