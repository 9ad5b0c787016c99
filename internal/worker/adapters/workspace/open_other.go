//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

const readFlags = os.O_RDONLY

// links returns 1: hard links are not counted on this system.
func links(fs.FileInfo) uint64 { return 1 }
