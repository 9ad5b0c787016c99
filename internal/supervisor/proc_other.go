//go:build !unix

package supervisor

import (
	"os"
	"os/exec"
)

// detach does nothing where there are no process groups.
func detach(*exec.Cmd) {}

// interrupt asks the child to stop; where interrupts cannot be sent it is killed.
func interrupt(cmd *exec.Cmd) error {
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// kill ends the child at once.
func kill(cmd *exec.Cmd) { cmd.Process.Kill() }

// Alive reports whether a process with this pid exists, for commands that find a
// supervisor through its pid file.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// Terminate ends the process with this pid; without signals, it cannot be asked.
func Terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
