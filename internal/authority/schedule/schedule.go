// Package schedule keeps members' schedules of tasks for Agents: their records and each
// fire's in the store, their acts and fires in the project's log, and the sweep that fires
// them on the authority's clock and posts each fire's task through the facade.
package schedule

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	core "github.com/docketrun/docket/internal/schedule"
	"github.com/docketrun/docket/internal/store"
)

// Defaults for [Config].
const (
	// DefaultGrace is how late a fire may come and still be on time: a sweep later than
	// that after a due time (the authority was down) makes it missed, and the schedule's
	// policy says what follows.
	DefaultGrace = time.Minute
	// DefaultPoll is the longest the sweep sleeps when no schedule is due sooner: how soon
	// it sees a schedule another instance created, and a fired task's outcome.
	DefaultPoll = 5 * time.Second
	// DefaultRepost is how long a fire may stay "posting" before a sweep sends its post
	// again (the first sender stopped, or its store call failed); the client key makes the
	// second post find the first one's task.
	DefaultRepost = 10 * time.Second
	// LastFires is how many fires a schedule's show lists.
	LastFires = 10
)

// Poster posts a task for an Agent; *authority.Authority is one.
type Poster interface {
	PostTask(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.TaskRequest) (contract.Task, error)
}

// TaskReader reads a task, for a fire's outcome; *authority.Authority is one.
type TaskReader interface {
	Task(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error)
}

// Members proves a schedule's creator again at each fire; *identity.Directory is one.
type Members interface {
	MemberCaller(ctx context.Context, id contract.MemberID) (identity.Caller, error)
}

// MaxSchedules is how many schedules, paused or not, one project keeps; a deleted one
// frees its place (docs/security.md, "Bounds").
const MaxSchedules = 100

// Config configures [New]. Store, Tasks, Reader and Members are required.
type Config struct {
	Store   store.Store
	Tasks   Poster
	Reader  TaskReader
	Members Members
	Now     func() time.Time // the authority's clock; default time.Now
	Rand    io.Reader        // default crypto/rand.Reader
	Log     *slog.Logger     // default discards
	Grace   time.Duration    // default DefaultGrace
	Poll    time.Duration    // default DefaultPoll
	Repost  time.Duration    // default DefaultRepost
}

// Keeper keeps the schedules of one store's projects and fires them. It is safe for
// concurrent use; several Keepers over one database (several serves) fire each due time
// once, because a schedule's next due time moves only from the value its writer read.
type Keeper struct {
	store   store.Store
	tasks   Poster
	reader  TaskReader
	members Members
	now     func() time.Time
	rand    io.Reader
	log     *slog.Logger
	grace   time.Duration
	poll    time.Duration
	repost  time.Duration
	wake    chan struct{} // a schedule was created or resumed: the sweep looks again
}

// New returns the Keeper of cfg.
func New(cfg Config) (*Keeper, error) {
	if cfg.Store == nil || cfg.Tasks == nil || cfg.Reader == nil || cfg.Members == nil {
		return nil, errors.New("schedule: config needs a store, a task poster, a task reader and the members")
	}
	k := &Keeper{store: cfg.Store, tasks: cfg.Tasks, reader: cfg.Reader, members: cfg.Members, now: cfg.Now, rand: cfg.Rand,
		log: cfg.Log, grace: cfg.Grace, poll: cfg.Poll, repost: cfg.Repost, wake: make(chan struct{}, 1)}
	if k.now == nil {
		k.now = time.Now
	}
	if k.rand == nil {
		k.rand = rand.Reader
	}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.log = k.log.With(logComponent, "schedule")
	if k.grace <= 0 {
		k.grace = DefaultGrace
	}
	if k.poll <= 0 {
		k.poll = DefaultPoll
	}
	if k.repost <= 0 {
		k.repost = DefaultRepost
	}
	return k, nil
}

// nowUTC is the clock, in UTC, at the precision the event log keeps.
func (k *Keeper) nowUTC() time.Time { return k.now().UTC().Round(0) }

