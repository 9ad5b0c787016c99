//go:build unix

package supervisor_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/slowtest"
	"github.com/docketrun/docket/internal/supervisor"
)

// The test binary doubles as the supervised child: with SUPERVISOR_CHILD set it plays
// the named part and never runs the tests.
//
//   - serve: says "ready" on the fifo, waits for an interrupt, writes "clean" to the
//     marker file and exits 0, as docket serve does.
//   - crash: says "run" on the fifo and exits 3.
//   - flaky: exits 3 until the marker file exists, then waits for an interrupt.
//   - stubborn: ignores interrupts, says "ready" and waits to be killed.
func TestMain(m *testing.M) {
	switch os.Getenv("SUPERVISOR_CHILD") {
	case "":
		slowtest.Main(m) // they start processes: skipped under -short
	case "serve":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		fmt.Println("serving")
		say("ready")
		<-ctx.Done()
		os.WriteFile(os.Getenv("SUPERVISOR_MARKER"), []byte("clean"), 0o600)
		os.Exit(0)
	case "crash":
		say("run")
		os.Exit(3)
	case "flaky":
		if _, err := os.Stat(os.Getenv("SUPERVISOR_MARKER")); err != nil {
			os.Exit(3)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		<-ctx.Done()
		os.Exit(0)
	case "stubborn":
		signal.Ignore(os.Interrupt)
		say("ready")
		time.Sleep(time.Hour) // the child, not the test, waits: to be killed
	}
	os.Exit(99)
}

func say(word string) {
	f, err := os.OpenFile(os.Getenv("SUPERVISOR_FIFO"), os.O_WRONLY, 0)
	if err != nil {
		os.Exit(98)
	}
	fmt.Fprintln(f, word)
	f.Close()
}

// rig is a fifo the children talk on, and the environment that points them at it.
type rig struct {
	dir    string
	lines  *bufio.Scanner
	marker string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read-write, so the open does not wait for a writer and reads never see the end of
	// the stream between children.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &rig{dir: dir, lines: bufio.NewScanner(f), marker: filepath.Join(dir, "marker")}
}

func (r *rig) child(name, part string, restart bool) supervisor.Child {
	exe, _ := os.Executable()
	return supervisor.Child{Name: name, Path: exe, Restart: restart,
		Env: append(os.Environ(), "SUPERVISOR_CHILD="+part, "SUPERVISOR_FIFO="+filepath.Join(r.dir, "fifo"), "SUPERVISOR_MARKER="+r.marker)}
}

// expect reads the next word a child said.
func (r *rig) expect(t *testing.T, want string) {
	t.Helper()
	if !r.lines.Scan() {
		t.Fatalf("fifo closed: %v", r.lines.Err())
	}
	if got := r.lines.Text(); got != want {
		t.Fatalf("child said %q, want %q", got, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSupervisor_Close_InterruptsAndLogs(t *testing.T) {
	r := newRig(t)
	logs := filepath.Join(r.dir, "logs")
	s := supervisor.New(supervisor.Config{LogDir: logs})
	if err := s.Start(r.child("serve", "serve", true)); err != nil {
		t.Fatal(err)
	}
	r.expect(t, "ready")
	if s.Pid("serve") == 0 {
		t.Error("Pid(serve) = 0 while it runs")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := readFile(t, r.marker); got != "clean" {
		t.Errorf("marker = %q, want the child's clean exit", got)
	}
	if s.Pid("serve") != 0 {
		t.Error("Pid(serve) != 0 after Close")
	}
	log := readFile(t, s.LogPath("serve"))
	for _, want := range []string{"--- supervisor: start 1 of serve", "serving\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if fi, err := os.Stat(s.LogPath("serve")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	select {
	case <-s.Done():
		t.Error("Done closed by a requested stop")
	default:
	}
	if err := s.Start(r.child("late", "serve", true)); !errors.Is(err, supervisor.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestSupervisor_Start_RestartsWithBackoff(t *testing.T) {
	r := newRig(t)
	s := supervisor.New(supervisor.Config{LogDir: filepath.Join(r.dir, "logs"), MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	if err := s.Start(r.child("worker", "crash", true)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r.expect(t, "run")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	log := readFile(t, s.LogPath("worker"))
	for _, want := range []string{"start 1 of worker", "start 3 of worker", "worker exited: exit status 3"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if s.Err() != nil {
		t.Errorf("Err = %v; a restarting child does not fail the supervisor", s.Err())
	}
}

func TestSupervisor_Done_ChildWithoutRestartExits(t *testing.T) {
	r := newRig(t)
	s := supervisor.New(supervisor.Config{})
	defer s.Close(context.Background())
	if err := s.Start(r.child("serve", "crash", false)); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	ee, ok := errors.AsType[*supervisor.ExitError](s.Err())
	if !ok || ee.Name != "serve" {
		t.Fatalf("Err = %v, want an ExitError for serve", s.Err())
	}
	if got := ee.Error(); got != "child serve exited: exit status 3" {
		t.Errorf("Error() = %q", got)
	}
}

func TestSupervisor_Close_KillsAfterGrace(t *testing.T) {
	r := newRig(t)
	s := supervisor.New(supervisor.Config{StopGrace: 20 * time.Millisecond})
	if err := s.Start(r.child("stubborn", "stubborn", true)); err != nil {
		t.Fatal(err)
	}
	r.expect(t, "ready")
	err := s.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Close = %v, want the child reported killed", err)
	}
}

func TestSupervisor_Start_Refuses(t *testing.T) {
	r := newRig(t)
	s := supervisor.New(supervisor.Config{LogDir: filepath.Join(r.dir, "logs")})
	defer s.Close(context.Background())
	if err := s.Start(r.child("serve", "serve", true)); err != nil {
		t.Fatal(err)
	}
	r.expect(t, "ready")
	missing := r.child("missing", "serve", true)
	missing.Path = filepath.Join(r.dir, "no-such-program")
	tests := []struct {
		name  string
		child supervisor.Child
		want  string
	}{
		{"duplicate name", r.child("serve", "serve", true), "already running"},
		{"name with a slash", r.child("../x", "serve", true), "plain file name"},
		{"empty name", r.child("", "serve", true), "plain file name"},
		{"missing program", missing, "start child missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Start(tt.child)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start(%s) = %v, want an error containing %q", tt.child.Name, err, tt.want)
			}
		})
	}
}

func TestAlive(t *testing.T) {
	if !supervisor.Alive(os.Getpid()) {
		t.Error("Alive(this process) = false")
	}
	r := newRig(t)
	s := supervisor.New(supervisor.Config{})
	if err := s.Start(r.child("serve", "serve", false)); err != nil {
		t.Fatal(err)
	}
	r.expect(t, "ready")
	pid := s.Pid("serve")
	if !supervisor.Alive(pid) {
		t.Errorf("Alive(%d) = false while the child runs", pid)
	}
	if err := supervisor.Terminate(pid); err != nil {
		t.Fatalf("Terminate: %v", err)
	}
	<-s.Done() // a child without Restart that exits ends the supervisor
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if supervisor.Alive(pid) {
		t.Errorf("Alive(%d) = true after the child exited and was reaped", pid)
	}
}

// TestSupervisor_OnChange: each start and each exit on its own is told, with the run and
// the exit status, so nothing a child does goes unseen; a child the supervisor stops is
// not told as an exit, and Stop lets the name be started again.
func TestSupervisor_OnChange(t *testing.T) {
	r := newRig(t)
	changes := make(chan supervisor.Change, 16)
	s := supervisor.New(supervisor.Config{MinBackoff: time.Millisecond, OnChange: func(c supervisor.Change) { changes <- c }})
	t.Cleanup(func() { s.Close(context.Background()) })
	if err := s.Start(r.child("crash", "crash", true)); err != nil {
		t.Fatal(err)
	}
	next := func() supervisor.Change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-t.Context().Done():
			t.Fatal("no change told")
		}
		return supervisor.Change{}
	}
	for run := 1; run <= 2; run++ {
		r.expect(t, "run")
		if c := next(); !c.Started || c.Runs != run || c.Pid == 0 {
			t.Fatalf("change %+v, want run %d started with its pid", c, run)
		}
		c := next()
		var ee *exec.ExitError
		if c.Started || c.Runs != run || !c.Restart || !errors.As(c.Err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("change %+v, want run %d exited with status 3, to restart", c, run)
		}
	}
	if err := s.Stop(t.Context(), "crash"); err != nil {
		t.Fatal(err)
	}
	if s.Pid("crash") != 0 {
		t.Error("a stopped child still has a pid")
	}
	if err := s.Start(r.child("crash", "serve", false)); err != nil {
		t.Fatalf("start a stopped name again: %v", err)
	}
	for {
		// The crashing child may have started once more before Stop; what comes after
		// is the new child's start.
		c := next()
		if c.Started && s.Pid("crash") == c.Pid {
			break
		}
	}
	for r.lines.Scan() && r.lines.Text() == "run" {
		// a crashing child started just before Stop said its word
	}
	if got := r.lines.Text(); got != "ready" {
		t.Fatalf("the new child said %q, want ready", got)
	}
	if err := s.Stop(t.Context(), "crash"); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-changes:
		if !c.Started {
			t.Errorf("a child the supervisor stopped was told as %+v", c)
		}
	default:
	}
}

// TestSupervisor_CrashLoop: each quick exit in a row is counted and told with the wait
// before the next start, so that docket start can name a crash loop (docs/workbench.md)
// from the third on.
func TestSupervisor_CrashLoop(t *testing.T) {
	r := newRig(t)
	changes := make(chan supervisor.Change, 16)
	s := supervisor.New(supervisor.Config{MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, Stable: time.Hour,
		OnChange: func(c supervisor.Change) {
			if !c.Started {
				changes <- c
			}
		}})
	t.Cleanup(func() { s.Close(context.Background()) })
	if err := s.Start(r.child("crash", "crash", true)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		quick   int
		backoff time.Duration
		loop    bool
	}{{1, time.Millisecond, false}, {2, 2 * time.Millisecond, false}, {3, 4 * time.Millisecond, true}, {4, 4 * time.Millisecond, true}} {
		r.expect(t, "run")
		var c supervisor.Change
		select {
		case c = <-changes:
		case <-t.Context().Done():
			t.Fatal("no exit told")
		}
		if c.Quick != want.quick || c.Backoff != want.backoff || c.CrashLooping() != want.loop {
			t.Fatalf("exit %d: quick %d, backoff %v, crash loop %v; want %d, %v, %v", c.Runs, c.Quick, c.Backoff, c.CrashLooping(), want.quick, want.backoff, want.loop)
		}
	}
}

// TestSupervisor_Settled: a child that comes up after quick exits is told settled once it
// has run for Stable, so that a crash loop named earlier is seen to be over.
func TestSupervisor_Settled(t *testing.T) {
	r := newRig(t)
	changes := make(chan supervisor.Change, 16)
	// Stable is what separates a quick exit from a run: the crashing child's exit must
	// come before it, a process start included, or its restart is not one after quick
	// exits and is never told settled. 2 s holds on a loaded machine, where 50 ms did not.
	s := supervisor.New(supervisor.Config{MinBackoff: time.Millisecond, Stable: 2 * time.Second,
		OnChange: func(c supervisor.Change) { changes <- c }})
	t.Cleanup(func() { s.Close(context.Background()) })
	// The child crashes until the marker file exists, then serves.
	c := r.child("flaky", "flaky", true)
	if err := s.Start(c); err != nil {
		t.Fatal(err)
	}
	var settled supervisor.Change
	give := time.After(time.Minute) // a child never told settled fails here, not at go test's timeout
	for settled.Pid == 0 {
		select {
		case ch := <-changes:
			if !ch.Started {
				if err := os.WriteFile(r.marker, []byte("up"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if ch.Settled {
				settled = ch
			}
		case <-give:
			t.Fatal("the child that came up was never told settled")
		}
	}
	if !settled.Started || settled.Pid != s.Pid("flaky") {
		t.Errorf("settled %+v, want the running process (pid %d)", settled, s.Pid("flaky"))
	}
}
