package task

import (
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Bounds on what may be posted for one Agent, so that no Agent, hook token or delegate
// grows the log, the store and every serve's memory without end (docs/security.md,
// "Bounds"). A post over one is refused task_limit, naming the bound and what frees it.
const (
	// DefaultMaxOpen is how many of one Agent's tasks and messages may be open (queued,
	// claimed or waiting) at once.
	DefaultMaxOpen = 100
	// DefaultMaxPerHour is how many tasks and messages may be posted for one Agent in any
	// hour, open or not.
	DefaultMaxPerHour = 300
)

// rateWindow is the window [DefaultMaxPerHour] counts posts in.
const rateWindow = time.Hour

// open reports whether t still holds a place among its Agent's open tasks.
func open(t *contract.Task) bool {
	return !t.State.Finished()
}

// checkBounds refuses a post for agent at now when the Agent has maxOpen tasks open, or
// had maxPerHour posted in the hour before now.
func (l *ledger) checkBounds(agent contract.AgentID, name string, now time.Time, maxOpen, maxPerHour int) error {
	openN, recent := 0, 0
	since := now.Add(-rateWindow)
	for _, id := range l.order {
		t := l.tasks[id]
		if t.Agent != agent {
			continue
		}
		if open(t) {
			openN++
		}
		if t.PostedAt.After(since) {
			recent++
		}
	}
	switch {
	case openN >= maxOpen:
		return contract.Errorf(contract.CodeTaskLimit, "agent %s has %d open tasks, the most it may; let its runtime finish some, or see them with docket task list --agent %s", name, openN, name)
	case recent >= maxPerHour:
		return contract.Errorf(contract.CodeTaskLimit, "agent %s was given %d tasks and messages in the last hour, the most it may take in an hour; post again later", name, recent)
	}
	return nil
}
