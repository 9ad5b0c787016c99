package boards

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// An Agent's QueryBoard of the View alone is answered from what the Board cache
// published of the project's committed Board, not under the Board's lock, so that it
// does not wait for an admission or a report holding that lock across its store
// transaction (docs/architecture.md, "The project state and its driver"): when what was
// published covers the head the read read and holds the View it asks for; otherwise it
// is answered under the lock as before. board.Board is not safe for concurrent use (a
// read fills the engine's caches) and a write changes it in place, so what is published
// is not the Board but the Views of it the readers asked for: after each commit that
// changed the Board, each build and each install, under the lock and before the next
// write may change it, the Views read within the last keepIdle changes are built again
// on the committed Board. A failed commit is never published: the Board is published
// only once its store Update returned nil (after its COMMIT), and a Board that held a
// refused change is rebuilt from the store (step 4 of "The write sequence") before it
// is published.

// Published is one project's committed Board as the reads that do not take its lock see
// it: a head of the log it reflects in full, and the Views built on it. Nothing in it
// changes once handed out but the head, which only moves on, and the Views it holds.
type Published struct {
	version uint64 // the Board's version ([Cache.Read]) it was published at
	// seq is a head of the log the Board reflects in full; it moves on, never back, when
	// a read finds that no Board change came since.
	seq atomic.Int64
	// mu guards views; it is held only to read or change the map, never across a build.
	mu    sync.Mutex
	views map[contract.Principal]*BoardView
}

// BoardView is the View of a published Board built for one request, and the focused
// roots its focus names. Readers share it and change nothing in it.
type BoardView struct {
	View  contract.View
	Roots []contract.FocusedRoot
	req   board.ViewRequest
	// asked says a read used it since the Board last changed; idle counts the Board
	// changes since it was last asked for. Each change builds again only the Views
	// asked for within the last keepIdle changes: a View nobody reads costs no write.
	asked atomic.Bool
	idle  int // read and written under the project's Board lock
}

// maxPublishedViews bounds the Views a project's published Board holds, one per
// principal, and so what a Board change builds again: a principal left out has its
// next View built under the lock.
const maxPublishedViews = 64

// keepIdle is how many Board changes in a row a View no read asked for is still built
// again for: a polling Agent whose read was outrun by several changes (other Agents'
// writes and their reports, while its own call waited for a processor) still finds its
// View built, and an Agent that stopped reading costs at most this many builds. One
// polling Agent beside another Agent's stream of ApplyBatch on a loaded machine
// (BenchmarkQueryBoard_ViewDuringWrites, load 6 on 2 cores) found its View dropped in
// about 1 read in 50 with 4, and 1 in 1,000 with 8.
const keepIdle = 8

// ViewOf builds req's View of b, and the focused roots of req's focus, for a caller
// holding b (inside [Cache.Read]'s fn).
func ViewOf(b *board.Board, req board.ViewRequest) *BoardView {
	v := &BoardView{View: b.View(req), req: req}
	for _, id := range req.Focus {
		if fr, err := b.Focus(id); err == nil {
			v.Roots = append(v.Roots, fr)
		}
	}
	return v
}

// Version is the Board version it was published at: the version [Cache.Read] passes
// while the Board holds what was published.
func (p *Published) Version() uint64 { return p.version }

// Seq is a head of the log the published Board reflects in full.
func (p *Published) Seq() int64 { return p.seq.Load() }

// View returns the View built for req, if one was: for req's principal, focus and
// setup.
func (p *Published) View(req board.ViewRequest) (*BoardView, bool) {
	p.mu.Lock()
	v, ok := p.views[req.Principal]
	p.mu.Unlock()
	if !ok || !sameRequest(v.req, req) {
		return nil, false
	}
	v.asked.Store(true)
	return v, true
}

// sameRequest reports whether a View built for x is the View for y. A setup's
// allow-list is compared by identity (the ledger replaces it, never changes it), so a
// different one only costs a build.
func sameRequest(x, y board.ViewRequest) bool {
	return x.Principal == y.Principal && slices.Equal(x.Focus, y.Focus) &&
		x.Setup.Allow == y.Setup.Allow && maps.Equal(x.Setup.Tools, y.Setup.Tools)
}

// advance moves seq on to head.
func (p *Published) advance(head int64) {
	for {
		s := p.seq.Load()
		if s >= head || p.seq.CompareAndSwap(s, head) {
			return
		}
	}
}

// Published returns project's committed Board as published, when it reflects the log
// up to head, a head read during the call: every Board change up to head is in it (it
// may hold later ones, so it is at least as fresh as a read of head). It reads no lock
// of the Board: the events past its seq are looked at as a catch-up would (this
// process's from memory, another instance's from the store), and a Board change among
// them, or nothing published yet, answers false, for the caller to read under the lock.
// Events of a transaction still in flight are not in head, so what the Board published
// at the committed head is exact.
func (a *Cache) Published(ctx context.Context, project contract.ProjectID, head int64) (*Published, bool, error) {
	p := a.get(project).pub.Load()
	if p == nil {
		return nil, false, nil
	}
	from := p.Seq()
	if from >= head {
		return p, true, nil
	}
	ok, _, err := boardUnchanged(ctx, a.store, project, from, head)
	if err != nil || !ok {
		return nil, false, err
	}
	p.advance(head)
	return p, true, nil
}

// Keep keeps v, built on project's Board at version (inside [Cache.Read]'s fn, under
// the lock), in what the Board published when that is the same Board, so the next read
// of the same request finds it there, and the next Board change builds it again.
func (a *Cache) Keep(project contract.ProjectID, version uint64, v *BoardView) {
	p := a.get(project).pub.Load()
	if p == nil || p.version != version {
		return
	}
	v.asked.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.views[v.req.Principal]; !ok && len(p.views) >= maxPublishedViews {
		for k := range p.views {
			delete(p.views, k)
			break
		}
	}
	p.views[v.req.Principal] = v
}

// publishLocked publishes pb's Board, which holds only what the log committed: changed
// says it changed since the last publication (a build, an install, a committed
// change), and the Views asked for are then built again on it; unchanged, the last
// publication's Views are carried over under the Board's new version. A missing Board
// (a rebuild that failed) publishes nothing, and the last publication stays exact at its
// head. The lock must be held.
func (pb *projectBoard) publishLocked(changed bool) {
	b, seq := pb.st().b, pb.st().seq
	if b == nil || !pb.h.Committed() {
		// Nothing, or not yet: the States applied events inside a transaction (a claim's,
		// under group commit perhaps a batch-mate's a failed COMMIT loses) that no
		// catch-up found in the log since; the next publication carries the change.
		return
	}
	changed = changed || pb.changed
	pb.changed = false
	old := pb.pub.Load()
	if old != nil && old.version == pb.version && !changed {
		old.advance(seq)
		return
	}
	p := &Published{version: pb.version, views: map[contract.Principal]*BoardView{}}
	p.seq.Store(seq)
	if old != nil {
		old.mu.Lock()
		views := slices.Collect(maps.Values(old.views))
		old.mu.Unlock()
		for _, v := range views {
			if !changed {
				p.views[v.req.Principal] = v
				continue
			}
			idle := v.idle + 1
			if v.asked.Load() {
				idle = 0
			}
			if idle >= keepIdle {
				continue
			}
			nv := ViewOf(b, v.req)
			nv.idle = idle
			p.views[v.req.Principal] = nv
		}
	}
	pb.pub.Store(p)
}
