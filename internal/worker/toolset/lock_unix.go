//go:build unix

package toolset

import (
	"fmt"
	"os"
	"syscall"
)

// lockEdits takes an exclusive lock on the file at path (created 0600 when absent) for one
// edit, so that two processes adding to one worker's files (docket start's console and a
// docket worker verb) never interleave a read and a write. The returned function releases it.
func lockEdits(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the worker's files: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the worker's files: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