// invalid turns the core's refusal into the code every edge gives, naming the field.
func invalid(err error) error {
	if fe, ok := errors.AsType[*core.FieldError](err); ok {
		return &contract.Error{Code: contract.CodeInvalidSchedule, Teaching: fe.Error() + "; " + hint(fe.Field), Err: err}
	}
	return err
}

func hint(field string) string {
	switch field {
	case "zone":
		return "name an IANA zone (--tz Europe/Berlin), or leave it out for UTC."
	case "every":
		return fmt.Sprintf("give an interval from %s to %s as a Go duration (--every 90s, --every 1h).", core.MinEvery, core.MaxEvery)
	case "missed":
		return "give --missed skip (fires missed while the authority was down are not run) or --missed run_once (they are run once when it is back)."
	}
	return `a cron expression has five fields, minute hour day-of-month month day-of-week, as in "0 9 * * mon-fri", or is @hourly, @daily, @weekly, @monthly or @yearly.`
}

// parse returns the core schedule of a stored one.
func parse(s store.Schedule) (core.Schedule, error) {
	cs, err := core.Parse(core.Spec{Cron: s.Cron, Every: s.Every, Zone: s.TimeZone, Anchor: s.CreatedAt.Truncate(time.Second)})
	if err != nil {
		return core.Schedule{}, fmt.Errorf("parse schedule %s: %w", s.ID, err)
	}
	return cs, nil
}

// Create records a member's schedule for an Agent of project and returns it with its next
// fire. Every part that does not parse is refused invalid_schedule, naming the field.
func (k *Keeper) Create(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.CreateScheduleRequest) (contract.Schedule, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Schedule{}, err
	}
	policy, err := core.ParsePolicy(string(req.Missed))
	if err != nil {
		return contract.Schedule{}, invalid(err)
	}
	var every time.Duration
	if req.Every != "" {
		if every, err = time.ParseDuration(req.Every); err != nil {
			return contract.Schedule{}, invalid(&core.FieldError{Field: "every", Value: req.Every, Reason: "is not a duration"})
		}
	}
	now := k.nowUTC()
	cs, err := core.Parse(core.Spec{Cron: req.Cron, Every: every, Zone: req.TimeZone, Anchor: now.Truncate(time.Second)})
	if err != nil {
		return contract.Schedule{}, invalid(err)
	}
	task := req.Task
	if err := checkTask(task); err != nil {
		return contract.Schedule{}, err
	}
	ag, err := identity.FindAgent(ctx, k.store, project, task.Agent)
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("create a schedule: %w", eventlog.Refuse(err, "agent "+task.Agent))
	}
	if ag.RevokedAt != nil {
		return contract.Schedule{}, contract.Errorf(contract.CodeForbidden, "agent %s is revoked and takes no tasks; schedule a live Agent", ag.Name)
	}
	task.Agent, task.Text = ag.ID, strings.TrimSpace(task.Text)
	id, err := identity.NewID(k.rand, "sch_")
	if err != nil {
		return contract.Schedule{}, err
	}
	body, err := encodeTask(task)
	if err != nil {
		return contract.Schedule{}, err
	}
	zone := cmp.Or(req.TimeZone, "UTC")
	rec := store.Schedule{ID: id, Project: string(project), Agent: ag.ID, Cron: strings.TrimSpace(req.Cron), Every: every, TimeZone: zone,
		Missed: string(policy), Task: body, CreatedBy: c.ID, CreatedAt: now, NextDue: cs.Next(now)}
	out := wire(rec, ag.Name, task)
	err = k.store.Update(ctx, func(tx store.Tx) error {
		// The head's lock keeps two creates of one project from both counting one place.
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return err
		}
		kept, err := tx.Schedules(ctx, string(project))
		if err != nil {
			return err
		}
		if len(kept) >= MaxSchedules {
			return contract.Errorf(contract.CodeScheduleLimit, "project %s keeps %d schedules, the most it may; delete one it no longer needs (docket schedule delete) and create this one again", project, len(kept))
		}
		if err := tx.CreateSchedule(ctx, rec); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.ScheduleCreatedData{Schedule: out})
	})
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("create a schedule: %w", eventlog.Refuse(err, "schedule "+id))
	}
	k.Wake()
	return out, nil
}

