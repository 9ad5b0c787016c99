// Package profile keeps each Agent's profile and the last reported state of its
// runtime, of the worker docket start runs for a Connection, and the project's
// blueprints of profiles: a projection of agent.profile_set, agent.runtime_reported,
// worker.runtime_reported, blueprint.set and blueprint.removed events, caught up before
// each use, so that several instances over one store agree.
package profile

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Keeper keeps the profiles of every project's Agents: each project's [state], read and
// written through one [eventlog.Driver] (docs/architecture.md, "The project state and
// its driver"). It is safe for concurrent use.
type Keeper struct {
	now func() time.Time
	// log holds each project's state, as a part of a project [eventlog.Log] that other
	// parts may join (the authority's, with the operation ledger): its lock is then the
	// project's one lock, which a member's act holds across its transaction and a read
	// while it catches up, each holding no other lock (docs/architecture.md, "The lock
	// order").
	log *eventlog.Driver[*state]
}

// state is one project's profiles, workers and blueprints: a pure [eventlog.State],
// stepped only by [state.Apply].
type state struct {
	names    map[contract.AgentID]string // every live Agent's name
	profiles map[contract.AgentID]*contract.AgentProfile
	workers  map[contract.ConnectionID]contract.RuntimeStatus // the supervised worker of each Connection, as last reported
	// blueprints are the project's blueprints by name (docs/agents.md, "Blueprints").
	blueprints map[string]*contract.Blueprint
}

// newState returns the state of an empty log.
func newState() *state {
	return &state{names: map[contract.AgentID]string{}, profiles: map[contract.AgentID]*contract.AgentProfile{},
		workers: map[contract.ConnectionID]contract.RuntimeStatus{}, blueprints: map[string]*contract.Blueprint{}}
}

// New returns the Keeper over st, on a project log of its own; now is the clock. A Keeper
// reads what it wrote from the memory of st's commits ([eventlog.Remember]; a no-op on
// the authority's store, which is one already).
func New(st store.Store, now func() time.Time) *Keeper {
	return Join(eventlog.NewLog(eventlog.Remember(st, nil)), now)
}

// Join returns the Keeper as a part of l ([eventlog.Join]): its state of a project is
// under the one lock of the project's log and caught up by its one cursor, beside the
// other parts that joined l.
func Join(l *eventlog.Log, now func() time.Time) *Keeper {
	return &Keeper{now: now, log: eventlog.Join(l, newState)}
}

// Apply steps s by e.
func (s *state) Apply(e store.Event) error {
	switch e.Type {
	case event.AgentCreated:
		var a event.AgentCreatedData
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		s.names[a.ID] = a.Name
	case event.AgentRevoked:
		// A revoked Agent has no runtime to run: its profile goes with it.
		var a event.AgentRevokedData
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		delete(s.names, contract.AgentID(a.ID))
		delete(s.profiles, contract.AgentID(a.ID))
	case event.ProfileSet:
		var d event.ProfileSetData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		p := &contract.AgentProfile{Agent: d.Agent, AgentName: s.names[d.Agent], ProfileSpec: d.ProfileSpec, SetBy: contract.Principal(e.Actor), SetAt: e.At,
			Blueprint: d.Blueprint}
		if old := s.profiles[d.Agent]; old != nil {
			p.Runtime = old.Runtime
		}
		s.profiles[d.Agent] = p
	case event.RuntimeReported:
		var d event.RuntimeReportedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if p := s.profiles[d.Agent]; p != nil {
			st := d.RuntimeStatus
			st.Reported = e.At
			p.Runtime = &st
		}
	case event.WorkerRuntimeReported:
		var d event.WorkerRuntimeReportedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		st := d.RuntimeStatus
		st.Reported = e.At
		s.workers[d.Connection] = st
	case event.BlueprintSet:
		var d event.BlueprintSetData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		s.blueprints[d.Name] = &contract.Blueprint{Name: d.Name, BlueprintSpec: d.BlueprintSpec, Digest: d.Digest,
			SetBy: contract.Principal(e.Actor), SetAt: e.At}
	case event.BlueprintRemoved:
		var d event.BlueprintRemovedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		delete(s.blueprints, d.Name)
	case event.ConnectionRevoked:
		// A revoked Connection has no worker to run.
		var d event.ConnectionRevokedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		delete(s.workers, contract.ConnectionID(d.ID))
	}
	return nil
}

// read runs fn on project's state caught up with the log.
func (k *Keeper) read(ctx context.Context, project contract.ProjectID, fn func(s *state)) error {
	if err := k.log.Read(ctx, project, func(s *state) error { fn(s); return nil }); err != nil {
		return fmt.Errorf("read profiles of %s: %w", project, err)
	}
	return nil
}

// Profile returns agent's profile, for a member; not_found when none was set.
func (k *Keeper) Profile(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID) (contract.AgentProfile, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.AgentProfile{}, err
	}
	var out *contract.AgentProfile
	err := k.read(ctx, project, func(s *state) { out = s.cloneProfile(s.profiles[agent]) })
	if err != nil {
		return contract.AgentProfile{}, err
	}
	if out == nil {
		return contract.AgentProfile{}, contract.Errorf(contract.CodeNotFound,
			"Agent %s has no profile yet; set one with docket agent profile set %s --provider … (or at first use of docket start).", agent, agent)
	}
	return *out, nil
}

// List returns the profiles of project's live Agents, for a member, by Agent name.
func (k *Keeper) List(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.AgentProfile, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	out := []contract.AgentProfile{}
	err := k.read(ctx, project, func(s *state) {
		for _, p := range s.profiles {
			out = append(out, *s.cloneProfile(p))
		}
	})
	slices.SortFunc(out, func(a, b contract.AgentProfile) int { return cmp.Compare(a.AgentName, b.AgentName) })
	return out, err
}

