// Package run provides the run adapter: it starts a program under the worker root, passes
// the call's arguments as JSON on stdin and reads rows as JSON from stdout.
//
// run is NOT a sandbox. The program runs as the worker's user with the worker's file
// system and network. What run does is narrower: it starts only files under the worker
// root, never a shell; it passes only an allow-list of the environment (the basics and
// the Tool's env.pass, see [worker.ScrubEnv]) plus what the work item decides (see
// [worker.CallEnv]); it kills the whole
// process group at the time limit; and it caps the output. Run programs you would run
// yourself, and isolate the worker (a container, a separate user) when you would not.
package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// Defaults, used when a Tool's fence leaves them unset.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 4 << 20 // stdout cap, bytes
	maxStderr        = 64 << 10
	maxReason        = 300 // characters of stderr's first line kept as a refusal reason
)

// ExitRefused is the exit status by which a program refuses a call: it did nothing, and
// the first line of its stderr says why.
const ExitRefused = 2

// Adapter starts run Tools. It is safe for concurrent use.
//
// The program named by the Tool's entry, a slash path relative to Root, is started
// directly (no shell) with:
//   - stdin: the arguments as one JSON object, keys sorted;
//   - argv: the same arguments as "name=value" words, sorted by name, where a string is
//     written as it is and other values as JSON — for programs that prefer argv;
//   - working directory: the file Source's root when the Tool runs against one, else Root;
//   - environment: the basics and the Tool's env.pass from the worker's, plus
//     DOCKET_INVOCATION_ID and, against a Source, DOCKET_SOURCE_TYPE and
//     DOCKET_SOURCE_ACCESS.
//
// It must write rows to stdout: one JSON object, a JSON array of objects, or JSON Lines.
// Exit 0 is success, exit 2 a refusal with stderr's first line as the reason. Any other
// ending of a read Tool is a refusal; of a write or run Tool, an unknown effect, because
// the program may have acted before it failed.
type Adapter struct {
	Root    string          // absolute worker root holding the programs; required
	Environ func() []string // the environment to scrub; default os.Environ
}

var (
	_ worker.Adapter     = (*Adapter)(nil)
	_ worker.ToolChecker = (*Adapter)(nil)
)

// CheckTool refuses an entry that is absolute or climbs out with "..".
func (a *Adapter) CheckTool(id contract.ToolID, t worker.Tool) error {
	e := t.Entry
	if path.IsAbs(e) || filepath.IsAbs(e) || strings.ContainsAny(e, "\\\x00") {
		return contract.Errorf(contract.CodeRunEntry, "tool %s entry %.80q is absolute; give a path relative to the worker root.", id, e)
	}
	if slices.Contains(strings.Split(e, "/"), "..") {
		return contract.Errorf(contract.CodeRunEntry, "tool %s entry %.80q climbs out with \"..\"; keep programs under the worker root.", id, e)
	}
	return nil
}

