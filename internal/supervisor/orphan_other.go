//go:build unix && !linux

package supervisor

import "syscall"

// orphanSignal does nothing where the kernel has no parent-death signal.
func orphanSignal(*syscall.SysProcAttr) {}