// Set replaces agent's profile with spec, for a member acting itself, once spec is
// valid ([Validate]). A profile made from a blueprint keeps naming it while spec is still
// its copy (the Agent's own key file and enabled switch aside): starting or stopping its
// runtime keeps it a blueprint's Agent.
func (k *Keeper) Set(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, spec contract.ProfileSpec) (contract.AgentProfile, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.AgentProfile{}, err
	}
	if err := Validate(spec); err != nil {
		return contract.AgentProfile{}, err
	}
	return k.act(ctx, project, agent, func(tx store.Tx, s *state, now time.Time) error {
		if _, live := s.names[agent]; !live {
			return contract.Errorf(contract.CodeNotFound, "Agent %s is revoked; a revoked Agent runs no runtime, so it takes no profile.", agent)
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.ProfileSetData{Agent: agent, ProfileSpec: spec, Blueprint: s.stillCopy(agent, spec)})
	})
}

// Report records the state of agent's runtime, for a member acting itself: docket start
// reports each change of the runtimes it supervises. An Agent without a profile has no
// runtime to report.
func (k *Keeper) Report(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, st contract.RuntimeStatus) (contract.AgentProfile, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.AgentProfile{}, err
	}
	if err := validateStatus(st); err != nil {
		return contract.AgentProfile{}, err
	}
	st.Reported = time.Time{}
	return k.act(ctx, project, agent, func(tx store.Tx, s *state, now time.Time) error {
		if s.profiles[agent] == nil {
			return contract.Errorf(contract.CodeNotFound, "Agent %s has no profile, so no runtime to report; set its profile first.", agent)
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.RuntimeReportedData{Agent: agent, RuntimeStatus: st})
	})
}

// ReportWorker records the state of the worker docket start runs for the live Connection
// conn, for a member acting itself; the caller has found conn live.
func (k *Keeper) ReportWorker(ctx context.Context, c identity.Caller, project contract.ProjectID, conn contract.ConnectionID, st contract.RuntimeStatus) (contract.RuntimeStatus, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.RuntimeStatus{}, err
	}
	if err := validateStatus(st); err != nil {
		return contract.RuntimeStatus{}, err
	}
	st.Reported = time.Time{}
	var out contract.RuntimeStatus
	err := k.write(ctx, project, "report the worker of "+string(conn), "connection "+string(conn), func(tx store.Tx, _ *state, now time.Time) error {
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.WorkerRuntimeReportedData{Connection: conn, RuntimeStatus: st})
	}, func(s *state) { out = s.workers[conn] })
	return out, err
}

// Workers returns the last reported state of each supervised worker of project, by
// Connection; the caller has checked who may read the project's workers.
func (k *Keeper) Workers(ctx context.Context, project contract.ProjectID) (map[contract.ConnectionID]contract.RuntimeStatus, error) {
	out := map[contract.ConnectionID]contract.RuntimeStatus{}
	err := k.read(ctx, project, func(s *state) {
		for id, st := range s.workers {
			out[id] = st
		}
	})
	return out, err
}

// act runs a member's act on agent's profile ([Keeper.write]) and returns the profile
// after it.
func (k *Keeper) act(ctx context.Context, project contract.ProjectID, agent contract.AgentID, decide func(tx store.Tx, s *state, now time.Time) error) (contract.AgentProfile, error) {
	var out contract.AgentProfile
	err := k.write(ctx, project, "change the profile of "+string(agent), "agent "+string(agent), decide,
		func(s *state) { out = *s.cloneProfile(s.profiles[agent]) })
	return out, err
}

// write runs a member's act on project's state in the write sequence of its log
// ([eventlog.Held.Update]), then after on the state that applied it, under the same
// lock; a refusal says what the act was doing and names its subject
// ([eventlog.RefuseWrite]).
func (k *Keeper) write(ctx context.Context, project contract.ProjectID, doing, subject string, decide func(tx store.Tx, s *state, now time.Time) error, after func(s *state)) error {
	h := k.log.Lock(project)
	defer h.Unlock()
	now := k.now().UTC().Round(0)
	if err := h.Update(ctx, func(tx store.Tx, s *state) error { return decide(tx, s, now) }); err != nil {
		return eventlog.RefuseWrite(err, doing, subject)
	}
	after(h.State())
	return nil
}

// cloneProfile copies p, with the state of the blueprint it was made from; nil stays nil.
func (s *state) cloneProfile(p *contract.AgentProfile) *contract.AgentProfile {
	out := clone(p)
	if out != nil && out.Blueprint != nil {
		ref := *out.Blueprint
		out.Blueprint, out.BlueprintState = &ref, s.blueprintState(&ref)
	}
	return out
}

// clone copies p, its runtime included; nil stays nil.
func clone(p *contract.AgentProfile) *contract.AgentProfile {
	if p == nil {
		return nil
	}
	out := *p
	out.Allow = cloneAllow(p.Allow)
	if p.Runtime != nil {
		rt := *p.Runtime
		out.Runtime = &rt
	}
	return &out
}

// stillCopy returns the blueprint agent's profile was made from when spec is still that
// copy, its key file and enabled switch aside; nil otherwise.
func (s *state) stillCopy(agent contract.AgentID, spec contract.ProfileSpec) *contract.BlueprintRef {
	old := s.profiles[agent]
	if old == nil || old.Blueprint == nil {
		return nil
	}
	a, b := old.ProfileSpec, spec
	a.KeyFile, a.Enabled, b.KeyFile, b.Enabled = "", false, "", false
	if !reflect.DeepEqual(a, b) {
		return nil
	}
	ref := *old.Blueprint
	return &ref
}
