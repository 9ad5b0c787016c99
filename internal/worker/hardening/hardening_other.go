//go:build !linux

package hardening

// Process does nothing on this system: there is no PR_SET_DUMPABLE. Run the worker as
// its own OS user to keep same-user programs from reading its memory.
func Process() error { return nil }
