//go:build unix

package run

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in its own process group and makes cancellation kill the
// whole group, so children a program forked die with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
