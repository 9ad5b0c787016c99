//go:build race

package eventlog_test

// raceEnabled: the race detector's instrumentation allocates on its own, so a test that
// counts allocations checks its bound only without it.
const raceEnabled = true
