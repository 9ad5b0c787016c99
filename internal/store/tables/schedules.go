package tables

import (
	"context"

	"fmt"
	"time"

	"github.com/docketrun/docket/internal/store"
)

const scheduleColumns = `SELECT id, project, agent, cron, every_ns, time_zone, missed, task, created_by, created_at, paused_at, deleted_at, next_due FROM schedules`

func scanSchedule(r Row) (store.Schedule, error) {
	var s store.Schedule
	var every, created, next int64
	var paused, deleted *int64
	if err := r.Scan(&s.ID, &s.Project, &s.Agent, &s.Cron, &every, &s.TimeZone, &s.Missed, &s.Task, &s.CreatedBy, &created, &paused, &deleted, &next); err != nil {
		return store.Schedule{}, err
	}
	s.Every = time.Duration(every)
	s.CreatedAt, s.NextDue = fromNanos(created), fromNanos(next)
	s.PausedAt, s.DeletedAt = fromNullNanos(paused), fromNullNanos(deleted)
	return s, nil
}

const fireColumns = `SELECT schedule, due_at, project, kind, fired_at, task, outcome, error_code, teaching FROM schedule_fires`

func scanFire(r Row) (store.ScheduleFire, error) {
	var f store.ScheduleFire
	var due, fired int64
	if err := r.Scan(&f.Schedule, &due, &f.Project, &f.Kind, &fired, &f.Task, &f.Outcome, &f.ErrorCode, &f.Teaching); err != nil {
		return store.ScheduleFire{}, err
	}
	f.Due, f.FiredAt = fromNanos(due), fromNanos(fired)
	return f, nil
}

// Schedule implements [store.Reader.Schedule].
func (r Reader) Schedule(ctx context.Context, id string) (store.Schedule, error) {
	s, err := scanSchedule(r.C.QueryRow(ctx, scheduleColumns+` WHERE id = $1`, id))
	if err != nil {
		return store.Schedule{}, fmt.Errorf("read schedule %s: %w", id, err)
	}
	return s, nil
}

// Schedules implements [store.Reader.Schedules].
func (r Reader) Schedules(ctx context.Context, project string) ([]store.Schedule, error) {
	ss, err := list(ctx, r.C, scanSchedule, scheduleColumns+` WHERE project = $1 AND deleted_at IS NULL ORDER BY id`, project)
	if err != nil {
		return nil, fmt.Errorf("list schedules of %s: %w", project, err)
	}
	return ss, nil
}

// DueSchedules implements [store.Reader.DueSchedules].
func (r Reader) DueSchedules(ctx context.Context, before time.Time, limit int) ([]store.Schedule, error) {
	if limit <= 0 {
		limit = defaultPage
	}
	ss, err := list(ctx, r.C, scanSchedule, scheduleColumns+` WHERE paused_at IS NULL AND deleted_at IS NULL AND next_due <= $1
		ORDER BY next_due, id LIMIT $2`, nanos(before), limit)
	if err != nil {
		return nil, fmt.Errorf("list due schedules: %w", err)
	}
	return ss, nil
}

// ScheduleFires implements [store.Reader.ScheduleFires].
func (r Reader) ScheduleFires(ctx context.Context, schedule string, limit int) ([]store.ScheduleFire, error) {
	if limit <= 0 {
		limit = defaultPage
	}
	fs, err := list(ctx, r.C, scanFire, fireColumns+` WHERE schedule = $1 ORDER BY due_at DESC LIMIT $2`, schedule, limit)
	if err != nil {
		return nil, fmt.Errorf("list fires of schedule %s: %w", schedule, err)
	}
	return fs, nil
}

