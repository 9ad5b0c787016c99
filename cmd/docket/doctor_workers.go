package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// workers checks each live Connection's lease and, with --vault, that the Sources bound
// to the vault's Connection are all in it.
func (c *doctorCmd) workers(ctx context.Context, cl *client) []check {
	ws, err := cl.api.Workers(ctx, c.Project)
	if err = credential(err); err != nil {
		return []check{{Name: "workers", Detail: err.Error()}}
	}
	ops, err := cl.api.Operations(ctx, c.Project, "", true)
	if err = credential(err); err != nil {
		return []check{{Name: "workers", Detail: err.Error()}}
	}
	// Work waits for a worker when an Operation is not dispatched or at a worker.
	pending := 0
	for _, op := range ops {
		if op.Waiting == contract.WaitDispatch || op.Waiting == contract.WaitWorker {
			pending++
		}
	}
	var out []check
	held := 0
	for _, w := range ws {
		name := "worker " + w.Connection.Name
		switch {
		case w.Lease != contract.LeaseHeld && w.Supervised != nil:
			out = append(out, supervisedCheck(name, w))
		case w.Lease == contract.LeaseHeld:
			held++
			out = append(out, check{Name: name, OK: true, Detail: fmt.Sprintf("%s; %d tool(s), %d source(s)", heldLeases(w.Leases), len(w.Tools), len(w.Sources))})
		case w.Lease == contract.LeaseExpired && w.ExpiresAt == nil:
			out = append(out, check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("the worker of %s released its lease when it stopped; start docket worker with its key, or docket start", w.Connection.Name)})
		case w.Lease == contract.LeaseExpired:
			out = append(out, check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("lease expired at %s: no worker polls for %s; start docket worker with its key",
				w.ExpiresAt.Format(time.RFC3339), w.Connection.Name)})
		default:
			out = append(out, check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("no worker ever polled for %s; start docket worker with its key", w.Connection.Name)})
		}
	}
	if pending > 0 && held == 0 {
		fix := "start docket worker"
		if supervised(ws) {
			fix = "docket start runs the worker; its line above says why it holds none"
		}
		out = append(out, check{Name: "workers", Detail: fmt.Sprintf("%d operation(s) wait for a worker and none holds a lease; %s (docket ops --waiting lists them)", pending, fix)})
	}
	if c.Vault != "" {
		out = append(out, c.vault(ws))
	}
	return out
}

// supervisedCheck is the check of the worker docket start runs for a Connection whose
// lease is not held: a crash loop, or an exit it restarts from, fails with the cause
// docket start read in its log; a worker that runs but has no lease yet, or that docket
// start stopped, is a warning. Nobody is told to start a worker docket start runs.
func supervisedCheck(name string, w contract.WorkerStatus) check {
	st := w.Supervised
	switch st.State {
	case contract.RuntimeCrashLoop:
		return check{Name: name, Detail: fmt.Sprintf("docket start runs the worker of %s, and it is in a crash loop (%d restarts): %s", w.Connection.Name, st.Restarts, st.Reason)}
	case contract.RuntimeRestarting:
		return check{Name: name, Detail: fmt.Sprintf("docket start runs the worker of %s, and it exited (%d restarts); it is restarted after a back-off: %s", w.Connection.Name, st.Restarts, st.Reason)}
	case contract.RuntimeRunning:
		return check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("docket start runs the worker of %s (pid %d), which holds no lease yet; if this stays, its log in the data dir's logs says why", w.Connection.Name, st.Pid)}
	}
	return check{Name: name, OK: true, Warn: true, Detail: fmt.Sprintf("no worker polls for %s: docket start ran its worker and is %s (%s); run docket start again", w.Connection.Name, st.State, st.Reason)}
}

// supervised reports whether docket start reported a worker that is not stopped for any
// of ws: its check names why the worker holds no lease.
func supervised(ws []contract.WorkerStatus) bool {
	for _, w := range ws {
		if w.Supervised != nil && w.Supervised.State != contract.RuntimeStopped {
			return true
		}
	}
	return false
}

// vault checks that every Source bound to the vault's Connection is in the vault with
// the same type.
func (c *doctorCmd) vault(ws []contract.WorkerStatus) check {
	v, err := worker.LoadVault(c.Vault)
	if err != nil {
		return check{Name: "vault", Detail: fmt.Sprintf("%s: %v", c.Vault, err)}
	}
	var conns []contract.WorkerStatus
	for _, w := range ws {
		if c.Connection == "" || w.Connection.Name == c.Connection || string(w.Connection.ID) == c.Connection {
			conns = append(conns, w)
		}
	}
	if len(conns) == 0 {
		return check{Name: "vault", Detail: fmt.Sprintf("project %s has no live Connection %q; docket connection list names them", c.Project, c.Connection)}
	}
	var missing []string
	n := 0
	for _, w := range conns {
		for _, s := range w.Sources {
			n++
			got, ok := v.Source(s.Name)
			switch {
			case !ok:
				missing = append(missing, fmt.Sprintf("%s (%s, bound on %s) is not in the vault", s.Name, s.Type, w.Connection.Name))
			case got.Type != s.Type:
				missing = append(missing, fmt.Sprintf("%s is %s in the vault but bound as %s on %s", s.Name, got.Type, s.Type, w.Connection.Name))
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return check{Name: "vault", Detail: c.Vault + ": " + strings.Join(missing, "; ") + "; add each to the vault, or bind only what it holds"}
	}
	return check{Name: "vault", OK: true, Detail: fmt.Sprintf("%s holds all %d bound source(s)", c.Vault, n)}
}

// heldLeases says which worker instances hold a Connection's leases, one per worker
// process, and until when each.
func heldLeases(ls []contract.WorkerLease) string {
	var held []string
	for _, l := range ls {
		if l.State == contract.LeaseHeld && l.ExpiresAt != nil {
			held = append(held, fmt.Sprintf("%s (generation %d) until %s", l.WorkerID, l.Generation, l.ExpiresAt.Format(time.RFC3339)))
		}
	}
	if len(held) == 1 {
		return "lease held by " + held[0]
	}
	return fmt.Sprintf("%d leases held, by %s", len(held), strings.Join(held, ", "))
}
