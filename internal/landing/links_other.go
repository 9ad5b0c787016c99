//go:build !unix

package landing

import "io/fs"

// HardLinks returns 1: hard links are not counted on this system.
func HardLinks(fs.FileInfo) uint64 { return 1 }
