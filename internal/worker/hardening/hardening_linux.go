// Package hardening provides what a worker does to its own process so that the programs
// it starts cannot read its secrets from it.
package hardening

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Process marks the worker process non-dumpable (prctl PR_SET_DUMPABLE 0). The kernel
// then gives /proc/<pid>/environ, mem, maps and fd of the worker to root alone, and
// refuses ptrace from processes of the same user that are not its ancestors, so a
// program the worker starts cannot read the Connection key from its parent's
// environment or memory. It also turns off core dumps, which would hold the key.
func Process() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("mark the worker non-dumpable: %w", err)
	}
	return nil
}
