package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
)

// TestLoop_SendTask: a task taken again (its runtime stopped before it reported) resumes
// its conversation and does not add its text twice; another task's text is added.
func TestLoop_SendTask(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"final":"one"},{"final":"two"}]}`)
	l := r.loop(t, p, nil)
	if out, err := l.SendTask(t.Context(), "c-1", "t-1", "first"); err != nil || out.Final == "" {
		t.Fatalf("SendTask(t-1) = %+v, %v", out, err)
	}
	if _, err := l.SendTask(t.Context(), "c-1", "t-1", "first"); err != nil {
		t.Fatalf("SendTask(t-1) again: %v", err)
	}
	if n := len(p.requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once: the task again resumes a conversation that has its answer", n)
	}
	if _, err := l.SendTask(t.Context(), "c-1", "t-2", "second"); err != nil {
		t.Fatal(err)
	}
	c, err := r.store.Load(t.Context(), "c-1")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range c.Messages {
		if m.Role == agent.RoleUser {
			users = append(users, m.Text)
		}
	}
	if len(users) != 2 || users[0] != "first" || users[1] != "second" || len(c.Tasks) != 2 {
		t.Errorf("user messages %q, tasks %q; want each task's text once", users, c.Tasks)
	}
}

// TestLoop_WakeWithNothingToRead: a wake of a conversation that watches nothing and has
// read every outcome does not run the model again; its outcome is its last answer.
func TestLoop_WakeWithNothingToRead(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"final":"done"},{"final":"should not run"}]}`)
	l := r.loop(t, p, nil)
	first, err := l.SendTask(t.Context(), "c-1", "t-1", "work")
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Wake(t.Context(), "c-1", "wake:t-1")
	if err != nil {
		t.Fatal(err)
	}
	if out.Final != first.Final || len(p.requests()) != 1 {
		t.Errorf("Wake = %q after %d model turns, want %q and no further turn", out.Final, len(p.requests()), first.Final)
	}
}

// waiter answers WaitOperations from a list, one answer a call.
type waiter struct {
	answers []bool
	calls   int
}

func (w *waiter) WaitOperations(_ context.Context, ws []agent.Pending, _ time.Duration) (bool, error) {
	w.calls++
	if len(ws) != 1 || ws[0].Ordinal != 3 {
		return false, errors.New("waited on other Operations than asked")
	}
	ok := w.answers[0]
	w.answers = w.answers[1:]
	return ok, nil
}

// TestLoop_AwaitFollowsTheAuthority: with a Waiter, Await waits through the authority's
// long-poll, again after a poll that ran out, until the outcomes have come.
func TestLoop_AwaitFollowsTheAuthority(t *testing.T) {
	r := newRig(t)
	w := &waiter{answers: []bool{false, true}}
	l := r.loop(t, script(t, `{"turns":[{"final":"x"}]}`), func(c *agent.LoopConfig) { c.Waiter = w })
	ok, err := l.Await(t.Context(), []agent.Pending{{CallID: "c", Tool: "ApplyAction", Ordinal: 3}}, time.Hour)
	if err != nil || !ok || w.calls != 2 {
		t.Errorf("Await = %v, %v after %d long-polls; want true after 2", ok, err, w.calls)
	}
}
