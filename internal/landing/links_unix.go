//go:build unix

package landing

import (
	"io/fs"
	"syscall"
)

// HardLinks returns the number of hard links of the file info describes.
func HardLinks(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
