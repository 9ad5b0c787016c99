package boards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// A Board follows its log as the other parts' States follow theirs (docs/architecture.md,
// "The project state and its driver"): a change another instance committed is applied
// from its board.recorded event, which holds every node and Case record the change wrote
// in full ([board.Board.Apply]), rather than the Board being built again from the store;
// a change of the Tools locked on a live Connection, whose event holds the lock in full,
// and an install (capability.installed), whose event names a release that is
// content-addressed and immutable, make the Board again in memory from the declarations
// they then give and the nodes and Cases it holds, and so does a snapshot record, which
// holds every row. The release an install names is read by the catch-up before the State
// applies the event, outside Apply, which stays pure, and applied only when its content
// digests to the digest the event names. So every event that changes a Board is applied
// from the log, and a State fresh at the log's start that applies it all holds the Board
// a build from the store makes (freshBoardState); the Board is still built from the
// store at a start, and when its cursor does not link or an event does not apply.
//
// The Board State is a part of the project's log ([eventlog.Log]) that the operation
// ledger and the policies join too: one lock and one cursor for the three, the cursor
// linked by hash, and each event applied to every part's State by whichever part catches
// the log up (boardPart): an event that does not link is never applied (the Log gives
// every part a fresh State, and a fresh Board State holds no Board, so the Board is built
// again). The Cache keeps its own write sequence on top ([Cache.Write]): the Board is
// built from the store, installed, or changed in memory by a write of this instance
// before its commit; each is made the State where the project's log stands once the log
// was caught up to the head it is the log at ([eventlog.Held.Remake]); a write holds the
// Board meanwhile, so the catch-ups its steps make (the ledger's, inside its transaction
// too) apply nothing to it; and when the store refuses the commit it is built again
// (step 4 of "The write sequence"), so the Board never holds an event its log lacks.
// What the Board publishes for the reads that take no lock (published.go) is published
// only while every event the log applied was seen committed ([eventlog.Held.Committed]).

// recordedWith are the types of the Board changes a write persists ([Write.Persist]):
// what such a change did to the Board is all in the board.recorded event that follows it
// in the same commit, and a change that wrote no record changed no row a Board is built
// from. Every other type that may change a Board makes it be built again.
var recordedWith = map[string]bool{
	event.CaseOpened:      true,
	event.CaseClosed:      true,
	event.CaseHeld:        true,
	event.CaseReleased:    true,
	event.BatchApplied:    true,
	event.ActionApplied:   true,
	event.ActionCompleted: true,
}

// lockChanges are the types of the events that change the Tools locked on a live
// Connection, and so the direct Actions a Board declares; each holds the lock in full,
// or names the Connection revoked.
var lockChanges = map[string]bool{
	event.ToolLocked:        true,
	event.ToolApprovalSet:   true,
	event.ToolUnlocked:      true,
	event.ConnectionRevoked: true,
}

// catchUpLocked brings the project's log to the head to ([eventlog.Held.CatchUpTo]),
// every part's State with it: this process's events from memory, the rest read from the
// store a page at a time. The Board applies each event as its State follows the log
// (boardPart), the release an install names read ahead by the catch-up (boardPart.Load).
// It reports false when the Board must be built again instead: the State dropped it at
// an event it does not apply (errBuild), or the cursor found the State ahead of the log
// and made every part's fresh (a fresh Board State holds no Board), or the log ended
// before to; other then says the event dropped at was read from the store (another
// instance's). read says to was read from the store after b was built: an unlinked Board
// that finds no Board change up to it is then the log there exactly (what it may have
// held past its seq would be such a change), and is linked. The lock must be held.
func (a *Cache) catchUpLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard, to int64, read bool) (ok, other bool, err error) {
	pb.catchTo = to
	if _, err := pb.h.CatchUpTo(ctx, a.store, to); err != nil {
		return false, false, err
	}
	s := pb.st()
	if s.b == nil {
		if seq := s.dropped; seq > 0 {
			if other = len(eventlog.Recent(a.store, project, seq-1, seq)) == 0; other {
				pb.changedAt = to // another instance's change, as unchanged notes it
			}
		}
		return false, other, nil
	}
	if s.seq < to {
		return false, false, nil // the head says more; read it again from a build
	}
	if read {
		s.linked = true
	}
	return true, false, nil
}

