package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/docketrun/docket/internal/store"
)

// RunDecisions runs the conformance cases of [store.Tx.RecordDecision] against h.
func RunDecisions(t *testing.T, h Harness) {
	t.Helper()
	base := store.Decision{Project: "p1", Request: "req_1", Digest: "sha256:aa", RequestedBy: "agent:a1",
		DecidedBy: "member:m1", Verdict: "approve", At: t0}
	tests := []struct {
		name string
		d    func(d store.Decision) store.Decision
		want error
	}{
		{"recorded", func(d store.Decision) store.Decision { return d }, nil},
		{"own request", func(d store.Decision) store.Decision { d.DecidedBy = d.RequestedBy; return d }, store.ErrInvalid},
		{"unknown verdict", func(d store.Decision) store.Decision { d.Verdict = "maybe"; return d }, store.ErrInvalid},
		{"no digest", func(d store.Decision) store.Decision { d.Digest = ""; return d }, store.ErrInvalid},
		{"missing project", func(d store.Decision) store.Decision { d.Project = "nope"; return d }, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, h)
			update(t, s, func(ctx context.Context, tx store.Tx) error {
				return tx.CreateProject(ctx, store.Project{ID: "p1", Name: "p1", CreatedAt: t0})
			})
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
			if err := tx.CreateProject(ctx, store.Project{ID: "p1", Name: "p1", CreatedAt: t0}); err != nil {
				return err
			}
			return tx.RecordDecision(ctx, base)
		})
		again := base
		again.Verdict, again.DecidedBy = "deny", "member:m2"
		err := s.Update(t.Context(), func(tx store.Tx) error {
			return tx.RecordDecision(t.Context(), again)
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second decision = %v, want ErrConflict", err)
		}
	})
}
