package schedule

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	core "github.com/docketrun/docket/internal/schedule"
	"github.com/docketrun/docket/internal/store"
)

// sweepBatch bounds the schedules, and the open fires, one sweep reads.
const sweepBatch = 100

// retryAfter is how soon the loop sweeps again after a sweep that failed.
const retryAfter = time.Second

// system is the actor of what the sweep records on its own: a missed fire.
const system = contract.Principal("system")

// Wake makes a running [Keeper.Run] sweep now rather than at its next due time.
func (k *Keeper) Wake() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// Run sweeps ([Keeper.Sweep]) until ctx ends, sleeping until the earliest next due time
// of any schedule, at most the poll interval, or until [Keeper.Wake]. Unlike the fixed
// tickers of the lease and request sweeps, it wakes at each due time, so a fire is made
// at its time and not up to a tick later. Its clock is the Keeper's: under testing/synctest
// the timers are the bubble's.
func (k *Keeper) Run(ctx context.Context) error {
	for {
		wait := k.poll
		if _, err := k.Sweep(ctx); err != nil && ctx.Err() == nil {
			// Sooner than the poll, so that the other schedules' fires are not held up.
			k.log.WarnContext(ctx, "schedule sweep failed; retrying soon", logErr, err)
			wait = min(wait, retryAfter)
		} else if due, err := k.store.DueSchedules(ctx, k.nowUTC().Add(k.poll), 1); err == nil && len(due) == 1 {
			wait = min(wait, max(due[0].NextDue.Sub(k.nowUTC()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		case <-k.wake:
			t.Stop()
		}
	}
}

// Sweep makes the fires due at the Keeper's now, sends again the posts of fires left
// posting, and records the outcome of fired tasks that settled. It returns how many fires
// it made. A schedule fires at most once a sweep; the fires whose time passed while no
// sweep ran follow the schedule's policy (see [core.Schedule.Plan]).
func (k *Keeper) Sweep(ctx context.Context) (int, error) {
	now := k.nowUTC()
	due, err := k.store.DueSchedules(ctx, now, sweepBatch)
	if err != nil {
		return 0, fmt.Errorf("sweep schedules: %w", err)
	}
	var errs []error
	fired := 0
	for _, s := range due {
		ok, err := k.fireDue(ctx, s, now)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			fired++
		}
	}
	if err := k.settleOpen(ctx, now); err != nil {
		errs = append(errs, err)
	}
	if fired > 0 {
		k.log.InfoContext(ctx, "schedules fired", logFired, fired)
	}
	return fired, errors.Join(errs...)
}

// fireDue moves s's next due time past now, recording what its policy makes of the due
// times up to now, and posts the fire's task when the plan has one.
func (k *Keeper) fireDue(ctx context.Context, s store.Schedule, now time.Time) (bool, error) {
	cs, err := parse(s)
	if err != nil {
		return false, err
	}
	plan := cs.Plan(s.NextDue, now, core.Policy(s.Missed), k.grace)
	if plan.Next.IsZero() {
		// A cron expression with no fire within the library's five-year horizon: the
		// schedule waits that long rather than stay due at every sweep.
		plan.Next = now.AddDate(5, 0, 0)
	}
	moved := s
	moved.NextDue = plan.Next
	project := contract.ProjectID(s.Project)
	var f store.ScheduleFire
	if !plan.Fire.IsZero() {
		kind := contract.FireDue
		if plan.Late {
			kind = contract.FireCatchUp
		}
		f = store.ScheduleFire{Schedule: s.ID, Due: plan.Fire, Project: s.Project, Kind: kind, FiredAt: now, Outcome: contract.FirePosting}
	}
	err = k.store.Update(ctx, func(tx store.Tx) error {
		if err := tx.UpdateSchedule(ctx, moved, s.NextDue); err != nil {
			return err
		}
		if plan.Missed.Count > 0 {
			m := event.ScheduleMissedData{Schedule: contract.ScheduleID(s.ID), Policy: contract.MissedPolicy(s.Missed), Count: plan.Missed.Count,
				AtLeast: plan.Missed.AtLeast, First: plan.Missed.First.UTC(), Last: plan.Missed.Last.UTC(), NextFire: plan.Next}
			if !plan.Fire.IsZero() {
				d := plan.Fire.UTC()
				m.RunAt = &d
			}
			if err := eventlog.Append(ctx, tx, project, system, now, m); err != nil {
				return err
			}
		}
		if f.Schedule == "" {
			return nil
		}
		return tx.RecordFire(ctx, f)
	})
	if errors.Is(err, store.ErrConflict) {
		return false, nil // another instance moved it first: its fire, not ours
	}
	if err != nil {
		return false, fmt.Errorf("fire schedule %s: %w", s.ID, err)
	}
	if f.Schedule == "" {
		return false, nil
	}
	_, err = k.post(ctx, s, f)
	return true, err
}

// RunNow fires a schedule of project at once, paused or not, and returns the fire with
// the task it created (or why none was). Its due time is now; the schedule's next due
// time stays.
func (k *Keeper) RunNow(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.ScheduleFire, error) {
	s, err := k.find(ctx, c, project, id)
	if err != nil {
		return contract.ScheduleFire{}, err
	}
	now := k.nowUTC()
	due := now
	if due.Nanosecond() == 0 {
		// Scheduled due times are whole seconds; a run-now's never is, so the two never
		// share a fire's key.
		due = due.Add(time.Nanosecond)
	}
	f := store.ScheduleFire{Schedule: s.ID, Due: due, Project: s.Project, Kind: contract.FireRunNow, FiredAt: now, Outcome: contract.FirePosting}
	if err := k.store.Update(ctx, func(tx store.Tx) error { return tx.RecordFire(ctx, f) }); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return contract.ScheduleFire{}, contract.Errorf(contract.CodeAlreadyExists, "schedule %s fired at this very instant already; send run-now again", s.ID)
		}
		return contract.ScheduleFire{}, fmt.Errorf("run schedule %s now: %w", s.ID, eventlog.Refuse(err, "schedule "+s.ID))
	}
	return k.post(ctx, s, f)
}

