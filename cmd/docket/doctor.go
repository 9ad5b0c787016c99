package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// doctorCmd checks the local setup: the data dir and its modes, the server and the
// credential. --wait waits for a starting docket serve.
type doctorCmd struct {
	Output     string        `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	Wait       time.Duration `help:"Wait this long for docket serve to answer (e.g. 10s)." default:"0s"`
	Project    string        `help:"Project whose workers to check." default:"default" env:"DOCKET_PROJECT"`
	Vault      string        `help:"The worker's Source vault: check that every Source bound to its Connection is in it (run on the worker's machine; the authority never sees a vault)." type:"path"`
	Connection string        `help:"With --vault: the Connection the vault serves (default: the only one, or each in turn)."`
	Manifest   string        `help:"The worker's tool manifest: check that it loads as the worker loads it (default: the data dir's tools.json, when there is one)." type:"path"`
}

func (c *doctorCmd) Help() string {
	return `Checks the data dir and its modes, that docket serve answers, the saved credential, and each
worker: whether its Connection's lease is held (a worker polls now), expired (it stopped) or
never acquired, and whether work waits for a worker that is not there. The authority never
sees a worker's vault, so whether every bound Source is in it can only be checked where the
vault is: run doctor on the worker's machine with --vault FILE.

Each enabled Agent's runtime is checked too, and each task that would otherwise go silent
is named: a run waiting on a model (a failure once stuck past its deadline), a task waiting
on a budget without room (the budget, its limit and spend, and how a member raises it) and
a cancel its runtime has not taken yet (who asked, since when).

Exit status 1 when a check fails; a warning ("warn") does not fail.

Examples:
  docket doctor
  docket doctor --wait 10s
  docket doctor --vault vault.json --connection laptop     on the worker's machine
  docket doctor --manifest tools.json                      does the worker's manifest load?`
}

// check is one line of the doctor's report. A warning is OK with Warn set.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Warn   bool   `json:"warn,omitempty"`
	Detail string `json:"detail"`
}

func (c *doctorCmd) Run(ctx context.Context, e *env) error {
	var checks []check
	add := func(name string, ok bool, format string, args ...any) {
		checks = append(checks, check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil {
		add("data dir", false, "%s: %v; run docket init", dir, err)
	} else {
		add("data dir", fi.Mode().Perm()&0o077 == 0, "%s mode %v (want 0700)", dir, fi.Mode().Perm())
	}
	for _, name := range []string{keyFile, tokenFile} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err != nil {
			add(name, false, "%s: missing; run docket init", p)
		} else {
			add(name, fi.Mode().Perm()&0o077 == 0, "%s mode %v (want 0600)", p, fi.Mode().Perm())
		}
	}
	checks = append(checks, c.manifestCheck(dir)...)
	within := max(c.Wait, time.Second)
	h, base, err := waitHealthy(ctx, e, dir, within)
	if err != nil {
		add("server", false, "%v", err)
	} else {
		add("server", h.Store == "ok", "%s, version %s, store %s", apiclient.Origin(base), h.Version, h.Store)
		if cl, err := newClient(e); err != nil {
			add("credential", false, "%v", err)
		} else {
			var who contract.Whoami
			if err := cl.do(ctx, http.MethodGet, "/api/v1/whoami", nil, &who); err != nil {
				add("credential", false, "%v", err)
			} else {
				add("credential", true, "%s %s (%s), projects %v", who.Kind, who.Name, who.ID, who.Projects)
				checks = append(checks, c.workers(ctx, cl)...)
				if who.Kind == contract.PrincipalMember {
					ok, detail := dispatchCheck(ctx, cl, who.Projects)
					add("dispatch", ok, "%s", detail)
					checks = append(checks, runtimeChecks(ctx, cl, c.Project)...)
					checks = append(checks, taskWaitChecks(ctx, cl, c.Project)...)
				}
			}
		}
	}
	failed := 0
	for _, ch := range checks {
		if !ch.OK {
			failed++
		}
	}
	if c.Output == "json" {
		if err := printJSON(e.Stdout, checks); err != nil {
			return err
		}
	} else {
		for _, ch := range checks {
			mark := "ok  "
			switch {
			case !ch.OK:
				mark = "FAIL"
			case ch.Warn:
				mark = "warn"
			}
			fmt.Fprintf(e.Stdout, "%s %-10s %s\n", mark, ch.Name, ch.Detail)
		}
	}
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("doctor: %d check(s) failed", failed)}
	}
	return nil
}

