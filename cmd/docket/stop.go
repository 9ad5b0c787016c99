package main

import (
	"context"
	"time"

	"github.com/docketrun/docket/internal/workbench"
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
	return workbench.Stop(ctx, dir, c.Wait, e.Stdout)
}
