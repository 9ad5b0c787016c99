package supervisor

import "syscall"

// orphanSignal makes Linux interrupt a child whose supervisor died without stopping it
// (killed, for example), so that no serve or worker outlives its parent unnoticed.
func orphanSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGINT }
