package tables

import (
	"context"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// Notifier wakes the waiters of a project's log when events are committed, and decides
// when a waiter must read the head from the database. The zero value is ready to use,
// for a store whose other writers are seen only by reading (SQLite: see Wait); a store
// with a listener calls SetListening first. A Notifier is safe for concurrent use.
type Notifier struct {
	mu sync.Mutex
	// waits holds one channel per project with waiters. Notify closes it and removes it,
	// which wakes every waiter at once; the next waiter makes a new one.
	waits map[string]chan struct{}
	// logs holds, per project, what this process knows of the log's head.
	logs map[string]*logState
	// hearing says whether a listener reports other writers' commits (see SetListening),
	// and gen counts its changes: a read made under another gen proves nothing now.
	hearing hearing
	gen     uint64
	// other is set once a read showed a head that neither this process's commits nor an
	// earlier read explain: another writer exists, and is seen only by reading.
	other bool
	// begun counts the commits begun (BeginCommit) and running those not yet ended: a
	// read that overlaps one may see its head before NotifyBatch records it.
	begun   uint64
	running int
	// expect counts, per project, the notifications the listener will deliver for this
	// process's own commits (Expect), which tell a waiter nothing NotifyBatch does not.
	expect map[string]int
}

// hearing is how a Notifier learns of other writers' commits.
type hearing int

const (
	byReading hearing = iota // only by reading the head (the zero value)
	deaf                     // a listener will report them, but is not listening now
	listening                // a listener reports every commit, through Notify
)

// logState is what a Notifier knows of one log.
type logState struct {
	// seen is the highest seq this process knows committed by its own commits
	// (NotifyBatch). It never runs ahead of the database.
	seen int64
	// notes counts the notifications of other writers' commits (Notify, Unexpect).
	notes uint64
	// read is the highest head a read found. readAt is the highest value of notes taken
	// before a read began while the listener listened, under gen readGen (readOK once
	// there is one): every commit past read has its notification counted after readAt,
	// since it committed after each read's snapshot, which came after its count was
	// taken. So while notes == readAt and the gen holds, no commit is past read.
	read    int64
	readAt  uint64
	readGen uint64
	readOK  bool
	// known is set once seen or read holds anything.
	known bool
}

func (n *Notifier) log(project string) *logState {
	l, ok := n.logs[project]
	if !ok {
		if n.logs == nil {
			n.logs = make(map[string]*logState)
		}
		l = &logState{}
		n.logs[project] = l
	}
	return l
}

// Notify wakes the waiters of each project for a commit reported by the listener. Unless
// it is one of this process's own (Expect), it counts the notification, so that the next
// wait reads the head (see Wait).
//
// A notification taken for this process's own may be another instance's, delivered
// first: that commit then came before the expected one's commit, which locked the log's
// head before Expect, so its seq is below the one NotifyBatch will give the waiters (or,
// if the commit fails, Unexpect counts a notification in its place).
func (n *Notifier) Notify(projects ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range projects {
		if n.expect[p] > 0 {
			n.expect[p]--
		} else {
			n.log(p).notes++
		}
		n.wakeLocked(p)
	}
}

// Expect records that b, whose calls locked the heads of the logs it appended to, is
// about to commit: the listener will deliver one notification of it per log (the
// event_heads trigger; PostgreSQL delivers one per payload and transaction). Call
// Unexpect if the commit fails.
func (n *Notifier) Expect(b *Batch) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p := range b.heads {
		if n.expect == nil {
			n.expect = make(map[string]int)
		}
		n.expect[p]++
	}
}

// Unexpect records that b, given to Expect, did not commit (or may not have): each of its
// logs counts a notification, so that its waiters read the head.
func (n *Notifier) Unexpect(b *Batch) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p := range b.heads {
		if n.expect[p] > 0 {
			n.expect[p]--
		}
		n.log(p).notes++
		n.wakeLocked(p)
	}
}

// SetListening records that the listener is (on) or is no longer (off) hearing every
// commit, and wakes every waiter so that it reads the head: notifications of commits
// made while it was not listening were never sent, and one that was sent when it stopped
// may never have arrived. The first call makes the Notifier rely on the listener:
// waiters then read only when a notification or a change of the listener may have
// shown them something.
func (n *Notifier) SetListening(on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	clear(n.expect) // their notifications may be lost, or come uncounted: either is safe
	n.hearing = deaf
	if on {
		n.hearing = listening
	}
	for p := range n.waits {
		n.wakeLocked(p)
	}
}

// Listening reports whether the listener listens (SetListening).
func (n *Notifier) Listening() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hearing == listening
}

// BeginCommit records that a commit of this process begins; EndCommit, after its
// NotifyBatch (if it committed), that it ended. A store whose other writers are seen
// only by reading calls them around each commit, so that a read that may have seen the
// commit before NotifyBatch recorded it is not taken for another writer's.
func (n *Notifier) BeginCommit() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.begun++
	n.running++
}