// runtimeChecks is one check per enabled Agent profile of project: whether the runtime
// docket start runs for it is running, and, when it is not, why.
func runtimeChecks(ctx context.Context, cl *client, project string) []check {
	ps, err := cl.api.Profiles(ctx, project)
	if err = credential(err); err != nil {
		return []check{{Name: "runtimes", Detail: fmt.Sprintf("project %s: %v", project, err)}}
	}
	var out []check
	var failed map[contract.AgentID]contract.Task
	for _, p := range ps {
		if !p.Enabled {
			continue
		}
		ch := check{Name: "runtime", OK: p.Runtime != nil && p.Runtime.State == contract.RuntimeRunning,
			Detail: fmt.Sprintf("agent %s: %s", p.AgentName, runtimeText(p.Runtime))}
		if p.Runtime != nil && p.Runtime.State == contract.RuntimeStopped {
			ch.OK, ch.Warn = true, true // docket start is not running: nothing is wrong with the runtime
		}
		out = append(out, ch)
		if failed == nil {
			if failed, err = modelFailures(ctx, cl, project); err != nil {
				return append(out, check{Name: "tasks", Detail: fmt.Sprintf("project %s: %v", project, err)})
			}
		}
		// A runtime that runs is not a model that answers: its newest task says.
		if t, ok := failed[p.Agent]; ok {
			out = append(out, check{Name: "model", Detail: fmt.Sprintf("agent %s: its last task %s failed: %s: %s; fix the model server or the profile (docket agent profile set %s …, which checks the model before saving)",
				p.AgentName, t.ID, t.Result.ErrorCode, t.Result.Teaching, p.AgentName)})
		}
	}
	return out
}

// modelFailures maps each Agent of project whose newest finished task failed on its model
// (contract.ModelFailure) to that task.
func modelFailures(ctx context.Context, cl *client, project string) (map[contract.AgentID]contract.Task, error) {
	ts, err := cl.api.Tasks(ctx, project, "")
	if err = credential(err); err != nil {
		return nil, err
	}
	newest := map[contract.AgentID]contract.Task{}
	for _, t := range ts { // oldest first: the last finished one stays
		if t.State.Finished() {
			newest[t.Agent] = t
		}
	}
	out := map[contract.AgentID]contract.Task{}
	for id, t := range newest {
		if t.State == contract.TaskFailed && t.Result != nil && contract.ModelFailure(t.Result.ErrorCode) {
			out[id] = t
		}
	}
	return out, nil
}

// taskWaitChecks is one check per wait of project's tasks that would otherwise go silent:
// a run waiting on a model (a warning while it waits within its deadline, a failure once
// it is stuck past it), a task waiting on a budget without room and a cancel its runtime
// has not taken yet (warnings: a member acts, or the runtime soon does).
func taskWaitChecks(ctx context.Context, cl *client, project string) []check {
	ws, err := waitingTasks(ctx, cl, project, "", time.Now())
	if err != nil {
		return []check{{Name: "tasks", Detail: fmt.Sprintf("project %s: %v", project, err)}}
	}
	var out []check
	for _, w := range ws {
		out = append(out, check{Name: "task", OK: !w.stuck, Warn: !w.stuck,
			Detail: fmt.Sprintf("%s of agent %s: %s", w.task.ID, w.task.Agent, w.text)})
	}
	return out
}

// dispatchCheck says whether any executed Action's work waits with a reason no worker
// will serve it: "1 operation cannot be dispatched: <reason>".
func dispatchCheck(ctx context.Context, cl *client, projects []contract.ProjectID) (bool, string) {
	var stuck []string
	for _, p := range projects {
		ops, err := cl.api.Operations(ctx, string(p), "", true)
		if err = credential(err); err != nil {
			return false, fmt.Sprintf("project %s: %v", p, err)
		}
		for _, op := range ops {
			if op.Waiting == contract.WaitDispatch && op.ReasonCode != "" {
				stuck = append(stuck, fmt.Sprintf("%s %s (%s): %s", op.Work, op.Label, op.ReasonCode, op.Reason))
			}
		}
	}
	switch len(stuck) {
	case 0:
		return true, "every queued operation can be dispatched"
	case 1:
		return false, "1 operation cannot be dispatched: " + stuck[0]
	}
	return false, fmt.Sprintf("%d operations cannot be dispatched: %s", len(stuck), strings.Join(stuck, "; "))
}
