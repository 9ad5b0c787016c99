// Package boards keeps each project's Board in step with the store and its event log,
// and runs every write on it: the Board cache (built from the project's releases and
// persisted nodes, then following the log on an [eventlog.Driver]: another instance's
// Board change is applied from its event, follow.go), the one write
// sequence ([Cache.Write]) and the installs of capability releases, which change what a
// Board declares. The store is the truth, so several docket serve may share one database.
package boards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// Case records are kept beside Board nodes in the store's node table, under their own
// kind, so that a Board and its Cases are written in the same transaction.
const (
	nodeKindCase  = "case"
	caseKeyPrefix = "case:"
)

// Cache holds each project's in-memory Board. The store is the truth
// (several `docket serve` may share one database): a Board is built from a project's
// releases and persisted nodes on first use ([Cache.Restore] builds them all at start),
// then follows the log (another instance's change applied from its event, follow.go),
// and every Board write commits only if no other writer changed the Board since (see
// [Cache.Write]).
type Cache struct {
	store  store.Store
	log    *slog.Logger
	now    func() time.Time
	signer *signing.Keyring // signs checkpoints; nil signs none
	every  int64            // a Board write signs the head when the log moved this many events past the last checkpoint

	// drv holds each project's Board State (follow.go) under the project's lock, with
	// the cursor of the project's log that the Board shares with the other parts of its
	// [eventlog.Log] (the operation ledger, the policies), and catches them up
	// (docs/architecture.md, "The project state and its driver").
	drv *eventlog.Driver[*boardPart]

	mu        sync.Mutex               // guards byProject; held only to find or create an entry
	byProject map[string]*projectBoard // created on first use, never removed
}

// projectBoard is what the Cache keeps beside one project's Board State. board.Board is
// not safe for concurrent use, so every call on it holds the project's lock (the first
// lock of the authority's lock order, taken by [Cache.lock], the lock of the project's
// log the Board shares with the other parts of its [eventlog.Log]), and a change holds it
// until its commit is known; the fields below but pub are guarded by that lock.
type projectBoard struct {
	// h is the project's State on the Cache's Driver, with its cursor; set by lock.
	h      *eventlog.Held[*boardPart]
	builds int // how often b was built, for tests that a fresh Board is kept
	// version changes whenever b may change: at each build or install, at each write,
	// before it runs, and at each change applied from the log (noteApplied). A reader may
	// keep what it derived from b alone under it (see [Cache.Read]).
	version uint64
	// signed is the head of this instance's last checkpoint, or the head at its first
	// build: a Board write signs the head once the log is every events past it.
	signed int64
	// changedAt is the head at which a check last found a Board change b lacked that
	// another instance made: until the log is staleSpan events past it, writes read the
	// head before they run ([Cache.WriteInTx]).
	changedAt int64
	// changed says b changed since it was last published: a write committed a change,
	// or a change was applied from the log.
	changed bool
	// pub is b as last published for the reads that take no lock (published.go): set
	// under the lock, read without it.
	pub atomic.Pointer[Published]
	// catchTo is the head the last catch-up of the Board brought it to (catchUpLocked).
	catchTo int64
}

// st is the project's Board State; the lock must be held. The Driver replaces the State
// when its cursor finds it ahead of the log, so it is looked up at each use.
func (pb *projectBoard) st() *boardPart { return pb.h.State() }

// restartLocked makes s the project's Board State at the project's cursor
// ([eventlog.Held.Remake]), where the log was caught up to: a Board built or installed
// from the store, or changed by a write of this instance that committed at the head the
// cursor stands at. The lock must be held.
func (pb *projectBoard) restartLocked(s *boardState) {
	cur := pb.st()
	s.seq, s.hash = cur.at, cur.atHash
	pb.h.Remake(&boardPart{boardState: s, at: cur.at, atHash: cur.atHash})
}