// noteApplied is the Driver's notification of an event the project's log applied
// ([eventlog.Driver.OnApply]), under the project's lock, whichever part's catch-up applied
// it (a claim's, a held call's follow goroutine): a change of b makes what readers derived
// from it stale, and one read from the store, not committed by this process (another
// instance's, or one whose Update had not returned yet, [eventlog.Recent]), is noted as
// unchanged notes it.
func (a *Cache) noteApplied(project contract.ProjectID, s *boardPart, e store.Event) {
	if !s.applied {
		return
	}
	pb := a.get(project)
	if !recordedWith[e.Type] {
		pb.version++ // b changed: what a reader derived from it is stale
		pb.changed = true
	}
	if len(eventlog.Recent(a.store, project, e.Seq-1, e.Seq)) == 0 {
		pb.changedAt = max(pb.catchTo, e.Seq)
	}
}

// needRelease refuses an install whose release the State was not handed: the catch-up
// reads it (boardPart.Load) and applies the event again. It is an errBuild, so a State
// that is not caught up by a Log (a test's) builds the Board again instead.
type needRelease struct {
	seq         int64
	id, version string
}

func (n *needRelease) Error() string {
	return fmt.Sprintf("release %s@%s installed at seq %d was not read", n.id, n.version, n.seq)
}

func (n *needRelease) Unwrap() error { return errBuild }

// boardPart is the Board's State on the project's log, which the Board shares with the
// operation ledger and the policies (docs/architecture.md, "The project state and its
// driver"): one lock, one cursor, and each event applied to every part's State by
// whichever part catches the log up. It is the Board as made (boardState), the seq and
// hash of the last event the cursor applied as this State saw it (at, atHash: where a
// Board is made, [eventlog.Held.Remake]), and what a write holds. Its Apply never fails
// the catch-up, which is every part's: an event the Board does not apply drops the Board
// (built again from the store at its next use, at the cursor), and the release an install
// names is read by the catch-up (Load, [eventlog.Loader]).
//
// b is the log at seq; while it is not dropped and no write holds it, seq is at. A write
// changes b in memory before its commit (hold, set for the whole write by
// [Cache.Write]): the catch-ups its steps make (the operation ledger's, inside its
// transaction too) then apply nothing to b. An event that leaves a Board alone moves seq
// on with at, so the write's check that no Board change came since b's seq (LockFresh,
// Fresh) reads only what follows; a Board change stops seq before it, so that check finds
// it. Once the write committed b is made again at the cursor (committedLocked), once it
// was refused b is built again (dropBoardLocked), and a write that changed nothing brings
// b up to the cursor itself (settleLocked).
type boardPart struct {
	*boardState
	at     int64
	atHash store.Hash
	hold   bool
	// dropped is the seq of the event at which the State dropped its Board (0: none since
	// it was made), for the catch-up to say whose it was.
	dropped int64
	// applied says the last event applied changed b or its sources (noteApplied).
	applied bool
}

var _ eventlog.State = (*boardPart)(nil)
var _ eventlog.Loader = (*boardPart)(nil)

// newBoardPart is the Board's State of an empty log, and after the cursor found the
// States ahead of the log: it holds no Board, so the first use builds it from the store,
// which a replay of the log from its start would make the same (freshBoardState) at the
// cost of every event.
func newBoardPart() *boardPart { return &boardPart{boardState: &boardState{}} }

