package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docketrun/docket/internal/supervisor"
)

// stopCmd stops the docket start running on this data dir: it signals the pid in its
// pid file and waits for it to stop its children and exit.
type stopCmd struct {
	Wait time.Duration `help:"How long to wait for it to exit." default:"40s"`
}

func (c *stopCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, startPidFile)
	pid, err := readPidFile(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && !supervisor.Alive(pid) {
		os.Remove(path)
		_, err := fmt.Fprintf(e.Stdout, "docket start is not running on %s\n", dir)
		return err
	}
	if err != nil {
		return err
	}
	if err := supervisor.Terminate(pid); err != nil {
		return fmt.Errorf("stop docket start (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Wait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for supervisor.Alive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("docket start (pid %d) did not exit within %s; see %s", pid, c.Wait, filepath.Join(dir, logsDir))
		case <-tick.C:
		}
	}
	_, err = fmt.Fprintf(e.Stdout, "docket start (pid %d) stopped\n", pid)
	return err
}
