//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"
)

// readFlags open a file for reading without blocking: a FIFO swapped in after the checks
// cannot hold the call.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK

// links returns the number of hard links of the file info describes.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