// settleLocked ends a write's hold on the Board (boardPart) when the write neither
// committed a change of it nor had it built again: the events the catch-ups of its steps
// kept from b are applied to it now, from memory or read from the store, so the Board
// stands at the cursor again; one it does not apply, or a read that fails, drops it, to
// be built again at its next use. The lock must be held.
func (a *Cache) settleLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard) {
	s := pb.st()
	if !s.hold {
		return
	}
	s.hold = false
	if s.b == nil || s.seq == s.at {
		return
	}
	to := s.at
	apply := func(e store.Event) error {
		if e.Seq > to {
			return nil
		}
		if err := s.boardState.Apply(e); err != nil {
			if need, ok := errors.AsType[*needRelease](err); ok {
				if again, _ := s.Load(ctx, a.store, e, need); again && s.b != nil {
					err = s.boardState.Apply(e)
				}
			}
			if err != nil {
				return err
			}
		}
		if event.ChangesBoard(e.Type) && !recordedWith[e.Type] {
			pb.version++
			pb.changed = true
		}
		return nil
	}
	for _, e := range eventlog.Recent(a.store, project, s.seq, to) {
		if err := apply(e); err != nil {
			s.drop(e.Seq)
			return
		}
	}
	if s.seq < to {
		if err := eventlog.Scan(ctx, a.store, project, s.seq, to, apply); err != nil {
			s.drop(s.seq + 1)
			return
		}
	}
	clear(s.releases)
	if s.seq != to || s.hash != s.atHash {
		s.drop(to)
	}
}

// staleSpan is how many events past the last Board change another instance made (as
// this one found it) a write still reads the head before it runs, rather than find the
// next such change in its transaction and run again: while another instance keeps
// changing the Board, a write costs one head read, not a second transaction.
const staleSpan = 64

// New returns the Cache of st's projects, none built yet; [Cache.Restore] builds
// them all. now is the clock of the events it appends; signer, when not nil, signs a
// checkpoint after each Case close, on a Board write once the log moved every events
// (<= 0: [DefaultCheckpointEvery]) past the last, and on [Cache.Checkpoint].
func New(st store.Store, log *slog.Logger, now func() time.Time, signer *signing.Keyring, every int64) *Cache {
	return newCache(st, log, now, signer, every).join(eventlog.NewLog(st))
}

// newCache is [New] before the Cache joins a Log.
func newCache(st store.Store, log *slog.Logger, now func() time.Time, signer *signing.Keyring, every int64) *Cache {
	if every <= 0 {
		every = DefaultCheckpointEvery
	}
	return &Cache{store: st, log: log, now: now, signer: signer, every: every, byProject: map[string]*projectBoard{}}
}

// Join returns the Cache of the projects of l's store, none built yet, as a part of l:
// each project's Board shares the project's one lock and one cursor with the other parts
// of l (the operation ledger, the policies), so a call holding the Board reads their
// States through it ([eventlog.Along], [Write.Held]) and never locks again
// (docs/architecture.md, "The lock order"). The rest is as [New].
func Join(l *eventlog.Log, log *slog.Logger, now func() time.Time, signer *signing.Keyring, every int64) *Cache {
	return newCache(l.Store(), log, now, signer, every).join(l)
}

// Log returns the project log the Cache's Boards are a part of.
func (a *Cache) Log() *eventlog.Log { return a.drv.Log() }

// join makes a the part of l it is. A fresh State holds no Board (newBoardPart).
func (a *Cache) join(l *eventlog.Log) *Cache {
	a.drv = eventlog.Join(l, newBoardPart)
	a.drv.OnApply(a.noteApplied)
	return a
}

// DefaultCheckpointEvery is how many events a log moves before a Board write signs its
// head.
const DefaultCheckpointEvery = 1000

// nowUTC is the clock, in UTC, at the precision the event log keeps.
func (a *Cache) nowUTC() time.Time { return a.now().UTC().Round(0) }

// lock locks project's Board State and returns what the Cache keeps beside it; the
// caller must unlock it.
func (a *Cache) lock(project contract.ProjectID) *projectBoard {
	h := a.drv.Lock(project)
	pb := a.get(project)
	pb.h = h
	return pb
}

// unlock releases what lock locked.
func (pb *projectBoard) unlock() { pb.h.Unlock() }

func (bs *Cache) get(project contract.ProjectID) *projectBoard {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	pb := bs.byProject[string(project)]
	if pb == nil {
		pb = &projectBoard{}
		bs.byProject[string(project)] = pb
	}
	return pb
}

