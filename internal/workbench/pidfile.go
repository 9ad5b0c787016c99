package workbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/supervisor"
)

// stopPoll is how often [Stop] looks whether docket start has exited.
const stopPoll = 50 * time.Millisecond

// claimPidFile writes this process's pid to path, refusing when a live docket start
// already holds it, and returns the function that removes it.
func claimPidFile(path string) (func(), error) {
	if pid, err := readPidFile(path); err == nil && supervisor.Alive(pid) {
		return nil, fmt.Errorf("docket start is already running here (pid %d); stop it with docket stop", pid)
	}
	if err := datadir.WritePrivate(path, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

func readPidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds no pid", path)
	}
	return pid, nil
}

// Stop stops the docket start running on the data dir dir: it signals the pid in its
// pid file and waits up to wait for it to stop its children and exit, saying on w what
// it found.
func Stop(ctx context.Context, dir string, wait time.Duration, w io.Writer) error {
	path := filepath.Join(dir, PidFile)
	pid, err := readPidFile(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && !supervisor.Alive(pid) {
		// A pid file whose process is gone is stale; removing it is tidying, and a file
		// that is already gone is what we want.
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return fmt.Errorf("remove the stale %s: %w", path, rerr)
		}
		_, err := fmt.Fprintf(w, "docket start is not running on %s\n", dir)
		return err
	}
	if err != nil {
		return err
	}
	if err := supervisor.Terminate(pid); err != nil {
		return fmt.Errorf("stop docket start (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for supervisor.Alive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("docket start (pid %d) did not exit within %s; see %s", pid, wait, filepath.Join(dir, datadir.LogsDir))
		case <-tick.C:
		}
	}
	_, err = fmt.Fprintf(w, "docket start (pid %d) stopped\n", pid)
	return err
}