// OpenScheduleFires implements [store.Reader.OpenScheduleFires].
func (r Reader) OpenScheduleFires(ctx context.Context, limit int) ([]store.ScheduleFire, error) {
	if limit <= 0 {
		limit = defaultPage
	}
	fs, err := list(ctx, r.C, scanFire, fireColumns+` WHERE outcome IN ('posting', 'posted') ORDER BY fired_at, schedule, due_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list open schedule fires: %w", err)
	}
	return fs, nil
}

// CreateSchedule implements [store.Tx.CreateSchedule].
func (t *Tx) CreateSchedule(ctx context.Context, s store.Schedule) error {
	if err := required("schedule", "an id", s.ID, "a project", s.Project, "an agent", s.Agent, "a task", string(s.Task),
		"a creator", s.CreatedBy, "a zone", s.TimeZone); err != nil {
		return err
	}
	if (s.Cron == "") == (s.Every == 0) || s.Every < 0 || (s.Missed != "skip" && s.Missed != "run_once") {
		return fmt.Errorf("schedule %s needs a cron expression or a positive interval, not both, and a policy skip or run_once: %w", s.ID, store.ErrInvalid)
	}
	var agentProject string
	if err := t.C.QueryRow(ctx, `SELECT project FROM agents WHERE id = $1`, s.Agent).Scan(&agentProject); err != nil {
		return fmt.Errorf("create schedule %s: read agent %s: %w", s.ID, s.Agent, err)
	}
	if agentProject != s.Project {
		return fmt.Errorf("create schedule %s: agent %s is not of project %s: %w", s.ID, s.Agent, s.Project, store.ErrNotFound)
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO schedules (id, project, agent, cron, every_ns, time_zone, missed, task,
		created_by, created_at, paused_at, deleted_at, next_due)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		s.ID, s.Project, s.Agent, s.Cron, int64(s.Every), s.TimeZone, s.Missed, []byte(s.Task), s.CreatedBy, nanos(s.CreatedAt), nullNanos(s.PausedAt), nullNanos(s.DeletedAt), nanos(s.NextDue)); err != nil {
		return fmt.Errorf("create schedule %s: %w", s.ID, err)
	}
	return nil
}

// UpdateSchedule implements [store.Tx.UpdateSchedule].
func (t *Tx) UpdateSchedule(ctx context.Context, s store.Schedule, was time.Time) error {
	n, err := t.C.Exec(ctx, `UPDATE schedules SET paused_at = $2, deleted_at = $3, next_due = $4 WHERE id = $1 AND next_due = $5`,
		s.ID, nullNanos(s.PausedAt), nullNanos(s.DeletedAt), nanos(s.NextDue), nanos(was))
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", s.ID, err)
	}
	if n == 0 {
		if _, err := t.Reader.Schedule(ctx, s.ID); err != nil {
			return fmt.Errorf("update schedule: %w", err)
		}
		return fmt.Errorf("update schedule %s: its next due time moved from %s: %w", s.ID, was, store.ErrConflict)
	}
	return nil
}

// RecordFire implements [store.Tx.RecordFire].
func (t *Tx) RecordFire(ctx context.Context, f store.ScheduleFire) error {
	if err := required("schedule fire", "a schedule", f.Schedule, "a project", f.Project, "a kind", f.Kind, "an outcome", f.Outcome); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO schedule_fires (schedule, due_at, project, kind, fired_at, task, outcome, error_code, teaching)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		f.Schedule, nanos(f.Due), f.Project, f.Kind, nanos(f.FiredAt), f.Task, f.Outcome, f.ErrorCode, f.Teaching); err != nil {
		return fmt.Errorf("record fire of schedule %s due %s: %w", f.Schedule, f.Due, err)
	}
	return nil
}

// SettleFire implements [store.Tx.SettleFire].
func (t *Tx) SettleFire(ctx context.Context, f store.ScheduleFire) error {
	if err := required("schedule fire", "an outcome", f.Outcome); err != nil {
		return err
	}
	n, err := t.C.Exec(ctx, `UPDATE schedule_fires SET task = $3, outcome = $4, error_code = $5, teaching = $6 WHERE schedule = $1 AND due_at = $2`,
		f.Schedule, nanos(f.Due), f.Task, f.Outcome, f.ErrorCode, f.Teaching)
	if err != nil {
		return fmt.Errorf("settle fire of schedule %s due %s: %w", f.Schedule, f.Due, err)
	}
	if n == 0 {
		return fmt.Errorf("settle fire of schedule %s due %s: %w", f.Schedule, f.Due, store.ErrNotFound)
	}
	return nil
}