// Restore builds the Board of every project from the store: its installed releases and
// its persisted nodes and Cases, each checked against the log ([CheckProjection]) once
// the log's hash chain is checked. A project whose Board does not build, or whose node table or releases disagree with its
// log, stops the start, because serving it would show a Board that is not what the log
// says. A log written before board.recorded events existed first adopts its node table
// as found (a snapshot record), so it is checked from then on.
func (a *Cache) Restore(ctx context.Context) error {
	ps, err := a.store.Projects(ctx)
	if err != nil {
		return fmt.Errorf("restore boards: %w", err)
	}
	for _, p := range ps {
		project := contract.ProjectID(p.ID)
		// The chain is checked before anything is read from the log, so a log cut short
		// (its records removed from the end) is not taken for one written before
		// records existed.
		if _, err := a.store.Verify(ctx, p.ID); err != nil {
			return fmt.Errorf("restore boards: %w", err)
		}
		// The check comes before the build, so a forged row or release is named as
		// such rather than as a Board that does not build.
		st, err := replay(ctx, a.store, project)
		if err != nil {
			return fmt.Errorf("restore boards: %w", err)
		}
		if !st.found {
			adopted, err := a.adopt(ctx, project)
			if err != nil {
				return fmt.Errorf("restore boards: %w", err)
			}
			if adopted {
				if st, err = replay(ctx, a.store, project); err != nil {
					return fmt.Errorf("restore boards: %w", err)
				}
			}
		}
		if err := st.check(ctx, a.store, project); err != nil {
			return fmt.Errorf("restore boards: %w", err)
		}
		pb := a.lock(project)
		err = a.buildLocked(ctx, project, pb, true)
		pb.unlock()
		if err != nil {
			return fmt.Errorf("restore boards: %w", err)
		}
	}
	return nil
}

// boardLocked returns project's Board, built from the store when it is missing, and
// otherwise caught up with the log: another instance's Board change is applied from its
// record, and built again only when no record holds it (follow.go). Events that never
// touch a Board only move its cursor on, so a busy log of Operations and leases costs one
// head read per call, not a rebuild. The lock must be held.
//
// Under a ctx that carries a head of the log read during the call ([eventlog.WithHead]),
// the Board is brought to that head without reading it again.
func (a *Cache) boardLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard) (*board.Board, error) {
	confirm := false
	if pb.st().b != nil {
		var head store.Head
		seq, known := eventlog.KnownHead(ctx, project)
		if known {
			head.Seq = max(seq, pb.h.Seq())
		} else {
			var err error
			if head, err = a.store.Head(ctx, string(project)); err != nil {
				return nil, fmt.Errorf("read head of %s: %w", project, err)
			}
		}
		ok, other, err := a.catchUpLocked(ctx, project, pb, head.Seq, !known)
		if err != nil {
			return nil, err
		}
		// Built again for another instance's change, the Board is made to follow the
		// next ones by their records (buildLocked).
		confirm = other
		if ok {
			if pb.changed {
				pb.publishLocked(true) // b applied committed changes only
			} else if p := pb.pub.Load(); p != nil && p.version == pb.version && pb.h.Committed() {
				p.advance(pb.st().seq) // what was published is b
			}
			return pb.st().b, nil
		}
	}
	// A Board built before that the State no longer holds, with no event that dropped it,
	// was lost to a rebuild of every part's State (the cursor found them ahead of the log,
	// or a part joined the log late): built again as after a failed commit, with the head
	// read on both sides of the nodes, so it follows the next changes by their records.
	if s := pb.st(); s.b == nil && s.dropped == 0 && pb.builds > 0 {
		confirm = true
	}
	if err := a.buildLocked(ctx, project, pb, confirm); err != nil {
		return nil, err
	}
	return pb.st().b, nil
}

