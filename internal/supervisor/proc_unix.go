//go:build unix

package supervisor

import (
	"errors"
	"os/exec"
	"syscall"
)

// detach starts cmd in its own process group, so that a Ctrl-C at the terminal reaches
// the supervisor alone and the children stop in the order it chooses.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	orphanSignal(cmd.SysProcAttr)
}

// interrupt asks the child's process group to stop.
func interrupt(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}

// kill ends the child's process group at once.
func kill(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Alive reports whether a process with this pid exists (a zombie counts), for commands
// that find a supervisor through its pid file.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Terminate asks the process with this pid to stop, as Ctrl-C would.
func Terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
