//go:build !unix

package run

import "os/exec"

// setProcessGroup leaves cmd as it is: without process groups, cancellation kills only
// the program itself.
func setProcessGroup(*exec.Cmd) {}