// clientKey is the idempotency key of a fire's task: its schedule and due time, so a
// post sent again finds the task the first one made.
func clientKey(f store.ScheduleFire) string {
	return f.Schedule + ":" + strconv.FormatInt(f.Due.UnixNano(), 10)
}

// post posts the task of fire f of s, as the member who made s, and records the fire
// posted with its task, or refused with why. A failure that is not a refusal leaves the
// fire posting; a later sweep sends the same post again.
func (k *Keeper) post(ctx context.Context, s store.Schedule, f store.ScheduleFire) (contract.ScheduleFire, error) {
	req, err := decodeTask(s.Task)
	if err != nil {
		return contract.ScheduleFire{}, fmt.Errorf("post the task of schedule %s: %w", s.ID, err)
	}
	req.Agent, req.ClientKey = s.Agent, clientKey(f)
	c, err := k.members.MemberCaller(ctx, contract.MemberID(s.CreatedBy))
	var t contract.Task
	if err == nil {
		t, err = k.tasks.PostTask(ctx, c, contract.ProjectID(s.Project), req)
	}
	ce, refused := errors.AsType[*contract.Error](err)
	switch {
	case err == nil:
		f.Task, f.Outcome = string(t.ID), contract.FirePosted
	case refused && ce.Code != contract.CodeUnavailable && ce.Code != contract.CodeInternal:
		f.Outcome, f.ErrorCode, f.Teaching = contract.FireRefused, string(ce.Code), ce.Teaching
	default:
		return contract.ScheduleFire{}, fmt.Errorf("post the task of schedule %s due %s: %w", s.ID, f.Due, err)
	}
	if err := k.settle(ctx, s, f, fired, contract.NewPrincipal(contract.PrincipalMember, s.CreatedBy)); err != nil {
		return contract.ScheduleFire{}, err
	}
	return fireWire(f, s.Agent), nil
}