// buildLocked (re)builds pb from the store. With confirm it reads the head again after
// the nodes, so that a Board no commit came in the middle of is linked at once and
// follows the next changes by their records (follow.go); without it, the Board is
// linked by the next catch-up to a head read that finds no Board change, or the next
// commit of its own. The lock must be held.
func (a *Cache) buildLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard, confirm bool) error {
	pb.st().drop(0) // until built
	pb.st().hold = false
	pb.version++
	// The head is read before the nodes: a write committed in between is then in the
	// Board but not at its seq, which makes the next check rebuild rather than miss it.
	head, err := a.store.Head(ctx, string(project))
	if err != nil {
		return fmt.Errorf("read head of %s: %w", project, err)
	}
	// The Board is made where the project's log stands, the cursor every part shares: the
	// log is caught up to the head read first, the other parts' States with it.
	if _, err := pb.h.CatchUpTo(ctx, a.store, head.Seq); err != nil {
		return err
	}
	src, err := a.sourcesOf(ctx, a.store, project)
	if err != nil {
		return err
	}
	decls, err := src.decls()
	if err != nil {
		return err
	}
	b, err := a.restoreBoard(ctx, a.store, project, decls)
	if err != nil {
		return err
	}
	linked := false
	if confirm {
		// Read again: the same head means no commit came between the two reads (every
		// write of nodes, releases or tool locks appends to the log and moves it), so b
		// is the log at head exactly.
		after, err := a.store.Head(ctx, string(project))
		if err != nil {
			return fmt.Errorf("read head of %s: %w", project, err)
		}
		linked = after == head && pb.h.Seq() == head.Seq
	}
	pb.restartLocked(&boardState{b: b, src: src, linked: linked})
	if pb.builds == 0 {
		pb.signed = head.Seq
	}
	pb.builds++
	pb.publishLocked(true) // built from the store, which holds only what was committed
	return nil
}

// updateBoard runs fn in one store transaction that commits only while pb.b still
// reflects project's log: it locks the log's head first, so no other instance appends
// until it commits, and returns errBoardStale when an event that may change a Board came
// after the State's seq. On commit the State moves to the new head. The lock must be
// held, and fn must persist what the caller changed in the Board. When the caller changed nothing on the Board
// (changed is false) there is nothing to keep from a stale Board, and fn just runs in a
// transaction; the next [Cache.boardLocked] reads past its events.
func (a *Cache) updateBoard(ctx context.Context, project contract.ProjectID, pb *projectBoard, changed bool, fn func(tx store.Tx) error) error {
	if !changed {
		return a.store.Update(ctx, fn)
	}
	var after store.Head
	err := a.store.Update(ctx, func(tx store.Tx) error {
		if err := lockFresh(ctx, tx, project, pb); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		var err error
		after, err = tx.LockHead(ctx, string(project))
		return err
	})
	if err == nil {
		a.committedLocked(ctx, project, pb, after.Seq)
	}
	return err
}

// lockFresh locks project's log head in tx, so no other writer appends until it commits,
// and refuses with errBoardStale when another instance wrote a Board event after the
// State's seq.
func lockFresh(ctx context.Context, tx store.Tx, project contract.ProjectID, pb *projectBoard) error {
	head, err := tx.LockHead(ctx, string(project))
	if err != nil {
		return err
	}
	ok, err := pb.unchanged(ctx, tx, project, head.Seq)
	if err != nil {
		return err
	}
	if !ok {
		return errBoardStale
	}
	return nil
}

// boardUnchanged reports whether project's log from seq from (exclusive) to to (inclusive)
// holds only events that never change a Board, so a Board that reflects from reflects to.
// When it does not, other says whether the change was read from r rather than from
// memory: another instance's (or one whose Update had not returned yet,
// [eventlog.Recent]), not one this process committed outside the Board's lock (a tool
// lock).
func boardUnchanged(ctx context.Context, r store.Reader, project contract.ProjectID, from, to int64) (ok, other bool, err error) {
	// The events this process committed are in memory; only the rest is read.
	for _, e := range eventlog.Recent(r, project, from, to) {
		if event.ChangesBoard(e.Type) {
			return false, false, nil
		}
		from = e.Seq
	}
	for from < to {
		evs, err := r.Events(ctx, string(project), from, boardScanPage)
		if err != nil {
			return false, false, fmt.Errorf("read events of %s: %w", project, err)
		}
		if len(evs) == 0 {
			return false, false, nil // the head says more; read it again from a rebuild
		}
		for _, e := range evs {
			if e.Seq > to {
				return true, false, nil
			}
			if event.ChangesBoard(e.Type) {
				return false, true, nil
			}
			from = e.Seq
		}
	}
	return from == to, false, nil
}