// Execute runs the program once.
func (a *Adapter) Execute(ctx context.Context, c worker.Call) (worker.Outcome, error) {
	prog, err := a.program(c)
	if err != nil {
		return worker.Refuse(err)
	}
	timeout, maxOut := DefaultTimeout, int64(DefaultMaxOutput)
	if f := c.Def.Fence; f != nil {
		if f.TimeoutMs > 0 {
			timeout = time.Duration(f.TimeoutMs) * time.Millisecond
		}
		if f.MaxBytes > 0 {
			maxOut = f.MaxBytes
		}
	}
	stdin, err := json.Marshal(c.Args)
	if err != nil {
		return worker.Refuse(fmt.Errorf("encode args: %w", err))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, argv(c.Args)...)
	cmd.Dir = a.Root
	if c.Source != nil && c.Source.Type == "file" {
		cmd.Dir = c.Source.Root
	}
	environ := os.Environ
	if a.Environ != nil {
		environ = a.Environ
	}
	var pass []string
	if c.Def.Env != nil {
		pass = c.Def.Env.Pass
	}
	cmd.Env = append(worker.ScrubEnv(environ(), pass), worker.CallEnv(c)...)
	cmd.Stdin = bytes.NewReader(stdin)
	stdout := &capped{max: maxOut, cancel: cancel}
	stderr := &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = time.Second // pipes held open by orphans do not hold the call
	err = cmd.Run()

	failed := func(cause error) (worker.Outcome, error) {
		if c.Def.Kind == contract.ToolKindRead {
			return worker.Refuse(cause)
		}
		return worker.Unknown(cause)
	}
	switch {
	case stdout.over:
		return failed(contract.Errorf(contract.CodeOutputTooBig, "tool %s wrote over %d bytes to stdout and was stopped; return fewer rows or raise fence.maxBytes.", c.Tool, maxOut))
	case errors.Is(context.Cause(ctx), errTimeout):
		return failed(contract.Errorf(contract.CodeToolTimeout, "tool %s ran past its limit of %s and was killed; raise fence.timeoutMs or make it faster.", c.Tool, timeout))
	case ctx.Err() != nil:
		return failed(fmt.Errorf("run %s: %w", c.Tool, context.Cause(ctx)))
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == ExitRefused {
			return worker.Refuse(contract.Errorf(contract.CodeRunRefused, "%s", firstLine(stderr.buf.String(), c.Tool)))
		}
		return failed(&contract.Error{Code: contract.CodeRunFailed,
			Teaching: fmt.Sprintf("tool %s exited with status %d; see the worker's log for its stderr.", c.Tool, exit.ExitCode()),
			Err:      fmt.Errorf("%w: stderr: %s", err, stderr.buf.String())})
	}
	if err != nil {
		// The program did not start (or could not be waited for): nothing ran.
		return worker.Refuse(fmt.Errorf("start %s: %w", c.Tool, err))
	}
	rows, err := parseRows(stdout.buf.Bytes())
	if err != nil {
		return failed(&contract.Error{Code: contract.CodeRunOutput,
			Teaching: fmt.Sprintf("tool %s exited 0 but its stdout is not JSON rows (an object, an array of objects or JSON Lines).", c.Tool), Err: err})
	}
	return worker.OK(rows...)
}

var errTimeout = errors.New("run: time limit")

// program resolves the entry under Root, refusing a missing file, a symbolic link or a
// path that leaves Root.
func (a *Adapter) program(c worker.Call) (string, error) {
	if err := a.CheckTool(c.Tool, c.Def); err != nil {
		return "", err
	}
	if !filepath.IsAbs(a.Root) {
		return "", fmt.Errorf("run adapter: root %q is not absolute", a.Root)
	}
	root, err := os.OpenRoot(a.Root)
	if err != nil {
		return "", fmt.Errorf("open worker root: %w", err)
	}
	defer root.Close()
	entry := path.Clean(c.Def.Entry)
	info, err := root.Lstat(entry)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", contract.Errorf(contract.CodeRunEntry, "tool %s entry %.80s does not exist under the worker root; install the program there.", c.Tool, entry)
		}
		return "", &contract.Error{Code: contract.CodeRunEntry, Teaching: fmt.Sprintf("tool %s entry %.80s is not a file under the worker root.", c.Tool, entry), Err: err}
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return "", contract.Errorf(contract.CodeRunEntry, "tool %s entry %.80s is not an executable regular file (symbolic links are refused); chmod +x a real file.", c.Tool, entry)
	}
	return filepath.Join(a.Root, filepath.FromSlash(entry)), nil
}

// argv writes args as sorted "name=value" words.
func argv(args contract.Args) []string {
	names := make([]string, 0, len(args))
	for n := range args {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		v := args[n]
		if v.Kind() == contract.ValueString {
			out = append(out, n+"="+v.Str())
			continue
		}
		b, _ := v.MarshalJSON()
		out = append(out, n+"="+string(b))
	}
	return out
}

func parseRows(b []byte) ([]contract.Args, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return []contract.Args{}, nil
	}
	if t[0] == '[' || json.Valid(t) {
		return worker.Rows(t, false)
	}
	return worker.Rows(t, true)
}

func firstLine(s string, tool contract.ToolID) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return fmt.Sprintf("tool %s refused the call without saying why.", tool)
	}
	if r := []rune(line); len(r) > maxReason {
		line = string(r[:maxReason]) + "…"
	}
	return line
}

// capped keeps up to max bytes; past that it records the overflow and cancels the call.
type capped struct {
	buf    bytes.Buffer
	max    int64
	over   bool
	cancel func()
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - int64(c.buf.Len()); int64(len(p)) > room {
		c.buf.Write(p[:max(room, 0)])
		if !c.over && c.cancel != nil {
			c.over = true
			c.cancel()
		}
		c.over = true
		return 0, io.ErrShortWrite
	}
	return c.buf.Write(p)
}
