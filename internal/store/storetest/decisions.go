package storetest

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

// decisionParties creates project p1 with live member m1, member m2 revoked, member m3 of
// another project, Agents a1 (kind agent) and o1 (kind orchestrator), orchestrator o2
// revoked, m1's delegates d1 (live), d2 (revoked) and d3 (expired), and Requests req_1
// of a1, req_3 of o1 and req_4 of a1, only a member's to decide, all bound to sha256:aa.
func decisionParties(ctx context.Context, tx store.Tx) error {
	steps := []func() error{
		func() error { return tx.CreateProject(ctx, store.Project{ID: "p1", Name: "p1", CreatedAt: t0}) },
		func() error { return tx.CreateProject(ctx, store.Project{ID: "p2", Name: "p2", CreatedAt: t0}) },
	}
	for _, m := range []struct{ id, project string }{{"m1", "p1"}, {"m2", "p1"}, {"m3", "p2"}} {
		steps = append(steps,
			func() error {
				return tx.CreateMember(ctx, store.Member{ID: m.id, Name: m.id, PassphraseHash: []byte("h"), CreatedAt: t0})
			},
			func() error { return tx.AddMembership(ctx, m.project, m.id) })
	}
	for _, a := range []struct{ id, kind string }{{"a1", store.AgentKindAgent}, {"o1", store.AgentKindOrchestrator}, {"o2", store.AgentKindOrchestrator}} {
		steps = append(steps, func() error {
			return tx.CreateAgent(ctx, store.Agent{ID: a.id, Project: "p1", Name: a.id, Kind: a.kind, TokenDigest: []byte(a.id), CreatedAt: t0})
		})
	}
	steps = append(steps,
		func() error { return tx.RevokeMember(ctx, "m2", t0) },
		func() error {
			return tx.CreateDelegate(ctx, store.Delegate{ID: "d1", Member: "m1", Project: "p1", Name: "d1", TokenDigest: []byte("d1"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
		},
		func() error {
			return tx.CreateDelegate(ctx, store.Delegate{ID: "d2", Member: "m1", Project: "p1", Name: "d2", TokenDigest: []byte("d2"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
		},
		func() error { return tx.RevokeDelegate(ctx, "m1", "d2", t0) },
		func() error {
			return tx.CreateDelegate(ctx, store.Delegate{ID: "d3", Member: "m1", Project: "p1", Name: "d3", TokenDigest: []byte("d3"), CreatedAt: t0, ExpiresAt: t0})
		},
		func() error { return tx.RevokeAgent(ctx, "o2", t0) },
		func() error {
			return tx.RecordRequest(ctx, store.Request{Project: "p1", ID: "req_1", Digest: "sha256:aa", RequestedBy: "agent:a1", At: t0})
		},
		func() error {
			return tx.RecordRequest(ctx, store.Request{Project: "p1", ID: "req_3", Digest: "sha256:aa", RequestedBy: "agent:o1", At: t0})
		},
		func() error {
			return tx.RecordRequest(ctx, store.Request{Project: "p1", ID: "req_4", Digest: "sha256:aa", RequestedBy: "agent:a1", At: t0, MemberOnly: true})
		})
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// RunDecisions runs the conformance cases of [store.Tx.RecordRequest] and
// [store.Tx.RecordDecision] against h: one case per rule of who may decide what.
func RunDecisions(t *testing.T, h Harness) {
	t.Helper()
	base := store.Decision{Project: "p1", Request: "req_1", Digest: "sha256:aa", RequestedBy: "agent:a1",
		DecidedBy: "member:m1", Verdict: "approve", At: t0}
	tests := []struct {
		name string
		d    func(d store.Decision) store.Decision
		want error
	}{
		{"by a member", func(d store.Decision) store.Decision { return d }, nil},
		{"by an orchestrator", func(d store.Decision) store.Decision { d.DecidedBy = "agent:o1"; return d }, nil},
		{"own request", func(d store.Decision) store.Decision { d.DecidedBy = d.RequestedBy; return d }, store.ErrInvalid},
		{"by an agent of kind agent", func(d store.Decision) store.Decision {
			d.Request, d.RequestedBy, d.DecidedBy = "req_3", "agent:o1", "agent:a1"
			return d
		}, store.ErrInvalid},
		{"by an Agent that does not exist", func(d store.Decision) store.Decision { d.DecidedBy = "agent:nope"; return d }, store.ErrInvalid},
		{"by a worker's tool", func(d store.Decision) store.Decision { d.DecidedBy = "tool:test.fetch@1"; return d }, store.ErrInvalid},
		{"by a capability", func(d store.Decision) store.Decision { d.DecidedBy = "capability:x"; return d }, store.ErrInvalid},
		{"by an empty decider", func(d store.Decision) store.Decision { d.DecidedBy = ""; return d }, store.ErrInvalid},
		{"by a kind without an id", func(d store.Decision) store.Decision { d.DecidedBy = "member:"; return d }, store.ErrInvalid},
		{"by a revoked member", func(d store.Decision) store.Decision { d.DecidedBy = "member:m2"; return d }, store.ErrInvalid},
		{"by a member of another project", func(d store.Decision) store.Decision { d.DecidedBy = "member:m3"; return d }, store.ErrInvalid},
		{"by a revoked orchestrator", func(d store.Decision) store.Decision { d.DecidedBy = "agent:o2"; return d }, store.ErrInvalid},
		{"a member-only request by an orchestrator", func(d store.Decision) store.Decision {
			d.Request, d.DecidedBy = "req_4", "agent:o1"
			return d
		}, store.ErrInvalid},
		{"a member-only request by a member", func(d store.Decision) store.Decision { d.Request = "req_4"; return d }, nil},
		{"by a member's live delegate", func(d store.Decision) store.Decision { d.DecidedBy = "member:m1/d1"; return d }, nil},
		{"by a revoked delegate", func(d store.Decision) store.Decision { d.DecidedBy = "member:m1/d2"; return d }, store.ErrInvalid},
		{"by an expired delegate", func(d store.Decision) store.Decision { d.DecidedBy = "member:m1/d3"; return d }, store.ErrInvalid},
		{"by a delegate that does not exist", func(d store.Decision) store.Decision { d.DecidedBy = "member:m1/nope"; return d }, store.ErrInvalid},
		{"by a delegate under another member", func(d store.Decision) store.Decision { d.DecidedBy = "member:m2/d1"; return d }, store.ErrInvalid},
		{"by a delegate naming no member", func(d store.Decision) store.Decision { d.DecidedBy = "member:/d1"; return d }, store.ErrInvalid},
		{"a member-only request by a delegate", func(d store.Decision) store.Decision {
			d.Request, d.DecidedBy = "req_4", "member:m1/d1"
			return d
		}, store.ErrInvalid},
		{"another digest", func(d store.Decision) store.Decision { d.Digest = "sha256:bb"; return d }, store.ErrNotFound},
		{"another requester", func(d store.Decision) store.Decision { d.RequestedBy = "agent:o1"; return d }, store.ErrNotFound},
		{"a request never made", func(d store.Decision) store.Decision { d.Request = "req_2"; return d }, store.ErrNotFound},
		{"unknown verdict", func(d store.Decision) store.Decision { d.Verdict = "maybe"; return d }, store.ErrInvalid},
		{"no digest", func(d store.Decision) store.Decision { d.Digest = ""; return d }, store.ErrInvalid},
		{"missing project", func(d store.Decision) store.Decision { d.Project = "nope"; return d }, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, h)
			update(t, s, decisionParties)
			err := s.Update(t.Context(), func(tx store.Tx) error {
				return tx.RecordDecision(t.Context(), tt.d(base))
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("RecordDecision = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("decided once", func(t *testing.T) {
		s := open(t, h)
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			if err := decisionParties(ctx, tx); err != nil {
				return err
			}
			return tx.RecordDecision(ctx, base)
		})
		again := base
		again.Verdict, again.DecidedBy = "deny", "agent:o1"
		err := s.Update(t.Context(), func(tx store.Tx) error {
			return tx.RecordDecision(t.Context(), again)
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second decision = %v, want ErrConflict", err)
		}
	})
	t.Run("listed", func(t *testing.T) {
		s := open(t, h)
		denied := base
		denied.Request, denied.RequestedBy, denied.Verdict, denied.At = "req_3", "agent:o1", "deny", t0.Add(time.Nanosecond)
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			if err := decisionParties(ctx, tx); err != nil {
				return err
			}
			if err := tx.RecordDecision(ctx, denied); err != nil {
				return err
			}
			return tx.RecordDecision(ctx, base)
		})
		got, err := s.Decisions(t.Context(), "p1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.Decision{base, denied}, got); diff != "" {
			t.Errorf("Decisions (-want +got):\n%s", diff)
		}
	})
	t.Run("raw rows", func(t *testing.T) { rawDecisions(t, h) })
	t.Run("requests", func(t *testing.T) {
		s := open(t, h)
		update(t, s, decisionParties)
		r := store.Request{Project: "p1", ID: "req_1", Digest: "sha256:cc", RequestedBy: "agent:o1", At: t0}
		tests := []struct {
			name string
			r    func(r store.Request) store.Request
			want error
		}{
			{"an id in use", func(r store.Request) store.Request { return r }, store.ErrConflict},
			{"no digest", func(r store.Request) store.Request { r.ID, r.Digest = "req_2", ""; return r }, store.ErrInvalid},
			{"no requester", func(r store.Request) store.Request { r.ID, r.RequestedBy = "req_2", ""; return r }, store.ErrInvalid},
			{"missing project", func(r store.Request) store.Request { r.ID, r.Project = "req_2", "nope"; return r }, store.ErrNotFound},
			{"recorded", func(r store.Request) store.Request { r.ID = "req_2"; return r }, nil},
		}
		for _, tt := range tests {
			err := s.Update(t.Context(), func(tx store.Tx) error { return tx.RecordRequest(t.Context(), tt.r(r)) })
			if !errors.Is(err, tt.want) {
				t.Errorf("RecordRequest, %s = %v, want %v", tt.name, err, tt.want)
			}
		}
	})
}

// RunRequestsMigration checks migrations 0004 and 0044 against h, whose migrations are in fsys: a
// database taken back to just before it (raw statements run with [Harness.Tamper]: no
// requests table, the decisions table as 0002 made it), holding a Request only as its
// request.created event, is migrated again when a Store opens it, and the Request can
// then be decided — on its own digest only. A Request the log does not hold cannot.
// undoLater are the backend's statements that take back the later migrations built on
// the decisions table (0061's triggers), run first, so that they are applied again too.
func RunRequestsMigration(t *testing.T, h Harness, fsys fs.FS, undoLater ...string) {
	t.Helper()
	if h.Tamper == nil {
		t.Skip("the harness runs no raw statements")
	}
	decisions, err := fs.ReadFile(fsys, "0002_decisions.sql")
	if err != nil {
		t.Fatal(err)
	}
	undo := append(undoLater, "DROP TABLE decisions", "DROP TABLE requests", string(decisions),
		"DELETE FROM schema_migrations WHERE version IN (4, 44, 61)")
	openDB := h.NewDB(t)
	s := openDB(t)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := decisionParties(ctx, tx); err != nil {
			return err
		}
		_, err := tx.Append(ctx, store.NewEvent{Project: "p1", Type: "request.created", At: t0, Actor: "agent:a1",
			Data: []byte(`{"id":"req_9","project":"p1","ordinal":1,"requestedBy":"agent:a1","digest":"sha256:99","state":"pending"}`)})
		if err != nil {
			return err
		}
		_, err = tx.Append(ctx, store.NewEvent{Project: "p1", Type: "request.created", At: t0, Actor: "agent:a1",
			Data: []byte(`{"id":"req_8","project":"p1","ordinal":0,"requestedBy":"agent:a1","digest":"sha256:88","state":"pending","recovery":true}`)})
		return err
	})
	for _, q := range undo {
		h.Tamper(t, s, q)
	}
	again := openDB(t) // applies 0004 again
	decide := func(request, digest string) error {
		return again.Update(t.Context(), func(tx store.Tx) error {
			return tx.RecordDecision(t.Context(), store.Decision{Project: "p1", Request: request, Digest: digest,
				RequestedBy: "agent:a1", DecidedBy: "member:m1", Verdict: "approve", At: t0})
		})
	}
	if err := decide("req_9", "sha256:aa"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a decision on another digest after the migration = %v, want ErrNotFound", err)
	}
	if err := decide("req_1", "sha256:aa"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a decision on a request the log lacks = %v, want ErrNotFound", err)
	}
	if err := decide("req_9", "sha256:99"); err != nil {
		t.Errorf("a decision on the request the log holds = %v, want it recorded", err)
	}
	// Migration 0044 marks a recovery request the log holds as only a member's to decide.
	err = again.Update(t.Context(), func(tx store.Tx) error {
		return tx.RecordDecision(t.Context(), store.Decision{Project: "p1", Request: "req_8", Digest: "sha256:88",
			RequestedBy: "agent:a1", DecidedBy: "agent:o1", Verdict: "approve", At: t0})
	})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("an orchestrator's decision on a recovery request after the migration = %v, want ErrInvalid", err)
	}
	if err := decide("req_8", "sha256:88"); err != nil {
		t.Errorf("a member's decision on the recovery request = %v, want it recorded", err)
	}
}

// rawDecisions checks that the decider's kind is the schema's rule, not only
// [store.Tx.RecordDecision]'s: a statement written past the store, as anyone holding the
// database's credentials could write it, is refused when it names as decider anything
// but a member or an orchestrator Agent of the project, and an Agent that decided cannot
// be made a plain Agent afterwards.
func rawDecisions(t *testing.T, h Harness) {
	if h.Raw == nil {
		t.Skip("the harness runs no raw statements")
	}
	// Besides decisionParties: req_3 (of o1) decided by member m1, req_5 of a1 decided by
	// orchestrator o1, req_6 of a1 and req_7 of o1 undecided.
	setup := func(ctx context.Context, tx store.Tx) error {
		if err := decisionParties(ctx, tx); err != nil {
			return err
		}
		for _, r := range []struct{ id, of string }{{"req_5", "agent:a1"}, {"req_6", "agent:a1"}, {"req_7", "agent:o1"}} {
			if err := tx.RecordRequest(ctx, store.Request{Project: "p1", ID: r.id, Digest: "sha256:aa", RequestedBy: r.of, At: t0}); err != nil {
				return err
			}
		}
		for _, d := range []struct{ request, of, by string }{{"req_3", "agent:o1", "member:m1"}, {"req_5", "agent:a1", "agent:o1"}} {
			if err := tx.RecordDecision(ctx, store.Decision{Project: "p1", Request: d.request, Digest: "sha256:aa",
				RequestedBy: d.of, DecidedBy: d.by, Verdict: "approve", At: t0}); err != nil {
				return err
			}
		}
		return nil
	}
	const insert = `INSERT INTO decisions (project, request, digest, requested_by, decided_by, verdict, at)
		VALUES ('p1', $1, 'sha256:aa', $2, $3, 'approve', 0)`
	tests := []struct {
		name  string
		query string
		args  []any
		want  error
	}{
		{"a plain Agent decides", insert, []any{"req_7", "agent:o1", "agent:a1"}, store.ErrInvalid},
		{"an Agent that does not exist decides", insert, []any{"req_6", "agent:a1", "agent:nope"}, store.ErrInvalid},
		{"an orchestrator spelt in capitals decides", insert, []any{"req_6", "agent:a1", "AGENT:o1"}, store.ErrInvalid},
		{"a member's decision moved to a plain Agent", `UPDATE decisions SET decided_by = 'agent:a1' WHERE request = 'req_3'`, nil, store.ErrInvalid},
		{"the orchestrator that decided made a plain Agent", `UPDATE agents SET kind = 'agent' WHERE id = 'o1'`, nil, store.ErrInvalid},
		{"an orchestrator that never decided made a plain Agent", `UPDATE agents SET kind = 'agent' WHERE id = 'o2'`, nil, nil},
		{"an orchestrator decides", insert, []any{"req_6", "agent:a1", "agent:o1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, h)
			update(t, s, setup)
			if err := h.Raw(t, s, tt.query, tt.args...); !errors.Is(err, tt.want) {
				t.Errorf("%s = %v, want %v", tt.query, err, tt.want)
			}
		})
	}
}