// unchanged is boardUnchanged from the State's seq to to, noting in pb.changedAt, at
// to, a change another instance made. The lock must be held.
func (pb *projectBoard) unchanged(ctx context.Context, r store.Reader, project contract.ProjectID, to int64) (bool, error) {
	ok, other, err := boardUnchanged(ctx, r, project, pb.st().seq, to)
	if other {
		pb.changedAt = to
	}
	return ok, err
}

// boardScanPage bounds one read of events while catching a Board up; a longer gap is
// read page by page, and a Board event in it ends the read with a rebuild.
const boardScanPage = 64

// sources is where what a project's Board declares comes from: the installed releases'
// declarations, one a capability, and the Tools locked on its live Connections, from which
// the built-in release of direct Actions is made (docs/workers.md, "Direct Actions"). A
// lock is changed only with an event that holds it in full (event.ToolLocked,
// event.ToolUnlocked, event.ToolApprovalSet, event.ConnectionRevoked), and an install
// with one that names a content-addressed release (event.CapabilityInstalled), so a Board
// follows those changes from the log (follow.go).
type sources struct {
	installed []board.Declarations                                   // in no particular order: decls sorts them
	locks     map[contract.ConnectionID]map[string]contract.ToolLock // by Connection, then Tool
}

// decls is what src declares: the installed releases in release id order, compared as
// bytes in Go, then the direct Actions. The order is the Board's (the order of its Case
// Types and Actions, and of its capability rules' node numbers), so it is made here, the
// same on every path that makes a Board (a build, an install, a change applied from the
// log), and never taken from the store, whose order of releases depends on the database's
// collation.
func (src *sources) decls() ([]board.Declarations, error) {
	var locks []contract.ToolLock
	for _, ls := range src.locks {
		for _, l := range ls {
			locks = append(locks, l)
		}
	}
	// Direct keeps one lock a Tool whatever their order (the latest, then by Connection).
	direct, ok, err := capability.Direct(locks)
	if err != nil {
		return nil, err
	}
	decls := make([]board.Declarations, 0, len(src.installed)+1)
	decls = append(decls, src.installed...)
	slices.SortStableFunc(decls, func(x, y board.Declarations) int {
		return strings.Compare(releaseID(x.Release), releaseID(y.Release))
	})
	if ok {
		decls = append(decls, direct)
	}
	return decls, nil
}

// with returns src with d installed, in place of an installed version of the same
// capability; src is left as it was.
func (src *sources) with(d board.Declarations) *sources {
	id := releaseID(d.Release)
	next := &sources{installed: make([]board.Declarations, 0, len(src.installed)+1), locks: src.locks}
	for _, in := range src.installed {
		if releaseID(in.Release) != id {
			next.installed = append(next.installed, in)
		}
	}
	next.installed = append(next.installed, d)
	return next
}

// releaseID is the capability id of a release named "<id>@<version>".
func releaseID(release string) string {
	id, _, _ := strings.Cut(release, "@")
	return id
}

// sourcesOf reads project's sources from r.
func (a *Cache) sourcesOf(ctx context.Context, r store.Reader, project contract.ProjectID) (*sources, error) {
	ins, err := r.Installs(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("list installs of %s: %w", project, err)
	}
	src := &sources{locks: map[contract.ConnectionID]map[string]contract.ToolLock{}}
	for _, in := range ins {
		rel, err := r.Release(ctx, in.ReleaseID, in.Version)
		if err != nil {
			return nil, fmt.Errorf("load release %s@%s: %w", in.ReleaseID, in.Version, err)
		}
		pkg, err := unpackRelease(rel.Content)
		if err != nil {
			return nil, fmt.Errorf("load release %s@%s: %w", in.ReleaseID, in.Version, err)
		}
		src.installed = append(src.installed, pkg.Declarations)
	}
	cs, err := r.Connections(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("read connections of %s: %w", project, err)
	}
	for _, cn := range cs {
		if cn.RevokedAt != nil {
			continue
		}
		ls, err := r.ToolLocks(ctx, cn.ID)
		if err != nil {
			return nil, fmt.Errorf("read tool locks of %s: %w", cn.ID, err)
		}
		for _, l := range ls {
			lk, err := identity.LockOf(l)
			if err != nil {
				return nil, err
			}
			src.put(lk)
		}
	}
	return src, nil
}

