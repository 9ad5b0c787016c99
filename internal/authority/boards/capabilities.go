package boards

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// InstallCapability validates a capability package, stores it as an immutable release
// (storing the same release again is a no-op) and installs it into project, replacing an
// installed version of the same capability. The project's Board is rebuilt
// with the new release before anything is written, so a release that does not fit the
// Board (a Case Type or Action another release declares, a node it cannot hold) is refused
// and nothing changes.
func (a *Cache) InstallCapability(ctx context.Context, c identity.Caller, project contract.ProjectID, up contract.CapabilityUpload) (contract.Installed, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Installed{}, err
	}
	if len(up.Files) == 0 {
		return contract.Installed{}, contract.Errorf(contract.CodeCapabilityInvalid, "the upload holds no files; send capability.toml and its .dl rule files.")
	}
	files := make(map[string][]byte, len(up.Files))
	for name, text := range up.Files {
		files[name] = []byte(text)
	}
	pkg, err := capability.Check(files)
	if err != nil {
		return contract.Installed{}, err
	}
	digest, err := contract.ParseDigest(pkg.Release.Digest)
	if err != nil {
		return contract.Installed{}, fmt.Errorf("install %s: %w", pkg.Release, err)
	}
	content, err := packRelease(pkg, files)
	if err != nil {
		return contract.Installed{}, fmt.Errorf("install %s: %w", pkg.Release, err)
	}

	pb := a.lock(project)
	defer pb.unlock()
	now := a.nowUTC()
	out := contract.Installed{Project: project, Release: contract.Release{ID: pkg.Release.ID, Version: pkg.Release.Version, Digest: pkg.Release.Digest, CreatedAt: now}}
	var next *board.Board
	var nextSrc *sources
	var seq store.Head
	err = a.store.Update(ctx, func(tx store.Tx) error {
		// Lock the log first: every Board write appends, so from here on no other
		// instance changes the Board until this commits, and the Board built below from
		// the releases and nodes read after the lock is exactly the log at seq.
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return err
		}
		src, err := a.sourcesOf(ctx, tx, project)
		if err != nil {
			return err
		}
		// The new release replaces an installed version of the same capability, and
		// takes its place in release id order (sources.decls).
		nextSrc = src.with(pkg.Declarations)
		decls, err := nextSrc.decls()
		if err != nil {
			return err
		}
		if next, err = a.restoreBoard(ctx, tx, project, decls); err != nil {
			if _, coded := errors.AsType[*contract.Error](err); !coded {
				return err
			}
			return &contract.Error{Code: contract.CodeCapabilityInvalid, Err: err,
				Teaching: fmt.Sprintf("%s does not fit project %s's Board (%s); fix the package or uninstall what it clashes with.", pkg.Release, project, teachingOf(err))}
		}
		created, err := tx.PutRelease(ctx, store.Release{ID: pkg.Release.ID, Version: pkg.Release.Version, Digest: digest[:], Content: content, CreatedAt: now})
		if errors.Is(err, store.ErrConflict) {
			return &contract.Error{Code: contract.CodeReleaseConflict, Err: err,
				Teaching: fmt.Sprintf("%s is already stored with other content; releases are immutable, so raise the version.", pkg.Release)}
		}
		if err != nil {
			return err
		}
		out.Created = created
		if !created {
			if rel, err := tx.Release(ctx, pkg.Release.ID, pkg.Release.Version); err == nil {
				out.Release.CreatedAt = rel.CreatedAt
			}
		}
		if err := tx.Install(ctx, store.Install{Project: string(project), ReleaseID: pkg.Release.ID, Version: pkg.Release.Version, InstalledAt: now}); err != nil {
			return err
		}
		if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.CapabilityInstalledData{Release: out.Release}); err != nil {
			return err
		}
		seq, err = tx.LockHead(ctx, string(project))
		return err
	})
	if err != nil {
		return contract.Installed{}, fmt.Errorf("install %s into %s: %w", pkg.Release, project, eventlog.Refuse(err, "project "+string(project)))
	}
	// Built from the releases and nodes read under the head lock, the Board is the log
	// at the head the commit left, where the project's log is caught up to first.
	pb.st().hold = true // the install's event is in next already
	if _, err := pb.h.CatchUpTo(ctx, a.store, seq.Seq); err != nil || pb.h.Seq() != seq.Seq {
		pb.st().drop(seq.Seq) // built again at its next use
		pb.st().hold = false
	} else {
		pb.restartLocked(&boardState{b: next, src: nextSrc, linked: true})
	}
	pb.builds++
	pb.version++
	pb.publishLocked(true)
	a.log.InfoContext(ctx, "capability installed", logProject, project, logActor, c.Principal(), logRelease, pkg.Release.String())
	return out, nil
}

// Installs lists the releases installed in project.
func (a *Cache) Installs(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Release, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	ins, err := a.store.Installs(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("list installs: %w", eventlog.Refuse(err, "project "+string(project)))
	}
	out := make([]contract.Release, 0, len(ins))
	for _, in := range ins {
		rel, err := a.store.Release(ctx, in.ReleaseID, in.Version)
		if err != nil {
			return nil, fmt.Errorf("load release %s@%s: %w", in.ReleaseID, in.Version, err)
		}
		d, err := contract.DigestFrom(rel.Digest)
		if err != nil {
			return nil, fmt.Errorf("load release %s@%s: %w", in.ReleaseID, in.Version, err)
		}
		out = append(out, contract.Release{ID: rel.ID, Version: rel.Version, Digest: d.String(), CreatedAt: rel.CreatedAt})
	}
	return out, nil
}

// teachingOf returns the teaching sentence of a coded error, else its text.
func teachingOf(err error) string {
	if ce, ok := errors.AsType[*contract.Error](err); ok {
		return strings.TrimSuffix(ce.Teaching, ".")
	}
	return err.Error()
}