// checkTask refuses a task template the fires could never post.
func checkTask(t contract.TaskRequest) error {
	text := strings.TrimSpace(t.Text)
	switch {
	case t.Agent == "":
		return contract.Errorf(contract.CodeInvalidArgument, "name the Agent the schedule's tasks are for (--agent NAME)")
	case text == "" || len(text) > contract.MaxTaskText:
		return contract.Errorf(contract.CodeInvalidArgument, "the schedule's task text is empty or over %d bytes; give the words each fire sends the Agent", contract.MaxTaskText)
	case t.ClientKey != "":
		return contract.Errorf(contract.CodeInvalidArgument, "a schedule's task takes no client key: each fire's is its schedule and due time; leave clientKey out")
	case (t.CaseType == "") != (len(t.BusinessKey) == 0):
		return contract.Errorf(contract.CodeInvalidArgument, "a pin names both a Case Type and its business key; send both, or neither")
	}
	if t.Conversation != "" {
		if _, err := contract.ParseConversationID(t.Conversation); err != nil {
			return err
		}
	}
	return nil
}

// Schedules lists project's schedules, by id, without their fires.
func (k *Keeper) Schedules(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Schedule, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	ss, err := k.store.Schedules(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	names, err := k.agentNames(ctx, project)
	if err != nil {
		return nil, err
	}
	out := make([]contract.Schedule, 0, len(ss))
	for _, s := range ss {
		w, err := k.wireOf(s, names[s.Agent])
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// Schedule returns one schedule of project with its latest fires.
func (k *Keeper) Schedule(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error) {
	s, err := k.find(ctx, c, project, id)
	if err != nil {
		return contract.Schedule{}, err
	}
	names, err := k.agentNames(ctx, project)
	if err != nil {
		return contract.Schedule{}, err
	}
	w, err := k.wireOf(s, names[s.Agent])
	if err != nil {
		return contract.Schedule{}, err
	}
	fs, err := k.store.ScheduleFires(ctx, s.ID, LastFires)
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("read fires of schedule %s: %w", s.ID, err)
	}
	for _, f := range fs {
		w.LastFires = append(w.LastFires, fireWire(f, s.Agent))
	}
	return w, nil
}

// find returns the live schedule id of project for a member of it.
func (k *Keeper) find(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (store.Schedule, error) {
	if err := c.RequireMember(project); err != nil {
		return store.Schedule{}, err
	}
	s, err := k.store.Schedule(ctx, string(id))
	if err == nil && (s.Project != string(project) || s.DeletedAt != nil) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Schedule{}, fmt.Errorf("read schedule %s: %w", id, eventlog.Refuse(err, "schedule "+string(id)))
	}
	return s, nil
}

func (k *Keeper) agentNames(ctx context.Context, project contract.ProjectID) (map[string]string, error) {
	as, err := k.store.Agents(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("list agents of %s: %w", project, err)
	}
	m := make(map[string]string, len(as))
	for _, a := range as {
		m[a.ID] = a.Name
	}
	return m, nil
}

// Pause stops a schedule's fires until it is resumed; run-now still fires it.
func (k *Keeper) Pause(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error) {
	return k.change(ctx, c, project, id, func(d event.ScheduleStep) event.Payload { return event.SchedulePausedData(d) }, func(s *store.Schedule, now time.Time) error {
		if s.PausedAt != nil {
			return contract.Errorf(contract.CodeScheduleState, "schedule %s is paused already; docket schedule resume %s starts it again", s.ID, s.ID)
		}
		s.PausedAt = &now
		return nil
	})
}

// Resume starts a paused schedule again from now: the fires whose time passed while it
// was paused are not missed, they were paused.
func (k *Keeper) Resume(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error) {
	out, err := k.change(ctx, c, project, id, func(d event.ScheduleStep) event.Payload { return event.ScheduleResumedData(d) }, func(s *store.Schedule, now time.Time) error {
		if s.PausedAt == nil {
			return contract.Errorf(contract.CodeScheduleState, "schedule %s is not paused; docket schedule pause %s pauses it", s.ID, s.ID)
		}
		cs, err := parse(*s)
		if err != nil {
			return err
		}
		s.PausedAt, s.NextDue = nil, cs.Next(now)
		return nil
	})
	if err == nil {
		k.Wake()
	}
	return out, err
}

// Delete ends a schedule: it fires no more and leaves the lists; its fires stay on record.
func (k *Keeper) Delete(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error) {
	return k.change(ctx, c, project, id, func(d event.ScheduleStep) event.Payload { return event.ScheduleDeletedData(d) }, func(s *store.Schedule, now time.Time) error {
		s.DeletedAt = &now
		return nil
	})
}

// change applies a member's act to a schedule with its event, made by step. A sweep that
// moved the schedule's next due time in between makes it read the schedule again, once.
func (k *Keeper) change(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID, step func(event.ScheduleStep) event.Payload,
	act func(s *store.Schedule, now time.Time) error) (contract.Schedule, error) {
	for attempt := 0; ; attempt++ {
		s, err := k.find(ctx, c, project, id)
		if err != nil {
			return contract.Schedule{}, err
		}
		was, now := s.NextDue, k.nowUTC()
		if err := act(&s, now); err != nil {
			return contract.Schedule{}, err
		}
		err = k.store.Update(ctx, func(tx store.Tx) error {
			if err := tx.UpdateSchedule(ctx, s, was); err != nil {
				return err
			}
			return eventlog.Append(ctx, tx, project, c.Principal(), now, step(event.ScheduleStep{Schedule: id, NextFire: nextFire(s)}))
		})
		if errors.Is(err, store.ErrConflict) && attempt == 0 {
			continue
		}
		if err != nil {
			return contract.Schedule{}, fmt.Errorf("%s: %w", step(event.ScheduleStep{}).EventType(), eventlog.Refuse(err, "schedule "+string(id)))
		}
		names, err := k.agentNames(ctx, project)
		if err != nil {
			return contract.Schedule{}, err
		}
		return k.wireOf(s, names[s.Agent])
	}
}

func nextFire(s store.Schedule) *time.Time {
	if s.PausedAt != nil || s.DeletedAt != nil {
		return nil
	}
	t := s.NextDue
	return &t
}

func (k *Keeper) wireOf(s store.Schedule, agentName string) (contract.Schedule, error) {
	t, err := decodeTask(s.Task)
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("read schedule %s: %w", s.ID, err)
	}
	return wire(s, agentName, t), nil
}

func wire(s store.Schedule, agentName string, t contract.TaskRequest) contract.Schedule {
	w := contract.Schedule{ID: contract.ScheduleID(s.ID), Project: contract.ProjectID(s.Project), AgentName: agentName,
		Cron: s.Cron, TimeZone: s.TimeZone, Missed: contract.MissedPolicy(s.Missed), Task: t,
		CreatedBy: contract.NewPrincipal(contract.PrincipalMember, s.CreatedBy), CreatedAt: s.CreatedAt,
		State: contract.ScheduleActive, PausedAt: s.PausedAt, NextFire: nextFire(s)}
	if s.Every != 0 {
		w.Every = s.Every.String()
	}
	if s.PausedAt != nil {
		w.State = contract.SchedulePaused
	}
	return w
}

func fireWire(f store.ScheduleFire, agent string) contract.ScheduleFire {
	return contract.ScheduleFire{Schedule: contract.ScheduleID(f.Schedule), Agent: contract.AgentID(agent), Due: f.Due, FiredAt: f.FiredAt, Kind: f.Kind,
		Task: contract.TaskID(f.Task), Outcome: f.Outcome, ErrorCode: contract.Code(f.ErrorCode), Teaching: f.Teaching}
}