// EndCommit records the end of a commit begun with BeginCommit.
func (n *Notifier) EndCommit() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.running--
}

// NotifyBatch wakes the waiters of each log that b, which committed, appended to, and
// remembers each head, so that a waiter woken by them returns without reading the head
// from the database (with many calls held on one log, those reads were a read per waiter
// per commit).
func (n *Notifier) NotifyBatch(b *Batch) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p, h := range b.heads {
		l := n.log(p)
		l.seen = max(l.seen, h.Seq)
		l.known = true
		n.wakeLocked(p)
	}
}

func (n *Notifier) wakeLocked(project string) {
	if ch, ok := n.waits[project]; ok {
		close(ch)
		delete(n.waits, project)
	}
}

// token is what a waiter noted before reading the head, for sawHead.
type token struct {
	notes, gen, begun uint64
	hearing           hearing
	running           int
}

// wait returns the channel that a wake-up of project will close, the highest seq of
// the log known committed by this process, whether the waiter must read the head (a
// poll is due, or a read may show what the Notifier does not know), and the token of
// that read.
func (n *Notifier) wait(project string, after int64, poll bool) (<-chan struct{}, int64, bool, token) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ch, ok := n.waits[project]
	if !ok {
		if n.waits == nil {
			n.waits = make(map[string]chan struct{})
		}
		ch = make(chan struct{})
		n.waits[project] = ch
	}
	l := n.log(project)
	tok := token{notes: l.notes, gen: n.gen, begun: n.begun, hearing: n.hearing, running: n.running}
	return ch, l.seen, poll || !n.knowsLocked(l, after), tok
}

// knowsLocked reports whether a wait may skip its read of the head and sleep: what the
// Notifier knows reaches after, and
//   - with a listener that has been listening since the last read, no notification
//     came since that read began: a commit past it would have had one counted, and
//     its notification, delivered or still to come, wakes the waiter;
//   - without one, no read ever showed another writer: this process's commits wake
//     the waiter, and another process's first append is seen by the poll's read (the
//     SQLite store's documented bound), after which every wait reads.
func (n *Notifier) knowsLocked(l *logState, after int64) bool {
	known := max(l.seen, l.read)
	if !l.known || after < known {
		return false
	}
	switch n.hearing {
	case listening:
		return l.readOK && l.readGen == n.gen && l.readAt == l.notes
	case byReading:
		// A caller past what this process knows learned it from another writer.
		return !n.other && after == known
	default:
		return false
	}
}

// sawHead records seq, the head a read made with tok found.
func (n *Notifier) sawHead(project string, tok token, seq int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.log(project)
	// Another writer, if the read could not have seen a commit of this process that
	// NotifyBatch had not recorded yet (none ran during the read).
	if l.known && seq > max(l.seen, l.read) && tok.running == 0 && tok.begun == n.begun {
		n.other = true
	}
	// A read made while the listener listened, and still listens, holds with the latest
	// count of the reads under this gen: a notification counted before a read's count
	// was taken is of a commit that read saw, so every commit past the highest head read
	// has its notification counted after the highest count (see logState).
	if tok.hearing == listening && tok.gen == n.gen {
		if !l.readOK || l.readGen != n.gen {
			l.readAt, l.readGen, l.readOK = tok.notes, tok.gen, true
		} else {
			l.readAt = max(l.readAt, tok.notes)
		}
	}
	l.read = max(l.read, seq)
	l.known = true
}

// Wait implements [store.Store.Wait]: it returns once head(project) is past after, or a
// head given to NotifyBatch is, with that head's seq. It takes the wake-up channel before
// reading the head, so an event committed between the two is not missed. It reads the
// head only when that can show something the Notifier does not know (see knowsLocked):
// the waiters of a single writer, woken by NotifyBatch, read no head.
//
// A poll above zero also reads the head at that interval, whatever the Notifier knows,
// for writers that do not reach n (other processes) and notifications that were lost.
func (n *Notifier) Wait(ctx context.Context, head func(context.Context, string) (store.Head, error), project string, after int64, poll time.Duration) (int64, error) {
	var tick <-chan time.Time
	var t *time.Timer
	if poll > 0 {
		t = time.NewTimer(poll)
		defer t.Stop()
		tick = t.C
	}
	due := false
	for {
		woken, seen, read, tok := n.wait(project, after, due)
		if seen > after {
			return seen, nil
		}
		if read {
			h, err := head(ctx, project)
			if err != nil {
				return 0, err
			}
			n.sawHead(project, tok, h.Seq)
			if h.Seq > after {
				return h.Seq, nil
			}
			if t != nil {
				t.Reset(poll)
			}
			due = false
		}
		select {
		case <-woken:
		case <-tick:
			due = true
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
}
