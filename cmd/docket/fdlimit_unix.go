//go:build unix

package main

import "syscall"

// fdLimit returns this process's limit of open files, or 0 when it cannot be read.
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
