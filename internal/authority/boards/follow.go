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
// The Board's cursor is linked by hash, as [eventlog.Cursor] is: it keeps the hash of the
// event at its seq, and an event that does not link to it (its PrevHash) is never
// applied; the Board is built again instead. Only committed events are applied: those
// this process committed, from memory ([eventlog.Recent]), and the rest read from the
// store outside any transaction. A write of this instance changes the Board in memory
// before its commit and, when the store refuses the commit, builds it again (step 4 of
// "The write sequence"), so the Board never holds an event its log lacks.

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

// catchUpLocked brings pb.b to the log's head to, applying the events after pb.seq: this
// process's from memory, the rest read from the store a page at a time. It reports false
// when the Board must be built again instead: an event that does not link to the last
// one applied, one whose change is not in a record, a record that does not apply, or a
// Board that may hold changes past pb.seq; other then says that event was read from the
// store (another instance's). read says to was read from the store after b was built:
// an unlinked Board that finds no Board change up to it is then the log there exactly
// (what it may have held past pb.seq would be such a change), and is linked. pb.mu must
// be held.
func (a *Cache) catchUpLocked(ctx context.Context, project contract.ProjectID, pb *projectBoard, to int64, read bool) (ok, other bool, err error) {
	applied := false
	defer func() {
		clear(pb.releases) // what was not applied is read again, if still ahead
		if applied {
			pb.version++ // b changed: what a reader derived from it is stale
			pb.changed = true
		}
	}()
	for pb.seq < to {
		es := eventlog.Recent(a.store, project, pb.seq, to)
		other = len(es) == 0
		if other {
			if es, err = a.store.Events(ctx, string(project), pb.seq, boardScanPage); err != nil {
				return false, false, fmt.Errorf("read events of %s: %w", project, err)
			}
			if len(es) == 0 {
				return false, false, nil // the head says more; read it again from a build
			}
		}
		if err := a.loadReleases(ctx, pb, es, to); err != nil {
			return false, false, err
		}
		for _, e := range es {
			if e.Seq > to {
				break
			}
			if other && event.ChangesBoard(e.Type) {
				pb.changedAt = to // another instance's change, as unchanged notes it
			}
			if err := pb.Apply(e); err != nil {
				return false, other, nil // built again (errBuild)
			}
			applied = applied || e.Type == event.BoardRecorded || lockChanges[e.Type] || e.Type == event.CapabilityInstalled
		}
		if es[len(es)-1].Seq >= to {
			break
		}
	}
	if read && pb.seq == to {
		pb.linked = true
	}
	return true, false, nil
}

// loadReleases reads the releases that the installs among es (up to to) name into
// pb.releases, for the State to apply them (boardState.applyInstall): a release is
// content-addressed and immutable, and its install committed it with the event, so what
// is read here outside any transaction is the release the event installed, which Apply
// checks by digest. A Board that could not apply an install (not linked, or its sources
// not known) reads none; nor does a release that does not unpack, which Apply then
// refuses and a build reports. pb.mu must be held.
func (a *Cache) loadReleases(ctx context.Context, pb *projectBoard, es []store.Event, to int64) error {
	if !pb.linked || pb.src == nil {
		return nil
	}
	for _, e := range es {
		if e.Seq > to {
			break
		}
		if e.Type != event.CapabilityInstalled {
			continue
		}
		var d event.CapabilityInstalledData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return nil // Apply refuses it: the Board is built again
		}
		name := d.ID + "@" + d.Version
		if _, ok := pb.releases[name]; ok {
			continue
		}
		rel, err := a.store.Release(ctx, d.ID, d.Version)
		if err != nil {
			return fmt.Errorf("load release %s installed at seq %d: %w", name, e.Seq, err)
		}
		pkg, err := unpackRelease(rel.Content)
		if err != nil {
			continue // Apply refuses the install, and a build reports the release
		}
		if pb.releases == nil {
			pb.releases = map[string]board.Declarations{}
		}
		pb.releases[name] = pkg.Declarations
	}
	return nil
}

// boardState is one project's Board as its log makes it, with the cursor of the last
// event applied: a pure State (docs/architecture.md, "The project state and its
// driver"), stepped by Apply with no I/O, no lock and no clock. The releases its
// installs name it is handed, read ahead of Apply (releases). What it does not apply
// the Cache builds from the store (boards.go, buildLocked).
type boardState struct {
	b *board.Board // nil until built, and after a failed commit until rebuilt
	// src is what b declares, as built (nil when not known: a Tool's lock then builds b
	// again from the store).
	src *sources
	// seq is a head of the project's log that b reflects in full: every Board change up
	// to it is in b, and hash is the hash of the event there (zero when not known, after
	// a commit whose events memory lacked, see committedLocked).
	seq  int64
	hash store.Hash
	// releases are the declarations of the releases the events ahead install, by
	// "<id>@<version>", as read from the store by the catch-up (loadReleases); Apply
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
	// The hash at seq is known but after a commit whose events memory lacked
	// (committedLocked), and at the log's start it is zero.
	known := s.seq == 0 || !s.hash.IsZero()
	if e.Seq != s.seq+1 || (known && e.PrevHash != s.hash) {
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
	decls, err := next.decls()
	if err != nil {
		return err
	}
	b, err := board.Restore(board.Config{Declarations: decls}, s.b.Nodes(), s.b.Cases())
	if err != nil {
		return err
	}
	s.b, s.src = b, next
	return nil
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
		return fmt.Errorf("release %s installed at seq %d was not read", name, e.Seq)
	}
	if decl.Digest != d.Digest {
		return fmt.Errorf("release %s installed at seq %d digests to %s, the event names %s", name, e.Seq, decl.Digest, d.Digest)
	}
	next := s.src.with(decl)
	decls, err := next.decls()
	if err != nil {
		return err
	}
	b, err := board.Restore(board.Config{Declarations: decls}, s.b.Nodes(), s.b.Cases())
	if err != nil {
		return err
	}
	s.b, s.src = b, next
	return nil
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
	decls, err := s.src.decls()
	if err != nil {
		return err
	}
	b, err := board.Restore(board.Config{Declarations: decls}, puts, cases)
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
	decls, err := src.decls()
	if err != nil {
		return boardState{}, err
	}
	b, err := board.Restore(board.Config{Declarations: decls}, nil, nil)
	if err != nil {
		return boardState{}, err
	}
	return boardState{b: b, src: src, linked: true}, nil
}

// committedLocked moves pb's cursor to head after a commit of this instance that changed
// the Board (checked fresh under the head lock, so the Board holds every change up to
// it): linked to the hash of the event there, known from the commit's own events in
// memory ([eventlog.Recent]) or given; with neither, the Board follows no change until
// it is built again. pb.mu must be held.
func (a *Cache) committedLocked(project contract.ProjectID, pb *projectBoard, head store.Head) {
	pb.seq, pb.changed = head.Seq, true
	pb.hash, pb.linked = head.Hash, !head.Hash.IsZero()
	if pb.linked {
		return
	}
	if es := eventlog.Recent(a.store, project, head.Seq-1, head.Seq); len(es) == 1 {
		pb.hash, pb.linked = es[0].Hash, true
	}
}