// put keeps l as its Connection's lock of its Tool.
func (src *sources) put(l contract.ToolLock) {
	ls := src.locks[l.Connection]
	if ls == nil {
		ls = map[string]contract.ToolLock{}
		src.locks[l.Connection] = ls
	}
	ls[l.Tool] = l
}

// restoreBoard builds project's Board from decls and the nodes and Cases r holds.
func (a *Cache) restoreBoard(ctx context.Context, r store.Reader, project contract.ProjectID, decls []board.Declarations) (*board.Board, error) {
	rows, err := r.Nodes(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("load nodes of %s: %w", project, err)
	}
	var nodes []contract.Node
	var cases []contract.Case
	for _, row := range rows {
		switch row.Kind {
		case nodeKindCase:
			var c contract.Case
			if err := json.Unmarshal(row.Data, &c); err != nil {
				return nil, fmt.Errorf("decode case %s of %s: %w", row.ID, project, err)
			}
			cases = append(cases, c)
		default:
			var n contract.Node
			if err := json.Unmarshal(row.Data, &n); err != nil {
				return nil, fmt.Errorf("decode node %s of %s: %w", row.ID, project, err)
			}
			nodes = append(nodes, n)
		}
	}
	b, err := board.Restore(board.Config{Declarations: decls}, nodes, cases)
	if err != nil {
		return nil, fmt.Errorf("rebuild board of %s: %w", project, err)
	}
	return b, nil
}

// Change is what a Board call produced, for a write to persist with its event.
type Change struct {
	Nodes []contract.NodeChange
	Cases []contract.Case // Case records that changed
	Event event.Payload   // the change's event, e.g. an event.BatchAppliedData; never a secret
}

// dropBoardLocked rebuilds pb after a commit the store refused, so memory never holds a
// change the log lacks, on a context that outlives the caller's so a cancelled request
// cannot leave it stale. The lock must be held.
func (a *Cache) dropBoardLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard) {
	pb.st().drop(0)
	pb.st().hold = false
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rebuildLimit)
	defer cancel()
	// With the head read on both sides, so the Board follows the next changes by their
	// records at once: this is the slow path already.
	if err := a.buildLocked(rctx, project, pb, true); err != nil {
		a.log.ErrorContext(ctx, "board rebuild failed; next call retries", logProject, project, logErr, err)
	}
}

// rebuildLimit bounds rebuilding a Board after a failed commit.
const rebuildLimit = 30 * time.Second

// persistChange writes ch's node and Case records in tx and returns the [event.BoardRecordedData] of
// what it wrote, with the same bytes, for the log; ok is false when ch wrote no record.
// The records are written by one [store.Tx.PutNodes] per run of puts between deletes
// (one for a change that deletes nothing), which leaves the rows that a PutNode each
// would: a batch of ten facts is one store call, not ten.
func persistChange(ctx context.Context, tx store.Tx, project contract.ProjectID, ch Change) (rec event.BoardRecordedData, ok bool, err error) {
	if ch.Event == nil {
		return event.BoardRecordedData{}, false, errors.New("change has no event type")
	}
	if !event.ChangesBoard(ch.Event.EventType()) {
		return event.BoardRecordedData{}, false, fmt.Errorf("change names event type %s, which marks events that leave the Board alone", ch.Event.EventType())
	}
	puts := make([]store.Node, 0, len(ch.Nodes)+len(ch.Cases))
	flush := func() error {
		if len(puts) == 0 {
			return nil
		}
		err := tx.PutNodes(ctx, string(project), puts)
		puts = puts[:0]
		return err
	}
	for _, nc := range ch.Nodes {
		switch {
		case nc.Put != nil:
			data, err := json.Marshal(nc.Put)
			if err != nil {
				return event.BoardRecordedData{}, false, fmt.Errorf("encode node %s: %w", nc.Put.NodeID, err)
			}
			puts = append(puts, store.Node{ID: nc.Put.NodeID, Kind: string(nc.Put.Kind), Data: data})
			rec.Nodes = append(rec.Nodes, data)
		case nc.Delete != "":
			// A put before the delete is written first, as the change orders them.
			if err := flush(); err != nil {
				return event.BoardRecordedData{}, false, err
			}
			if err := tx.DeleteNode(ctx, string(project), nc.Delete); err != nil {
				return event.BoardRecordedData{}, false, err
			}
			rec.Deleted = append(rec.Deleted, nc.Delete)
		}
	}
	for _, c := range ch.Cases {
		data, err := json.Marshal(c)
		if err != nil {
			return event.BoardRecordedData{}, false, fmt.Errorf("encode case %s: %w", c.CaseID, err)
		}
		puts = append(puts, store.Node{ID: caseKeyPrefix + string(c.CaseID), Kind: nodeKindCase, Data: data})
		rec.Cases = append(rec.Cases, data)
	}
	if err := flush(); err != nil {
		return event.BoardRecordedData{}, false, err
	}
	return rec, len(rec.Nodes)+len(rec.Deleted)+len(rec.Cases) > 0, nil
}

