package conversation

import (
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// Bounds on what one Agent's runtime may save, so that an Agent's token cannot grow the
// log and the store without end (docs/security.md, "Bounds"); one save is bounded by
// [contract.MaxConversationEntry]. A save over one is refused conversation_limit.
const (
	// MaxSavedPerHour is how many bytes of saves one Agent may append in any hour.
	MaxSavedPerHour = 64 << 20
	// MaxStartedPerHour is how many conversations one Agent may start by saving in any
	// hour: as many as it may be given tasks, each of which may start one.
	MaxStartedPerHour = 300
)

// saveWindow is the window the bounds count saves in.
const saveWindow = time.Hour

// saveMark is what the bounds keep of one save: when, its size, and whether it started
// its conversation.
type saveMark struct {
	at    time.Time
	bytes int
	fresh bool
}

// mark records m, a save of actor, and forgets actor's saves an hour older.
func (x *index) mark(actor string, m saveMark) {
	marks := append(x.recent[actor], m)
	i := 0
	for i < len(marks) && !marks[i].at.After(m.at.Add(-saveWindow)) {
		i++
	}
	x.recent[actor] = marks[i:]
}

// checkBounds refuses a save of size bytes by c to conversation id at now when, with it,
// c's saves of the last hour would pass [MaxSavedPerHour] bytes, or start more than
// [MaxStartedPerHour] conversations. The write sequence catches x up under the log's head
// lock, so saves of one Agent count one another.
func (x *index) checkBounds(c identity.Caller, id contract.ConversationID, size int, now time.Time) error {
	actor := string(c.Principal())
	bytes, started := size, 0
	if e := x.convs[conversationKey{actor, id}]; e == nil || e.seq == 0 {
		started++
	}
	since := now.Add(-saveWindow)
	for _, m := range x.recent[actor] {
		if !m.at.After(since) {
			continue
		}
		bytes += m.bytes
		if m.fresh {
			started++
		}
	}
	switch {
	case bytes > MaxSavedPerHour:
		return contract.Errorf(contract.CodeConversationLimit, "agent %s saved %d bytes of conversations in the last hour, the most it may is %d; save only the messages that changed, or wait", c.Name, bytes-size, MaxSavedPerHour)
	case started > MaxStartedPerHour:
		return contract.Errorf(contract.CodeConversationLimit, "agent %s started %d conversations in the last hour, the most it may; continue one of them, or wait", c.Name, started-1)
	}
	return nil
}
