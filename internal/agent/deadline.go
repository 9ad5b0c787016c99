package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Default deadlines of one model request; see [Deadlines].
const (
	DefaultFirstByte = 5 * time.Minute // a large prompt on a slow local server still starts its answer within it
	DefaultIdle      = 2 * time.Minute // a streaming server sends something at least this often
)

// Deadlines bound one model request, so that a server that accepts the connection and
// never answers, or starts an answer and stops, cannot hold a run (and the task it
// serves) forever: FirstByte from sending the request to the answer's status and
// headers, Idle between two reads of the answer that bring data. Zero takes
// DefaultFirstByte and DefaultIdle. A request past either fails the turn with a
// *[ProviderError] of [KindStalled] (docs/workbench.md, Model deadlines).
type Deadlines struct {
	FirstByte time.Duration
	Idle      time.Duration
	// Watch, when set, is told what each request waits on and when it ends.
	Watch *Watch
}

func (d Deadlines) withDefaults() Deadlines {
	if d.FirstByte <= 0 {
		d.FirstByte = DefaultFirstByte
	}
	if d.Idle <= 0 {
		d.Idle = DefaultIdle
	}
	return d
}

// ModelWait is what a model request waits on at one moment: the answer's first byte, or
// its next data, from the endpoint at Origin since Since, until Deadline; or, in phase
// retry, the back-off before attempt Attempt of Attempts, which Deadline ends.
type ModelWait struct {
	Origin   string // the endpoint's scheme://host[:port]; never its path or key
	Phase    string // contract.RunWaitFirstByte, contract.RunWaitIdle or contract.RunWaitRetry
	Since    time.Time
	Deadline time.Time

	// Retry phase only: the attempt that comes at Deadline, of how many, and why the
	// last one failed ("rate limited (HTTP 429)").
	Attempt  int
	Attempts int
	Reason   string
}

// RunWait is w as a task's renewal reports it.
func (w ModelWait) RunWait() *contract.TaskRunWait {
	return &contract.TaskRunWait{On: contract.RunWaitModel, Origin: w.Origin, Phase: w.Phase, Since: w.Since.UTC(), Deadline: w.Deadline.UTC(),
		Attempt: w.Attempt, Attempts: w.Attempts, Reason: w.Reason}
}

// Watch holds the wait of the model request in flight, for whoever keeps a task's
// lease: a run whose request is past its deadline is stuck and its lease is not renewed.
// The zero value is ready; a nil *Watch watches nothing. It is safe for concurrent use.
type Watch struct {
	mu      sync.Mutex
	cur     *ModelWait    // nil: no request waits
	origin  string        // the origin of the last request, for a retry wait
	changed chan struct{} // signalled when a retry wait begins; made by Changed
}

// Changed returns a channel that receives when a back-off wait before a retry begins,
// so that whoever keeps the task's lease says so at once rather than at its next
// renewal. A nil *Watch returns nil, which never receives.
func (w *Watch) Changed() <-chan struct{} {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{}, 1)
	}
	return w.changed
}

// Current returns the wait of the request in flight, and whether there is one.
func (w *Watch) Current() (ModelWait, bool) {
	if w == nil {
		return ModelWait{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil {
		return ModelWait{}, false
	}
	return *w.cur, true
}

func (w *Watch) set(mw *ModelWait) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if mw != nil && mw.Phase == contract.RunWaitRetry {
		if mw.Origin == "" {
			mw.Origin = w.origin
		}
		if w.changed != nil {
			select {
			case w.changed <- struct{}{}:
			default: // one signal pending is enough: the reader reads Current
			}
		}
	} else if mw != nil {
		w.origin = mw.Origin
	}
	w.cur = mw
}

// stallError is the cause a request's context is cancelled with when a deadline passes.
type stallError struct {
	wait ModelWait
	d    time.Duration
}

func (e *stallError) Error() string {
	if e.wait.Phase == contract.RunWaitFirstByte {
		return fmt.Sprintf("the model at %s sent no first byte within %s (the first-byte deadline)", e.wait.Origin, e.d)
	}
	return fmt.Sprintf("the model at %s began its answer and then sent nothing for %s (the idle deadline)", e.wait.Origin, e.d)
}

// stall enforces one request's deadlines: it cancels the request's context with a
// *stallError when the current phase outlasts its deadline, and tells the Watch.
type stall struct {
	d      Deadlines
	origin string
	cancel context.CancelCauseFunc

	mu    sync.Mutex  // guards the fields below
	timer *time.Timer // runs expire at the current phase's deadline
	wait  ModelWait   // the current phase
	limit time.Duration
}

// newStall starts the first-byte deadline of a request whose context cancel ends.
func newStall(d Deadlines, endpoint string, cancel context.CancelCauseFunc) *stall {
	s := &stall{d: d.withDefaults(), origin: originOf(endpoint), cancel: cancel}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = time.AfterFunc(s.d.FirstByte, s.expire)
	s.phaseLocked(contract.RunWaitFirstByte, s.d.FirstByte)
	return s
}

func (s *stall) expire() {
	s.mu.Lock()
	err := &stallError{wait: s.wait, d: s.limit}
	s.mu.Unlock()
	s.cancel(err)
}

func (s *stall) phaseLocked(phase string, d time.Duration) {
	now := time.Now()
	s.wait, s.limit = ModelWait{Origin: s.origin, Phase: phase, Since: now, Deadline: now.Add(d)}, d
	s.timer.Reset(d)
	w := s.wait
	s.d.Watch.set(&w)
}

// answered starts the idle deadline again: the answer's headers, or more of its body,
// came.
func (s *stall) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phaseLocked(contract.RunWaitIdle, s.d.Idle)
}

// stop ends the deadlines: the request is over.
func (s *stall) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer.Stop()
	s.d.Watch.set(nil)
}

// stallBody is an answer's body whose reads that bring data start the idle deadline again.
type stallBody struct {
	r io.Reader
	s *stall
}

func (b stallBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.s.answered()
	}
	return n, err
}

// stalled returns the *ProviderError of a request whose context ended for a deadline,
// or nil.
func stalled(ctx context.Context, provider string) error {
	if se, ok := errors.AsType[*stallError](context.Cause(ctx)); ok {
		return &ProviderError{Provider: provider, Kind: KindStalled,
			Message: se.Error() + "; check the model server, or raise the deadline (docket agent serve --model-first-byte, --model-idle)"}
	}
	return nil
}

// originOf is endpoint's scheme://host[:port]: what a wait names, never the path or
// credentials.
func originOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "the model endpoint"
	}
	return u.Scheme + "://" + u.Host
}
