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
// The Board State, its lock and its cursor are the Cache's [eventlog.Driver]'s, as the
// other parts' are: the cursor is linked by hash, and an event that does not link to the
// one applied last is never applied (the Driver starts a fresh State, which holds no
// Board, and the Board is built again). The Cache keeps its own write sequence on top
// ([Cache.Write]): the Board is built from the store, installed, or changed in memory by
// a write of this instance before its commit, and each is made the State at the head it
// is the log at ([eventlog.Held.Restart]); when the store refuses the commit it is built
// again (step 4 of "The write sequence"), so the Board never holds an event its log
// lacks. Only committed events are applied: those this process committed, from memory
// ([eventlog.Recent]), and the rest read from the store outside any transaction.

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

// catchUpLocked brings the Board to the log's head to on its Driver's cursor
// ([eventlog.Held.CatchUpTo]): this process's events from memory, the rest read from the
// store a page at a time. It reports false when the Board must be built again instead:
// an event that does not link to the last one applied (the Driver's cursor then finds
// the State diverged and starts a fresh one, which holds no Board), one the State does
// not apply (errBuild), or a log that ends before to; other then says that event was
// read from the store (another instance's). The release an install names is read here
// when the State asks for it (needRelease), and the event applied again. read says to
// was read from the store after b was built: an unlinked Board that finds no Board
// change up to it is then the log there exactly (what it may have held past its seq
// would be such a change), and is linked. The lock must be held.
func (a *Cache) catchUpLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard, to int64, read bool) (ok, other bool, err error) {
	pb.catchTo, pb.applied = to, false
	defer func() {
		clear(pb.st().releases) // what was not applied is read again, if still ahead
		if pb.applied {
			pb.version++ // b changed: what a reader derived from it is stale
			pb.changed = true
		}
	}()
	for {
		_, err := pb.h.CatchUpTo(ctx, a.store, to)
		if err == nil {
			break
		}
		if need, ok := errors.AsType[*needRelease](err); ok {
			loaded, err := a.loadRelease(ctx, pb.st(), need)
			if err != nil {
				return false, false, err
			}
			if loaded {
				continue // applied again, the release handed
			}
		}
		if !errors.Is(err, errBuild) {
			return false, false, err
		}
		seq := pb.h.Seq()
		if other = len(eventlog.Recent(a.store, project, seq, seq+1)) == 0; other {
			pb.changedAt = to // another instance's change, as unchanged notes it
		}
		return false, other, nil
	}
	if pb.h.Seq() < to {
		return false, false, nil // the head says more; read it again from a build
	}
	if read {
		pb.st().linked = true
	}
	return true, false, nil
}

// noteApplied is the Driver's notification of an event a Board State applied
// ([eventlog.Driver.OnApply]), under the project's lock: a change of b makes what readers
// derived from it stale (catchUpLocked), and one read from the store, not committed by
// this process (another instance's, or one whose Update had not returned yet,
// [eventlog.Recent]), is noted as unchanged notes it.
func (a *Cache) noteApplied(project contract.ProjectID, _ *boardState, e store.Event) {
	if !event.ChangesBoard(e.Type) {
		return
	}
	pb := a.get(project)
	pb.applied = pb.applied || !recordedWith[e.Type]
	if len(eventlog.Recent(a.store, project, e.Seq-1, e.Seq)) == 0 {
		pb.changedAt = pb.catchTo
	}
}

// needRelease refuses an install whose release the State was not handed: the catch-up
// reads it (loadRelease) and applies the event again. It is an errBuild, so a State that
// is not caught up by the Cache (a test's) builds the Board again instead.
type needRelease struct {
	seq         int64
	id, version string
}

func (n *needRelease) Error() string {
	return fmt.Sprintf("release %s@%s installed at seq %d was not read", n.id, n.version, n.seq)
}

func (n *needRelease) Unwrap() error { return errBuild }

// loadRelease reads the release an install names into s.releases, for s to apply it
// (boardState.applyInstall): a release is content-addressed and immutable, and its
// install committed it with the event, so what is read here outside any transaction is
// the release the event installed, which Apply checks by digest. It reports false when
// nothing more can be handed: the release was handed already, or does not unpack (a
// build then reports it). The lock must be held.
func (a *Cache) loadRelease(ctx context.Context, s *boardState, need *needRelease) (bool, error) {
	name := need.id + "@" + need.version
	if _, ok := s.releases[name]; ok {
		return false, nil
	}
	rel, err := a.store.Release(ctx, need.id, need.version)
	if err != nil {
		return false, fmt.Errorf("load release %s installed at seq %d: %w", name, need.seq, err)
	}
	pkg, err := unpackRelease(rel.Content)
	if err != nil {
		return false, nil
	}
	if s.releases == nil {
		s.releases = map[string]board.Declarations{}
	}
	s.releases[name] = pkg.Declarations
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

// committedLocked moves the State to head after a commit of this instance that changed
// the Board (checked fresh under the head lock, so the Board holds every change up to
// it): linked to the hash of the event there, known from the commit's own events in
// memory ([eventlog.Recent]) or given. With neither, the next event could not be linked
// to it, so the Board is built again at its next use. The lock must be held.
func (a *Cache) committedLocked(project contract.ProjectID, pb *projectBoard, head store.Head) {
	pb.changed = true
	s := pb.st()
	if head.Hash.IsZero() {
		if es := eventlog.Recent(a.store, project, head.Seq-1, head.Seq); len(es) == 1 {
			head.Hash = es[0].Hash
		}
	}
	if head.Hash.IsZero() {
		s.b = nil
	}
	s.linked = true
	pb.restartLocked(s, head)
}
