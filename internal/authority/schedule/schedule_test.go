package schedule_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/schedule"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// fakeTasks is the facade's PostTask and Task: it keeps the posts it was sent, answers a
// repeated client key with the task it made, and fails as told.
type fakeTasks struct {
	mu    sync.Mutex
	posts []contract.TaskRequest
	byKey map[string]contract.Task
	fail  error // the next post's error, once
	state contract.TaskState
}

func (f *fakeTasks) PostTask(_ context.Context, _ identity.Caller, project contract.ProjectID, req contract.TaskRequest) (contract.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail; err != nil {
		f.fail = nil
		return contract.Task{}, err
	}
	f.posts = append(f.posts, req)
	if t, ok := f.byKey[req.ClientKey]; ok {
		return t, nil
	}
	t := contract.Task{ID: contract.TaskID("t-" + req.ClientKey), Project: project, Text: req.Text, ClientKey: req.ClientKey, State: contract.TaskQueued}
	f.byKey[req.ClientKey] = t
	return t, nil
}

func (f *fakeTasks) Task(_ context.Context, _ identity.Caller, _ contract.ProjectID, id contract.TaskID) (contract.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return contract.Task{ID: id, State: cmpState(f.state)}, nil
}

func cmpState(s contract.TaskState) contract.TaskState {
	if s == "" {
		return contract.TaskQueued
	}
	return s
}

func (f *fakeTasks) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ks []string
	for _, p := range f.posts {
		ks = append(ks, p.ClientKey)
	}
	return ks
}

type fakeMembers struct{}

func (fakeMembers) MemberCaller(_ context.Context, id contract.MemberID) (identity.Caller, error) {
	return identity.Caller{Kind: contract.PrincipalMember, ID: string(id), Name: "ada", Projects: []contract.ProjectID{"p1"}}, nil
}

var ada = identity.Caller{Kind: contract.PrincipalMember, ID: "m1", Name: "ada", Projects: []contract.ProjectID{"p1"}}

// newKeeper returns a Keeper over a fresh SQLite store with project p1, member m1 and
// Agent calc, on clock now.
func newKeeper(t *testing.T, now func() time.Time, tasks *fakeTasks) (*schedule.Keeper, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := now()
	if err := st.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateProject(t.Context(), store.Project{ID: "p1", Name: "One", CreatedAt: at}); err != nil {
			return err
		}
		return tx.CreateAgent(t.Context(), store.Agent{ID: "agt_1", Project: "p1", Name: "calc", Kind: store.AgentKindAgent, TokenDigest: []byte("d"), CreatedAt: at})
	}); err != nil {
		t.Fatal(err)
	}
	tasks.byKey = map[string]contract.Task{}
	k, err := schedule.New(schedule.Config{Store: st, Tasks: tasks, Reader: tasks, Members: fakeMembers{}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return k, st
}

// TestKeeper_Run: the loop sleeps until each due time on the Keeper's clock (here the
// synctest bubble's) and fires it then, once; a schedule made while it sleeps wakes it.
func TestKeeper_Run(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tasks := &fakeTasks{}
		k, st := newKeeper(t, time.Now, tasks)
		defer st.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- k.Run(ctx) }()
		start := time.Now()
		s, err := k.Create(ctx, ada, "p1", contract.CreateScheduleRequest{Every: "90m", Task: contract.TaskRequest{Agent: "calc", Text: "Tidy."}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(89 * time.Minute)
		synctest.Wait()
		if got := tasks.keys(); len(got) != 0 {
			t.Fatalf("posts before the due time: %v", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := tasks.keys(); len(got) != 1 {
			t.Fatalf("posts at the due time: %v; want one", got)
		}
		time.Sleep(3 * time.Hour)
		synctest.Wait()
		if got := tasks.keys(); len(got) != 3 {
			t.Fatalf("posts after four and a half hours: %v; want three, one a due time", got)
		}
		shown, err := k.Schedule(ctx, ada, "p1", s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range shown.LastFires {
			if !f.FiredAt.Equal(f.Due) || f.Kind != contract.FireDue {
				t.Errorf("fire %+v: made at %s, want at its due time", f, f.FiredAt)
			}
		}
		if !shown.NextFire.Equal(start.Truncate(time.Second).Add(4 * 90 * time.Minute)) {
			t.Errorf("next fire = %s", shown.NextFire)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

// TestKeeper_PostFailures: a refusal is the fire's outcome, with its code; a failure that
// is no refusal leaves the fire posting, and a sweep past the repost bound sends it again
// under the same client key.
func TestKeeper_PostFailures(t *testing.T) {
	clock := struct {
		sync.Mutex
		t time.Time
	}{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	now := func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.t }
	add := func(d time.Duration) { clock.Lock(); defer clock.Unlock(); clock.t = clock.t.Add(d) }
	tasks := &fakeTasks{}
	k, st := newKeeper(t, now, tasks)
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	s, err := k.Create(ctx, ada, "p1", contract.CreateScheduleRequest{Every: "1h", Task: contract.TaskRequest{Agent: "calc", Text: "Tidy."}})
	if err != nil {
		t.Fatal(err)
	}

	tasks.fail = contract.Errorf(contract.CodeForbidden, "agent calc is revoked and takes no tasks; post to a live Agent")
	add(time.Hour)
	if _, err := k.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	tasks.fail = errors.New("disk full")
	add(time.Hour)
	if _, err := k.Sweep(ctx); err == nil {
		t.Fatal("a sweep whose post failed returned no error")
	}
	shown, err := k.Schedule(ctx, ada, "p1", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f := shown.LastFires[1]; f.Outcome != contract.FireRefused || f.ErrorCode != contract.CodeForbidden || f.Task != "" {
		t.Errorf("the refused fire = %+v; want refused, forbidden, no task", f)
	}
	if f := shown.LastFires[0]; f.Outcome != contract.FirePosting {
		t.Errorf("the failed fire = %+v; want still posting", f)
	}
	add(schedule.DefaultRepost)
	if _, err := k.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	shown, err = k.Schedule(ctx, ada, "p1", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f := shown.LastFires[0]; f.Outcome != contract.FirePosted || f.Task == "" {
		t.Errorf("the fire sent again = %+v; want posted with its task", f)
	}
	tasks.state = contract.TaskFailed
	if _, err := k.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	shown, err = k.Schedule(ctx, ada, "p1", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f := shown.LastFires[0]; f.Outcome != string(contract.TaskFailed) {
		t.Errorf("the fire whose task failed = %+v; want failed", f)
	}
	if got := tasks.keys(); len(got) != 1 {
		t.Errorf("posts that reached the tasks = %v; want one", got)
	}
}
