package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	Manifest   *Manifest             // required
	Vault      *Vault                // required; may hold no Sources
	Adapters   map[string]Adapter    // by adapter name; a Tool whose adapter is missing is not served
	Now        func() time.Time      // default time.Now
	Logger     *slog.Logger          // default slog.Default()
}

// Executor turns served work rows into adapter calls (DESIGN.md §8.2): a row is run only
// when its grant agrees with everything in its [Config]. It is safe for concurrent use.
type Executor struct {
	cfg Config
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
	return &Executor{cfg: cfg}, nil
}

// Job is a served row that passed every check and may be claimed, then run once.
type Job struct {
	Row        contract.WorkRow
	Grant      contract.Grant
	WorkerID   string
	Generation int64
	call       Call
	adapter    Adapter
}

// Descriptors returns the descriptors of every Tool this worker can run, sorted by id,
// for Poll.
func (e *Executor) Descriptors() []contract.ToolDescriptor {
	var out []contract.ToolDescriptor
	for _, id := range e.cfg.Manifest.IDs() {
		t, digest, _ := e.cfg.Manifest.Lookup(id)
		a, ok := e.cfg.Adapters[t.Adapter]
		if !ok {
			continue
		}
		st := t.SourceTypes
		if st == nil {
			st = []string{}
		}
		out = append(out, contract.ToolDescriptor{Tool: id, Digest: digest, Adapter: t.Adapter,
			AdapterDigest: AdapterDigest(t.Adapter, a), Kind: t.Kind, SourceTypes: st})
	}
	return out
}

// AdapterDigest is the digest a grant pins for adapter a registered as name: the sha256
// of JCS {"adapter": name, "version": a's [Versioner] version or "1"}.
func AdapterDigest(name string, a Adapter) string {
	version := "1"
	if v, ok := a.(Versioner); ok {
		version = v.Version()
	}
	raw, _ := json.Marshal(map[string]string{"adapter": name, "version": version})
	canon, _ := jcs.Transform(raw)
	return grant.Digest(canon)
}

// Prepare checks row as served to worker workerID under generation: its target and tool
// spec, the local Tool and its digest, the grant (MAC, then every field against what the
// worker knows), the arguments and the Source. A row that fails any check must be neither
// claimed nor run; the error is a *contract.Error.
func (e *Executor) Prepare(row contract.WorkRow, workerID string, generation int64) (*Job, error) {
	var target contract.WorkTarget
	if err := contract.DecodeStrict(row.Target, &target); err != nil {
		return nil, contract.Errorf(contract.CodeWorkRow, "work %s has a malformed target; the authority must serve {source, sourceType, sourceDigest}.", row.ID)
	}
	var spec contract.WorkToolSpec
	if err := contract.DecodeStrict(row.ToolSpec, &spec); err != nil {
		return nil, contract.Errorf(contract.CodeWorkRow, "work %s has a malformed toolSpec; the authority must serve {tool, digest, kind}.", row.ID)
	}
	if row.Project != e.cfg.Project {
		return nil, contract.Errorf(contract.CodeWorkRow, "work %s is for project %s, but this worker serves %s; check the worker's Connection.", row.ID, row.Project, e.cfg.Project)
	}
	t, digest, ok := e.cfg.Manifest.Lookup(spec.Tool)
	a, has := e.cfg.Adapters[t.Adapter]
	if !ok || !has {
		return nil, contract.Errorf(contract.CodeToolUnknown, "work %s names tool %s, which this worker does not run; add it to the manifest or lock another Tool.", row.ID, spec.Tool)
	}
	if spec.Digest != digest || spec.Kind != t.Kind {
		return nil, contract.Errorf(contract.CodeToolDigest, "work %s pins another definition of tool %s than this worker's manifest; lock the Tool again with its current digest.", row.ID, spec.Tool)
	}
	reqDigest, err := grant.RequestDigest(row.Args, row.Target, row.ToolSpec)
	if err != nil {
		return nil, err
	}
	want := contract.Grant{Project: e.cfg.Project, Invocation: row.Invocation, Action: row.Action, Tool: spec.Tool,
		ToolDigest: digest, Source: target.Source, SourceDigest: target.SourceDigest, Connection: e.cfg.Connection,
		WorkerID: workerID, Generation: generation, AdapterDigest: AdapterDigest(t.Adapter, a), RequestDigest: reqDigest}
	g, err := grant.Verify(e.cfg.Key, row.Grant, want, e.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("work %s: %w", row.ID, err)
	}
	var args contract.Args
	if err := contract.DecodeStrict(row.Args, &args); err != nil || args == nil {
		return nil, contract.Errorf(contract.CodeToolArgs, "work %s has args that are not one JSON object of scalars; the Action's params must be strings, numbers or booleans.", row.ID)
	}
	src, rest, err := SelectSource(spec.Tool, t, args, target, e.cfg.Vault)
	if err != nil {
		return nil, err
	}
	if err := t.CheckArgs(spec.Tool, rest); err != nil {
		return nil, err
	}
	return &Job{Row: row, Grant: g, WorkerID: workerID, Generation: generation,
		call: Call{Tool: spec.Tool, Def: t, Source: src, Args: rest}, adapter: a}, nil
}

// Run executes a claimed job once and returns its report. It never retries: an adapter
// that cannot tell whether its effect happened reports the effect unknown.
func (e *Executor) Run(ctx context.Context, j *Job) contract.ReportRequest {
	out, err := j.adapter.Execute(ctx, j.call)
	if err != nil {
		e.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "tool call failed", slog.String(logWork, j.Row.ID),
			slog.String(logTool, string(j.call.Tool)), slog.String(logStatus, string(out.Status)), slog.Any(logErr, err))
	}
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