// fired and settled are the payloads of a fire posted and of its outcome.
func fired(f contract.ScheduleFire) event.Payload { return event.ScheduleFiredData{ScheduleFire: f} }
func settled(f contract.ScheduleFire) event.Payload {
	return event.ScheduleOutcomeData{ScheduleFire: f}
}

// settle stores f's outcome with its event, whose id is the fire's and the type's: a
// second instance settling the same fire the same way is refused by the log and changes
// nothing.
func (k *Keeper) settle(ctx context.Context, s store.Schedule, f store.ScheduleFire, wrap func(contract.ScheduleFire) event.Payload, actor contract.Principal) error {
	p := wrap(fireWire(f, s.Agent))
	typ := p.EventType()
	id := typ + "-" + clientKey(f)
	err := k.store.Update(ctx, func(tx store.Tx) error {
		if err := tx.SettleFire(ctx, f); err != nil {
			return err
		}
		return eventlog.AppendKeyed(ctx, tx, contract.ProjectID(f.Project), id, actor, k.nowUTC(), p)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record %s of schedule %s due %s: %w", typ, f.Schedule, f.Due, err)
	}
	return nil
}

// settleOpen sends again the posts of fires left posting past the repost bound, and
// records the outcome of posted fires whose task has a final state.
func (k *Keeper) settleOpen(ctx context.Context, now time.Time) error {
	open, err := k.store.OpenScheduleFires(ctx, sweepBatch)
	if err != nil {
		return fmt.Errorf("read open schedule fires: %w", err)
	}
	var errs []error
	for _, f := range open {
		s, err := k.store.Schedule(ctx, f.Schedule)
		if err != nil {
			errs = append(errs, fmt.Errorf("read schedule %s: %w", f.Schedule, err))
			continue
		}
		switch f.Outcome {
		case contract.FirePosting:
			if now.Sub(f.FiredAt) >= k.repost {
				if _, err := k.post(ctx, s, f); err != nil {
					errs = append(errs, err)
				}
			}
		case contract.FirePosted:
			if err := k.outcome(ctx, s, f); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// outcome records the final state of a posted fire's task once it has one.
func (k *Keeper) outcome(ctx context.Context, s store.Schedule, f store.ScheduleFire) error {
	c, err := k.members.MemberCaller(ctx, contract.MemberID(s.CreatedBy))
	if err != nil {
		return k.orphan(ctx, s, f, err)
	}
	t, err := k.reader.Task(ctx, c, contract.ProjectID(s.Project), contract.TaskID(f.Task))
	if err != nil {
		return k.orphan(ctx, s, f, err)
	}
	if !t.State.Finished() {
		return nil
	}
	f.Outcome = string(t.State)
	if t.Result != nil {
		f.ErrorCode, f.Teaching = string(t.Result.ErrorCode), t.Result.Teaching
	}
	return k.settle(ctx, s, f, settled, system)
}

// orphan closes a posted fire whose task can no longer be read by its schedule's member
// (the member was revoked): its outcome says so, and the sweep stops asking.
func (k *Keeper) orphan(ctx context.Context, s store.Schedule, f store.ScheduleFire, err error) error {
	ce, refused := errors.AsType[*contract.Error](err)
	if !refused || ce.Code == contract.CodeUnavailable || ce.Code == contract.CodeInternal {
		return fmt.Errorf("read the task of schedule %s due %s: %w", f.Schedule, f.Due, err)
	}
	f.Outcome, f.ErrorCode, f.Teaching = contract.FireUnknown, string(ce.Code), ce.Teaching
	return k.settle(ctx, s, f, settled, system)
}

var _ Members = (*identity.Directory)(nil)
