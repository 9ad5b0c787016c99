// Package supervisor runs child processes for a parent command: it restarts a child that
// exits with a growing back-off, writes each child's output to its own log file, and stops
// every child, newest first, when the parent is done.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Defaults for [Config].
const (
	DefaultMinBackoff = 200 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	DefaultStable     = 30 * time.Second
	DefaultStopGrace  = 10 * time.Second
)

// Config holds how a [Supervisor] runs its children. The zero value is usable.
type Config struct {
	// LogDir holds one log file per child, <name>.log, appended to across restarts
	// (mode 0600). Empty: the children's output is discarded.
	LogDir string
	Logger *slog.Logger // the supervisor's own messages; default: discards

	// MinBackoff is the wait before the first restart of a child; each quick exit doubles
	// it up to MaxBackoff. Defaults DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Stable is how long a child must run for its back-off to start over; default
	// DefaultStable.
	Stable time.Duration
	// StopGrace is how long a child may take to exit after an interrupt before it is
	// killed; default DefaultStopGrace.
	StopGrace time.Duration

	// OnChange, when set, is told each time a child's process starts or exits on its own
	// (not when the supervisor stops it), so that what runs is visible where a person
	// looks. It is called from the child's own goroutine and must not block for long.
	OnChange func(Change)
}

// Change is a child's process starting or exiting on its own.
type Change struct {
	Name    string
	Started bool // a process started (Pid); else the last one exited (Err)
	// Settled, with Started: the process started after quick exits has now run for
	// Stable, so the child is up again (Quick is 0 from here).
	Settled bool
	Pid     int   // the process started
	Runs    int   // processes started so far, this one included
	Err     error // how it exited: the status from exec.Cmd.Wait (nil for 0), or why a restart failed
	Restart bool  // after an exit: the child is started again after its back-off
	// After an exit: Quick is how many times in a row the child exited before it had run
	// for Stable (this exit included; 0 when it had run that long), and Backoff how long
	// the supervisor waits before it starts the child again.
	Quick   int
	Backoff time.Duration
}

// CrashLoop is how many quick exits in a row make a crash loop: a child that exits that
// often before it runs for Stable will not come up by being restarted, and a person
// must fix what its log names (docs/workbench.md).
const CrashLoop = 3

// CrashLooping reports whether the change is an exit that makes, or continues, a crash
// loop.
func (c Change) CrashLooping() bool { return !c.Started && c.Quick >= CrashLoop }

// Child describes one supervised process.
type Child struct {
	Name string   // unique among the children; names the log file
	Path string   // the program
	Args []string // the full argument list, Args[0] included; default: {Path}
	Env  []string // the environment; nil: the parent's
	Dir  string   // the working directory; empty: the parent's

	// Restart starts the child again, after the back-off, whenever it exits on its own.
	// Without it, a child that exits on its own (even with status 0) fails the
	// supervisor: see [Supervisor.Done].
	Restart bool
}

// ExitError says that a child without Restart exited on its own.
type ExitError struct {
	Name string
	Err  error // the exit status, from exec.Cmd.Wait; nil for status 0
}

// Error says which child exited and how.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("child %s exited", e.Name)
	}
	return fmt.Sprintf("child %s exited: %v", e.Name, e.Err)
}

// Unwrap returns the exit status, for errors.As with *exec.ExitError.
func (e *ExitError) Unwrap() error { return e.Err }

// ErrClosed is returned by [Supervisor.Start] after [Supervisor.Close].
var ErrClosed = errors.New("supervisor: closed")

// errStopped tells watch that halt came first and no process was started.
var errStopped = errors.New("supervisor: child stopped")

// Supervisor runs children until it is closed. It is safe for concurrent use.
type Supervisor struct {
	cfg Config
	log *slog.Logger

	// done is closed, once, when a child without Restart exits on its own; err holds why.
	done     chan struct{}
	failOnce sync.Once
	err      error

	mu       sync.Mutex // guards the fields below
	children []*child   // in start order; stopped in reverse
	closed   bool
}