// Read runs fn on project's Board for reading, under the project's lock, with the head of
// the log the Board was just found to reflect: a caller that keeps another projection
// of the same log reads no events when that projection is already there. version
// names what b holds: it changes whenever b may have changed (a build, an install, a
// write), so what fn derives from b alone may be kept under it and used again while
// Read passes the same version; the Board is caught up with the log first either way.
func (a *Cache) Read(ctx context.Context, project contract.ProjectID, fn func(b *board.Board, head int64, version uint64) error) error {
	pb := a.lock(project)
	defer pb.unlock()
	b, err := a.boardLocked(ctx, project, pb)
	if err != nil {
		return err
	}
	return fn(b, pb.st().seq, pb.version)
}

// ReadHeld is [Cache.Read] for a read that also reads other parts' States of the
// project's log (the operation ledger, the policies): fn gets the project's log as held
// under its lock, through which it takes theirs ([eventlog.Along]) rather than lock
// again; it must not keep it past its return.
func (a *Cache) ReadHeld(ctx context.Context, project contract.ProjectID, fn func(b *board.Board, head int64, version uint64, h eventlog.Holding) error) error {
	pb := a.lock(project)
	defer pb.unlock()
	b, err := a.boardLocked(ctx, project, pb)
	if err != nil {
		return err
	}
	return fn(b, pb.st().seq, pb.version, pb.h)
}

// Builds reports how often project's Board was built from the store, so tests can show
// that a fresh Board is kept and a stale one rebuilt.
func (a *Cache) Builds(project contract.ProjectID) int {
	pb := a.lock(project)
	defer pb.unlock()
	return pb.builds
}

// View runs fn on project's Board for reading, under the project's lock.
func (a *Cache) View(ctx context.Context, project contract.ProjectID, fn func(b *board.Board) error) error {
	return a.Read(ctx, project, func(b *board.Board, _ int64, _ uint64) error { return fn(b) })
}

// Cases lists project's Cases, oldest first.
func (a *Cache) Cases(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Case, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	var out []contract.Case
	err := a.View(ctx, project, func(b *board.Board) error {
		out = b.Cases()
		return nil
	})
	if out == nil {
		out = []contract.Case{}
	}
	return out, err
}

// Case returns one Case of project.
func (a *Cache) Case(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID) (contract.Case, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Case{}, err
	}
	var out contract.Case
	err := a.View(ctx, project, func(b *board.Board) error {
		var ok bool
		if out, ok = b.Case(id); !ok {
			return contract.Errorf(contract.CodeCaseNotFound, "project %q has no Case %q; list them with docket case list.", project, id)
		}
		return nil
	})
	return out, err
}

// unpackRelease decodes a release's stored content (its files as a JSON object) and
// validates it again, so that a Board is only ever built from a checked package.
func unpackRelease(content []byte) (*capability.Package, error) {
	var files map[string][]byte
	if err := json.Unmarshal(content, &files); err != nil {
		return nil, fmt.Errorf("decode release content: %w", err)
	}
	return capability.Check(files)
}

// packRelease encodes the files a package's digest covers, in a form unpackRelease reads.
// encoding/json sorts map keys, so equal packages pack to equal bytes.
func packRelease(pkg *capability.Package, files map[string][]byte) ([]byte, error) {
	kept := make(map[string][]byte, len(pkg.Files))
	for _, name := range pkg.Files {
		kept[name] = files[name]
	}
	return json.Marshal(kept)
}
