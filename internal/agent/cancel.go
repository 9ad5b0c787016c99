package agent

import (
	"context"
	"errors"
	"strings"
)

// ErrCancelled is returned by a run that stopped because its task was cancelled: the
// model request in flight, if any, was aborted, and no further tool call was sent. The
// calls already sent keep their outcome; those the run still waits on are its Outcome's
// Pending (docs/workbench.md, Cancelling a task).
var ErrCancelled = errors.New("the task was cancelled")

// errCancelCause is the cause a model request's context is cancelled with when its
// task is cancelled, told apart from the run's own end.
var errCancelCause = errors.New("agent: the task was cancelled while the model answered")

// cancelStop is why a turn's remaining calls are not sent once the task is cancelled.
const cancelStop = "a person cancelled the task"

// cancelNote is added to the conversation where a cancelled task stopped, so that a later
// task of the same conversation is not taken to carry it on.
const cancelNote = "[docket: a person cancelled this task here; nothing more of it was sent. Do not carry it on unless you are asked again.]"

type cancelKey struct{}

// WithCancelSignal returns ctx carrying done: once done is closed, a [Loop] run on ctx
// stops at its next step — the model request in flight is aborted and no further model
// request or tool call is sent — and returns [ErrCancelled]. A call already sent is not
// interrupted: a running write kept open goes on to its outcome or its hold bound.
func WithCancelSignal(ctx context.Context, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, cancelKey{}, done)
}

// cancelled reports whether the task ctx's run serves was cancelled.
func cancelled(ctx context.Context) bool {
	done, _ := ctx.Value(cancelKey{}).(<-chan struct{})
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// turnContext returns the context of one model request: ctx, cancelled also when the
// task is cancelled. stop releases it.
func turnContext(ctx context.Context) (turn context.Context, stop func()) {
	done, _ := ctx.Value(cancelKey{}).(<-chan struct{})
	if done == nil {
		return ctx, func() {}
	}
	turn, cancel := context.WithCancelCause(ctx)
	ended := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-done:
			cancel(errCancelCause)
		case <-ended:
		}
	}()
	return turn, func() {
		close(ended)
		<-watched
		cancel(nil)
	}
}

// stopCancelled ends a cancelled run: it notes in the conversation where the task
// stopped and returns ErrCancelled.
func (l *Loop) stopCancelled(ctx context.Context, c *Conversation) error {
	l.log.Info("task cancelled: no further model request or tool call", logConversation, c.ID)
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == RoleUser && !strings.Contains(c.Messages[n-1].Text, cancelNote) {
		c.Messages[n-1].Text = joinText(c.Messages[n-1].Text, cancelNote)
		if err := l.save(ctx, c); err != nil {
			return err
		}
	}
	return ErrCancelled
}