// Apply applies e, the cursor's next event, to the Board ([boardState.Apply]) when the
// Board stands at the cursor and no write holds it; see [boardPart]. It refuses only an
// install whose release it was not handed, for the catch-up to read it (Load); any other
// event it does not apply drops the Board.
func (p *boardPart) Apply(e store.Event) error {
	p.applied = false
	switch {
	case p.b == nil || p.seq != p.at:
		// No Board, or a write's Board that a Board change passed by: nothing to apply to.
	case p.hold:
		if !event.ChangesBoard(e.Type) {
			p.seq, p.hash = e.Seq, e.Hash
		}
	default:
		err := p.boardState.Apply(e)
		if _, need := errors.AsType[*needRelease](err); need {
			return err
		}
		if err != nil {
			p.drop(e.Seq)
		} else {
			p.applied = event.ChangesBoard(e.Type)
		}
		clear(p.releases) // what an install was handed is used, or read again
	}
	p.at, p.atHash = e.Seq, e.Hash
	return nil
}

// drop drops the Board at the event of seq seq: it is built again at its next use.
func (p *boardPart) drop(seq int64) {
	p.b, p.dropped = nil, seq
	clear(p.releases)
}

// Load reads the release an install names ([eventlog.Loader]) into s.releases, for
// Apply to apply it (boardState.applyInstall): a release is content-addressed and
// immutable, and its install committed it with the event (or, read in the transaction
// that applies a batch-mate's install, holds it there), so what r reads is the release
// the event installed, which Apply checks by digest. A release that cannot be read or
// does not unpack, or was handed already, drops the Board, and Apply runs again on none:
// the build that follows reads the releases itself and reports what fails.
func (p *boardPart) Load(ctx context.Context, r store.Reader, e store.Event, refused error) (bool, error) {
	need, ok := errors.AsType[*needRelease](refused)
	if !ok {
		return false, nil
	}
	name := need.id + "@" + need.version
	if _, ok := p.releases[name]; ok {
		p.drop(e.Seq)
		return true, nil
	}
	rel, err := r.Release(ctx, need.id, need.version)
	if err != nil {
		p.drop(e.Seq)
		return true, nil
	}
	pkg, err := unpackRelease(rel.Content)
	if err != nil {
		p.drop(e.Seq)
		return true, nil
	}
	if p.releases == nil {
		p.releases = map[string]board.Declarations{}
	}
	p.releases[name] = pkg.Declarations
	return true, nil
}

// boardState is one project's Board as its log makes it, with the cursor of the last
// event applied: a pure State (docs/architecture.md, "The project state and its
// driver"), stepped by Apply with no I/O, no lock and no clock. The releases its
// installs name it is handed, read ahead of Apply (releases). What it does not apply
// the Cache builds from the store (boards.go, buildLocked).
type boardState struct {
	b *board.Board // nil until built (a fresh State), and after a failed commit until rebuilt
	// src is what b declares, as built (nil when not known: a Tool's lock then builds b
	// again from the store).
	src *sources
	// seq is a head of the project's log that b reflects in full: every Board change up
	// to it is in b, and hash is the hash of the event there. They are the Driver's
	// cursor as the State sees it (restartLocked sets both), so that Apply, stepped
	// alone, refuses an event that does not follow.
	seq  int64
	hash store.Hash
	// releases are the declarations of the releases the events ahead install, by
	// "<id>@<version>", as read from the store by the catch-up (loadRelease); Apply
	// uses one only when it digests to the digest the install names.
	releases map[string]board.Declarations
	// linked says b is the log at seq exactly, so the changes after it are applied to b.
	// Unlinked, b may also hold changes past seq (a build whose head moved while it read
	// the nodes), and the next Board event builds b again rather than apply it twice:
	// that only costs a build, never a stale Board.
	linked bool
}

var _ eventlog.State = (*boardState)(nil)

// errBuild refuses an event a boardState does not apply: the Board is built again from
// the store instead.
var errBuild = errors.New("the Board is built again")

