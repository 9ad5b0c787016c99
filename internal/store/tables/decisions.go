package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// RecordRequest implements [store.Tx].
func (t *Tx) RecordRequest(ctx context.Context, r store.Request) error {
	if err := required("request", "a project", r.Project, "an id", r.ID, "a digest", r.Digest, "a requester", r.RequestedBy); err != nil {
		return err
	}
	memberOnly := 0
	if r.MemberOnly {
		memberOnly = 1
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO requests (project, id, digest, requested_by, at, member_only) VALUES ($1, $2, $3, $4, $5, $6)`,
		r.Project, r.ID, r.Digest, r.RequestedBy, nanos(r.At), memberOnly); err != nil {
		return fmt.Errorf("record request %s: %w", r.ID, err)
	}
	return nil
}

// RecordDecision implements [store.Tx]. The decisions table's CHECKs, its key and its
// reference to the request it decides hold the rules on the row; who may decide is
// read here, in the same transaction, from the members and agents tables.
func (t *Tx) RecordDecision(ctx context.Context, d store.Decision) error {
	if err := required("decision", "a project", d.Project, "a request", d.Request, "a digest", d.Digest,
		"a requester", d.RequestedBy, "a decider", d.DecidedBy, "a verdict", d.Verdict); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO decisions (project, request, digest, requested_by, decided_by, verdict, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		d.Project, d.Request, d.Digest, d.RequestedBy, d.DecidedBy, d.Verdict, nanos(d.At)); err != nil {
		return fmt.Errorf("record decision on %s: %w", d.Request, err)
	}
	// Checked after the row, so a missing project or request is refused as such; a
	// refused decider fails the write, and the caller's transaction with it.
	if err := t.checkDecider(ctx, d.Project, d.Request, d.DecidedBy, d.At); err != nil {
		return fmt.Errorf("record decision on %s: %w", d.Request, err)
	}
	return nil
}

// checkDecider returns [store.ErrInvalid] unless by is a live member of project, a live
// delegate of one ("member:<name>/<delegate>", unexpired at at), or a live orchestrator
// Agent of it: the only principals that decide; a delegate or an orchestrator only a
// request not recorded member-only.
func (t *Tx) checkDecider(ctx context.Context, project, request, by string, at time.Time) error {
	kind, id, _ := strings.Cut(by, ":")
	member, delegate, isDelegate := strings.Cut(id, "/")
	var n int64
	var err error
	switch {
	case id == "" || isDelegate && (member == "" || delegate == ""):
		return fmt.Errorf("decider %q names no principal: %w", by, store.ErrInvalid)
	case kind == "member" && isDelegate:
		err = t.C.QueryRow(ctx, `SELECT COUNT(*) FROM delegates d JOIN members m ON m.id = d.member
			JOIN memberships ms ON ms.member = m.id AND ms.project = d.project
			JOIN requests r ON r.project = d.project
			WHERE d.project = $1 AND m.name = $2 AND d.name = $3 AND m.revoked_at IS NULL
				AND d.revoked_at IS NULL AND d.expires_at > $4 AND r.id = $5 AND r.member_only = 0`,
			project, member, delegate, nanos(at), request).Scan(&n)
	case kind == "member":
		err = t.C.QueryRow(ctx, `SELECT COUNT(*) FROM memberships ms JOIN members m ON m.id = ms.member
			WHERE ms.project = $1 AND ms.member = $2 AND m.revoked_at IS NULL`, project, id).Scan(&n)
	case kind == "agent":
		err = t.C.QueryRow(ctx, `SELECT COUNT(*) FROM agents a JOIN requests r ON r.project = a.project
			WHERE a.project = $1 AND a.id = $2 AND a.kind = 'orchestrator' AND a.revoked_at IS NULL
				AND r.id = $3 AND r.member_only = 0`, project, id, request).Scan(&n)
	default:
		return fmt.Errorf("decider %q is neither a member nor an orchestrator: %w", by, store.ErrInvalid)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read decider %s: %w", by, err)
	}
	if n == 0 {
		return fmt.Errorf("decider %q is not a live member or orchestrator of %s: %w", by, project, store.ErrInvalid)
	}
	return nil
}

// Decisions implements [store.Reader.Decisions].
func (r Reader) Decisions(ctx context.Context, project string) ([]store.Decision, error) {
	ds, err := list(ctx, r.C, func(r Row) (store.Decision, error) {
		d := store.Decision{Project: project}
		var at int64
		err := r.Scan(&d.Request, &d.Digest, &d.RequestedBy, &d.DecidedBy, &d.Verdict, &at)
		d.At = fromNanos(at)
		return d, err
	}, `SELECT request, digest, requested_by, decided_by, verdict, at FROM decisions WHERE project = $1 ORDER BY request`, project)
	if err != nil {
		return nil, fmt.Errorf("list decisions of %s: %w", project, err)
	}
	return ds, nil
}
