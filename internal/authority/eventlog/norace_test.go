//go:build !race

package eventlog_test

// raceEnabled: see race_test.go.
const raceEnabled = false