// Apply applies e, the event after s.seq, to the Board and moves the cursor past it, or
// refuses it with errBuild and changes nothing: an event that does not follow the one
// applied last (its seq, or its PrevHash once the hash there is known), a Board change on
// a Board that may hold it already (not linked), a change of what the Board declares or
// a snapshot record on a State whose sources are not known, an install whose release was
// not handed to it with the digest the event names, a type no case here applies, and a
// change the Board refuses.
// Events that never change a Board only move the cursor.
func (s *boardState) Apply(e store.Event) error {
	if s.b == nil {
		return fmt.Errorf("no Board is built at event %d: %w", e.Seq, errBuild)
	}
	if e.Seq != s.seq+1 || e.PrevHash != s.hash {
		return fmt.Errorf("event %d does not follow event %d the Board applied: %w", e.Seq, s.seq, errBuild)
	}
	if event.ChangesBoard(e.Type) {
		switch {
		case !s.linked:
			return fmt.Errorf("the Board may hold event %d's change already: %w", e.Seq, errBuild)
		case e.Type == event.BoardRecorded:
			if err := s.applyRecord(e); err != nil {
				return fmt.Errorf("%w: %w", err, errBuild)
			}
		case recordedWith[e.Type]:
			// Its records follow in board.recorded.
		case lockChanges[e.Type]:
			if err := s.applyLock(e); err != nil {
				return fmt.Errorf("%w: %w", err, errBuild)
			}
		case e.Type == event.CapabilityInstalled:
			if err := s.applyInstall(e); err != nil {
				return fmt.Errorf("%w: %w", err, errBuild)
			}
		default:
			return fmt.Errorf("no record holds the change of event %d (%s): %w", e.Seq, e.Type, errBuild)
		}
	}
	s.seq, s.hash = e.Seq, e.Hash
	return nil
}

// applyLock applies a change of the locked Tools: the Board is made again in memory from
// the declarations the locks then give and the nodes and Cases it holds, as a build from
// the store would make it. It changes nothing when it fails.
func (s *boardState) applyLock(e store.Event) error {
	if s.src == nil {
		return fmt.Errorf("the Board's sources are not known at event %d", e.Seq)
	}
	next := &sources{installed: s.src.installed, locks: maps.Clone(s.src.locks)}
	if e.Type == event.ConnectionRevoked {
		var d event.ConnectionRevokedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode revocation at seq %d: %w", e.Seq, err)
		}
		if len(next.locks[contract.ConnectionID(d.ID)]) == 0 {
			return nil // no lock of it was offered
		}
		delete(next.locks, contract.ConnectionID(d.ID))
	} else {
		var d event.ToolLockedData // the shape of the three lock events
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode tool lock at seq %d: %w", e.Seq, err)
		}
		ls := maps.Clone(next.locks[d.Connection])
		if ls == nil {
			ls = map[string]contract.ToolLock{}
		}
		if e.Type == event.ToolUnlocked {
			delete(ls, d.Tool)
		} else {
			ls[d.Tool] = d.ToolLock
		}
		next.locks[d.Connection] = ls
	}
	return s.remake(next)
}

// applyInstall applies a capability.installed event: the release it names, handed to s
// ahead (releases) and checked against the digest the event names, replaces an installed
// version of the same capability, and the Board is made again in memory from the
// declarations then given and the nodes and Cases it holds, as a build from the store
// would make it. It changes nothing when it fails.
func (s *boardState) applyInstall(e store.Event) error {
	if s.src == nil {
		return fmt.Errorf("the Board's sources are not known at event %d", e.Seq)
	}
	var d event.CapabilityInstalledData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return fmt.Errorf("decode install at seq %d: %w", e.Seq, err)
	}
	name := d.ID + "@" + d.Version
	decl, ok := s.releases[name]
	if !ok {
		return &needRelease{seq: e.Seq, id: d.ID, version: d.Version}
	}
	if decl.Digest != d.Digest {
		return fmt.Errorf("release %s installed at seq %d digests to %s, the event names %s", name, e.Seq, decl.Digest, d.Digest)
	}
	return s.remake(s.src.with(decl))
}

