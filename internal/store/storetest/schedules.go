package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

func testSchedules(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p2", Name: "Two", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.CreateAgent(ctx, store.Agent{ID: "a1", Project: "p1", Name: "calc", Kind: store.AgentKindAgent, TokenDigest: []byte("t1"), CreatedAt: t0}); err != nil {
			return err
		}
		return tx.CreateAgent(ctx, store.Agent{ID: "a2", Project: "p2", Name: "other", Kind: store.AgentKindAgent, TokenDigest: []byte("t2"), CreatedAt: t0})
	})
	hourly := store.Schedule{ID: "sch1", Project: "p1", Agent: "a1", Every: time.Hour, TimeZone: "UTC", Missed: "skip",
		Task: json.RawMessage(`{"text":"tidy up"}`), CreatedBy: "member:m1", CreatedAt: t0, NextDue: t0.Add(time.Hour)}
	daily := store.Schedule{ID: "sch2", Project: "p1", Agent: "a1", Cron: "0 9 * * *", TimeZone: "Europe/Berlin", Missed: "run_once",
		Task: json.RawMessage(`{"text":"report","conversation":"daily"}`), CreatedBy: "member:m1", CreatedAt: t0, NextDue: t0.Add(30 * time.Minute)}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateSchedule(ctx, hourly); err != nil {
			return err
		}
		return tx.CreateSchedule(ctx, daily)
	})
	refused := []struct {
		name string
		s    store.Schedule
		want error
	}{
		{"an id in use", hourly, store.ErrConflict},
		{"an agent of another project", func() store.Schedule { x := hourly; x.ID, x.Agent = "sch3", "a2"; return x }(), store.ErrNotFound},
		{"a missing agent", func() store.Schedule { x := hourly; x.ID, x.Agent = "sch3", "nobody"; return x }(), store.ErrNotFound},
		{"both cron and interval", func() store.Schedule { x := hourly; x.ID, x.Cron = "sch3", "@daily"; return x }(), store.ErrInvalid},
		{"neither cron nor interval", func() store.Schedule { x := hourly; x.ID, x.Every = "sch3", 0; return x }(), store.ErrInvalid},
		{"an unknown policy", func() store.Schedule { x := hourly; x.ID, x.Missed = "sch3", "twice"; return x }(), store.ErrInvalid},
		{"no task", func() store.Schedule { x := hourly; x.ID, x.Task = "sch3", nil; return x }(), store.ErrInvalid},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateSchedule(ctx, tt.s) })
			wantErr(t, "CreateSchedule", err, tt.want)
		})
	}
	got, err := s.Schedule(ctx, "sch2")
	wantErr(t, "Schedule", err, nil)
	if diff := cmp.Diff(daily, got); diff != "" {
		t.Errorf("Schedule (-want +got):\n%s", diff)
	}
	_, err = s.Schedule(ctx, "nope")
	wantErr(t, "Schedule(unknown)", err, store.ErrNotFound)

	due, err := s.DueSchedules(ctx, t0.Add(time.Hour), 10)
	wantErr(t, "DueSchedules", err, nil)
	if diff := cmp.Diff([]store.Schedule{daily, hourly}, due); diff != "" {
		t.Errorf("DueSchedules, earliest first (-want +got):\n%s", diff)
	}
	due, err = s.DueSchedules(ctx, t0.Add(45*time.Minute), 10)
	if err != nil || len(due) != 1 || due[0].ID != "sch2" {
		t.Errorf("DueSchedules before the hourly's due time = %+v, %v; want sch2 alone", due, err)
	}

	// The next due time moves only from the value its writer read.
	moved := hourly
	moved.NextDue = t0.Add(2 * time.Hour)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSchedule(ctx, moved, hourly.NextDue) })
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSchedule(ctx, moved, hourly.NextDue) })
	wantErr(t, "UpdateSchedule from a next due time that moved", err, store.ErrConflict)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateSchedule(ctx, store.Schedule{ID: "nope"}, t0)
	})
	wantErr(t, "UpdateSchedule(unknown)", err, store.ErrNotFound)
	paused := moved
	at := t0.Add(time.Minute)
	paused.PausedAt = &at
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSchedule(ctx, paused, moved.NextDue) })
	due, err = s.DueSchedules(ctx, t0.Add(24*time.Hour), 10)
	if err != nil || len(due) != 1 || due[0].ID != "sch2" {
		t.Errorf("DueSchedules with sch1 paused = %+v, %v; want sch2 alone", due, err)
	}
	deleted := daily
	deleted.DeletedAt = &at
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSchedule(ctx, deleted, daily.NextDue) })
	ss, err := s.Schedules(ctx, "p1")
	wantErr(t, "Schedules", err, nil)
	if diff := cmp.Diff([]store.Schedule{paused}, ss); diff != "" {
		t.Errorf("Schedules without the deleted one (-want +got):\n%s", diff)
	}
	if got, err := s.Schedule(ctx, "sch2"); err != nil || got.DeletedAt == nil || !got.DeletedAt.Equal(at) {
		t.Errorf("Schedule(deleted) = %+v, %v; want it kept with its deletion time", got, err)
	}

	// A fire is keyed by its schedule and due time.
	f1 := store.ScheduleFire{Schedule: "sch1", Due: t0.Add(time.Hour), Project: "p1", Kind: "due", FiredAt: t0.Add(time.Hour + time.Second), Outcome: "posting"}
	f2 := store.ScheduleFire{Schedule: "sch1", Due: t0.Add(2 * time.Hour), Project: "p1", Kind: "run_now", FiredAt: t0.Add(2 * time.Hour), Outcome: "posting"}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.RecordFire(ctx, f1); err != nil {
			return err
		}
		return tx.RecordFire(ctx, f2)
	})
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RecordFire(ctx, f1) })
	wantErr(t, "RecordFire of a due time fired", err, store.ErrConflict)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		x := f1
		x.Schedule = "nope"
		return tx.RecordFire(ctx, x)
	})
	wantErr(t, "RecordFire of an unknown schedule", err, store.ErrNotFound)
	open, err := s.OpenScheduleFires(ctx, 10)
	wantErr(t, "OpenScheduleFires", err, nil)
	if diff := cmp.Diff([]store.ScheduleFire{f1, f2}, open); diff != "" {
		t.Errorf("OpenScheduleFires, earliest first (-want +got):\n%s", diff)
	}
	posted := f1
	posted.Task, posted.Outcome = "tsk_1", "posted"
	refusedFire := f2
	refusedFire.Outcome, refusedFire.ErrorCode, refusedFire.Teaching = "refused", "forbidden", "the agent was revoked."
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.SettleFire(ctx, posted); err != nil {
			return err
		}
		return tx.SettleFire(ctx, refusedFire)
	})
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		x := f1
		x.Due = t0
		return tx.SettleFire(ctx, x)
	})
	wantErr(t, "SettleFire of a fire never made", err, store.ErrNotFound)
	fires, err := s.ScheduleFires(ctx, "sch1", 10)
	wantErr(t, "ScheduleFires", err, nil)
	if diff := cmp.Diff([]store.ScheduleFire{refusedFire, posted}, fires); diff != "" {
		t.Errorf("ScheduleFires, latest first (-want +got):\n%s", diff)
	}
	if fires, err := s.ScheduleFires(ctx, "sch1", 1); err != nil || len(fires) != 1 {
		t.Errorf("ScheduleFires(limit 1) = %d fires, %v; want 1", len(fires), err)
	}
	open, err = s.OpenScheduleFires(ctx, 10)
	if err != nil || len(open) != 1 || open[0].Outcome != "posted" {
		t.Errorf("OpenScheduleFires after settling = %+v, %v; want the posted one alone", open, err)
	}
}
