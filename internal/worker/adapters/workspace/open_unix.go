//go:build unix

package workspace

import (
	"os"
	"syscall"
)

// readFlags open a file for reading without blocking: a FIFO swapped in after the checks
// cannot hold the call.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