// remake makes the Board again in memory from what next declares and the nodes and Cases
// it holds, as a build from the store would make it, and takes next as its sources. It
// changes nothing when it fails.
func (s *boardState) remake(next *sources) error {
	b, err := next.board(s.b.Nodes(), s.b.Cases())
	if err != nil {
		return err
	}
	s.b, s.src = b, next
	return nil
}

// board is the Board src declares, holding nodes and cases.
func (src *sources) board(nodes []contract.Node, cases []contract.Case) (*board.Board, error) {
	decls, err := src.decls()
	if err != nil {
		return nil, err
	}
	return board.Restore(board.Config{Declarations: decls}, nodes, cases)
}

// applyRecord applies one board.recorded event to s.b, all of it or, refused, none.
func (s *boardState) applyRecord(e store.Event) error {
	var rec event.BoardRecordedData
	if err := json.Unmarshal(e.Data, &rec); err != nil {
		return fmt.Errorf("decode record at seq %d: %w", e.Seq, err)
	}
	puts := make([]contract.Node, len(rec.Nodes))
	for i, raw := range rec.Nodes {
		if err := json.Unmarshal(raw, &puts[i]); err != nil {
			return fmt.Errorf("decode node at seq %d: %w", e.Seq, err)
		}
	}
	cases := make([]contract.Case, len(rec.Cases))
	for i, raw := range rec.Cases {
		if err := json.Unmarshal(raw, &cases[i]); err != nil {
			return fmt.Errorf("decode case at seq %d: %w", e.Seq, err)
		}
	}
	if !rec.Snapshot {
		return s.b.Apply(puts, rec.Deleted, cases)
	}
	// A snapshot record holds every row (a log written before records existed adopts
	// its node table so, Cache.adopt): the Board is made again from them, as a build
	// from the store would make it.
	if s.src == nil {
		return fmt.Errorf("the Board's sources are not known at the snapshot record at seq %d", e.Seq)
	}
	b, err := s.src.board(puts, cases)
	if err != nil {
		return err
	}
	s.b = b
	return nil
}

// freshBoardState is the Board's State at the start of an empty log: an empty Board,
// with nothing installed and no Tool locked, linked at seq 0. Applying a project's log
// to it from the start makes the Board a build from the store makes
// (TestBoardState_ReplaysTheLog), as [eventlog.NewDriver]'s fresh State must.
func freshBoardState() (boardState, error) {
	src := &sources{locks: map[contract.ConnectionID]map[string]contract.ToolLock{}}
	b, err := src.board(nil, nil)
	if err != nil {
		return boardState{}, err
	}
	return boardState{b: b, src: src, linked: true}, nil
}

// committedLocked makes the Board, which a write of this instance changed in memory and
// committed at head (checked fresh under the head lock, so the Board holds every change
// up to it), the State at head: the project's log is caught up to head first (from
// memory, the commit's own events; a write through the ledger's sequence caught it up
// already), with the write's hold keeping its events from b, and b is made the State
// there, linked. A log that cannot be caught up to head leaves b where the Board is not
// known to be, so the Board is built again at its next use. The lock must be held.
func (a *Cache) committedLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard, head int64) {
	pb.changed = true
	s := pb.st()
	s.hold = true
	_, err := pb.h.CatchUpTo(ctx, a.store, head)
	if err != nil {
		a.log.WarnContext(ctx, "the log could not be caught up to a Board write's commit; the Board is built again", logProject, project, logErr, err)
	}
	if err != nil || pb.h.Seq() != head {
		s = pb.st() // a rebuild may have replaced it
		s.drop(head)
		s.hold = false
		return
	}
	s = pb.st()
	if s.b == nil {
		return // the cursor found the States ahead of the log: made fresh, built again
	}
	s.linked = true
	pb.restartLocked(s.boardState)
}