// New returns a Supervisor with no children.
func New(cfg Config) *Supervisor {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Stable <= 0 {
		cfg.Stable = DefaultStable
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{cfg: cfg, log: log.With("component", "supervisor"), done: make(chan struct{})}
}

// Done is closed when a child without Restart exits on its own; [Supervisor.Err] then
// says which and how.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// Err returns the *ExitError that closed Done, or nil while Done is open.
func (s *Supervisor) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

func (s *Supervisor) fail(err error) {
	s.failOnce.Do(func() {
		s.err = err
		close(s.done)
	})
}

// Start starts c and returns once its first process is running, or with the reason it
// could not start (a missing program, a log that cannot be opened). Later restarts happen
// in the background.
func (s *Supervisor) Start(c Child) error {
	if c.Name == "" || filepath.Base(c.Name) != c.Name || c.Name == "." || c.Name == ".." {
		return fmt.Errorf("start child %q: the name must be a plain file name", c.Name)
	}
	if len(c.Args) == 0 {
		c.Args = []string{c.Path}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for _, o := range s.children {
		if o.spec.Name == c.Name {
			return fmt.Errorf("start child %s: a child of that name is already running", c.Name)
		}
	}
	ch := &child{sup: s, spec: c, stop: make(chan struct{}), exited: make(chan struct{})}
	logf, err := s.openLog(c.Name)
	if err != nil {
		return err
	}
	ch.logf = logf
	cmd, err := ch.spawn()
	if err != nil {
		logf.Close()
		return err
	}
	s.children = append(s.children, ch)
	go ch.watch(cmd)
	return nil
}

// started tells OnChange that cmd, the child's run-th process, started. It is called
// with no lock held.
func (c *child) started(cmd *exec.Cmd) {
	c.sup.change(Change{Name: c.spec.Name, Started: true, Pid: cmd.Process.Pid, Runs: c.runCount()})
}

func (s *Supervisor) openLog(name string) (*os.File, error) {
	if s.cfg.LogDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(s.cfg.LogDir, 0o700); err != nil {
		return nil, fmt.Errorf("start child %s: make log dir: %w", name, err)
	}
	f, err := os.OpenFile(filepath.Join(s.cfg.LogDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start child %s: open log: %w", name, err)
	}
	return f, nil
}

// LogPath returns the log file of the child called name; empty without a LogDir.
func (s *Supervisor) LogPath(name string) string {
	if s.cfg.LogDir == "" {
		return ""
	}
	return filepath.Join(s.cfg.LogDir, name+".log")
}

// Pid returns the process id of the running process of the child called name, or 0
// when it has none (between restarts, or after it stopped).
func (s *Supervisor) Pid(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.children {
		if c.spec.Name == name {
			return c.pid()
		}
	}
	return 0
}

// Stop stops the child called name as [Supervisor.Close] stops each, and forgets it, so
// that a child of that name may be started again. A name with no child is no error.
func (s *Supervisor) Stop(ctx context.Context, name string) error {
	s.mu.Lock()
	var ch *child
	for i, c := range s.children {
		if c.spec.Name == name {
			ch = c
			s.children = append(s.children[:i:i], s.children[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if ch == nil {
		return nil
	}
	return ch.halt(ctx)
}

// Close stops every child, newest first: each gets an interrupt and StopGrace to exit
// before it is killed. It returns once all have exited. A child's non-zero status on the
// way down is not an error: the interrupt asked for it.
func (s *Supervisor) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	children := s.children
	s.mu.Unlock()
	var first error
	for i := len(children) - 1; i >= 0; i-- {
		if err := children[i].halt(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// child is one supervised child: its spec and its current process.
type child struct {
	sup  *Supervisor
	spec Child
	logf *os.File // nil: output discarded; closed by watch when it returns

	// stop is closed by halt to ask watch not to restart; exited is closed by watch when
	// the last process has exited and no restart will follow.
	stop     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}

	mu   sync.Mutex // guards cmd
	cmd  *exec.Cmd  // the current process; nil between restarts
	runs int        // processes started, for the log
}

func (c *child) runCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

func (s *Supervisor) change(ch Change) {
	if s.cfg.OnChange != nil {
		s.cfg.OnChange(ch)
	}
}

func (c *child) pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// spawn starts one process of the child.
func (c *child) spawn() (*exec.Cmd, error) {
	cmd := &exec.Cmd{Path: c.spec.Path, Args: c.spec.Args, Env: c.spec.Env, Dir: c.spec.Dir}
	if c.logf != nil {
		cmd.Stdout, cmd.Stderr = c.logf, c.logf
	}
	detach(cmd)
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
		return nil, errStopped // halt came between the back-off and this start
	default:
	}
	c.runs++
	if c.logf != nil {
		fmt.Fprintf(c.logf, "--- supervisor: start %d of %s at %s\n", c.runs, c.spec.Name, time.Now().UTC().Format(time.RFC3339))
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start child %s: %w", c.spec.Name, err)
	}
	c.cmd = cmd
	c.sup.log.Info("child started", logChild, c.spec.Name, logPid, cmd.Process.Pid, logRun, c.runs)
	return cmd, nil
}

// watch waits for each process of the child and restarts it, with back-off, until halt
// asks it to stop or a child without Restart exits.
func (c *child) watch(cmd *exec.Cmd) {
	defer close(c.exited)
	if c.logf != nil {
		defer c.logf.Close()
	}
	c.started(cmd)
	backoff := c.sup.cfg.MinBackoff
	quick := 0 // exits in a row before Stable
	for {
		started := time.Now()
		err := c.wait(cmd, quick)
		c.mu.Lock()
		c.cmd = nil
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		default:
		}
		c.sup.log.Warn("child exited", logChild, c.spec.Name, logErr, err)
		if c.logf != nil {
			fmt.Fprintf(c.logf, "--- supervisor: %s exited: %v\n", c.spec.Name, exitText(err))
		}
		if time.Since(started) >= c.sup.cfg.Stable {
			backoff, quick = c.sup.cfg.MinBackoff, 0
		} else {
			quick++
		}
		ch := Change{Name: c.spec.Name, Runs: c.runCount(), Err: err, Restart: c.spec.Restart, Quick: quick}
		if c.spec.Restart {
			ch.Backoff = backoff
		}
		c.sup.change(ch)
		if !c.spec.Restart {
			c.sup.fail(&ExitError{Name: c.spec.Name, Err: err})
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, c.sup.cfg.MaxBackoff)
		for {
			var serr error
			if cmd, serr = c.spawn(); serr == nil {
				c.started(cmd)
				break
			}
			if errors.Is(serr, errStopped) {
				return
			}
			c.sup.log.Warn("child restart failed", logChild, c.spec.Name, logErr, serr)
			c.sup.change(Change{Name: c.spec.Name, Runs: c.runCount(), Err: serr, Restart: true, Quick: quick, Backoff: backoff})
			t := time.NewTimer(backoff)
			select {
			case <-c.stop:
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, c.sup.cfg.MaxBackoff)
		}
	}
}

// wait waits for cmd to exit. When it was started after quick exits in a row, it tells
// OnChange once the process has run for Stable: its crash loop, if any, is over.
func (c *child) wait(cmd *exec.Cmd, quick int) error {
	if quick == 0 {
		return cmd.Wait()
	}
	exited := make(chan error, 1) // written once, by the goroutine below, which this function waits for
	go func() { exited <- cmd.Wait() }()
	settle := time.NewTimer(c.sup.cfg.Stable)
	defer settle.Stop()
	select {
	case err := <-exited:
		return err
	case <-settle.C:
		c.sup.change(Change{Name: c.spec.Name, Started: true, Settled: true, Pid: cmd.Process.Pid, Runs: c.runCount()})
		return <-exited
	}
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// halt stops the child: no more restarts, an interrupt, and a kill after StopGrace or
// when ctx ends.
func (c *child) halt(ctx context.Context) error {
	// Closing stop under mu means spawn either started its process before (and cmd is
	// it) or will see stop and start nothing.
	c.mu.Lock()
	c.stopOnce.Do(func() { close(c.stop) })
	cmd := c.cmd
	c.mu.Unlock()
	if cmd != nil {
		if err := interrupt(cmd); err != nil && !errors.Is(err, os.ErrProcessDone) {
			c.sup.log.Warn("interrupt child", logChild, c.spec.Name, logErr, err)
		}
	}
	grace := time.NewTimer(c.sup.cfg.StopGrace)
	defer grace.Stop()
	select {
	case <-c.exited:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	c.sup.log.Warn("child did not stop in time; killing it", logChild, c.spec.Name)
	c.mu.Lock()
	cmd = c.cmd
	c.mu.Unlock()
	if cmd != nil {
		kill(cmd)
	}
	<-c.exited
	return fmt.Errorf("stop child %s: killed after it ignored the interrupt", c.spec.Name)
}
