package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docketrun/docket/internal/store"
)

func testVerifyIntact(t *testing.T, h Harness) {
	s := open(t, h)
	head, err := s.Verify(t.Context(), "empty")
	if err != nil || head != (store.Head{}) {
		t.Errorf("Verify(empty log) = %v, %v; want the zero head", head, err)
	}
	evs := appendN(t, s, "p1", 5)
	head, err = s.Verify(t.Context(), "p1")
	wantErr(t, "Verify", err, nil)
	if want := (store.Head{Seq: 5, Hash: evs[4].Hash}); head != want {
		t.Errorf("Verify = %v, want %v", head, want)
	}
}

// tamperLog writes five events to p1; the fourth carries blob data.
func tamperLog(t *testing.T, s store.Store) {
	t.Helper()
	for i := 1; i <= 5; i++ {
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			ne := newEvent("p1", i)
			if i == 4 {
				ne.Data = json.RawMessage(`"` + strings.Repeat("b", store.BlobThreshold) + `"`)
			}
			_, err := tx.Append(ctx, ne)
			return err
		})
	}
}

func testTamper(t *testing.T, h Harness) {
	if h.Tamper == nil {
		t.Skip("the harness has no Tamper hook")
	}
	tests := []struct {
		name  string
		query string
		args  []any
		want  store.ChainError // Want and Got are not compared
	}{
		{"data changed", `UPDATE events SET data = $1 WHERE project = 'p1' AND seq = 2`,
			[]any{[]byte(`{"i":999}`)}, store.ChainError{Project: "p1", Seq: 2, Field: "data"}},
		{"data and its hash changed", `UPDATE events SET data = $1, data_hash = $2 WHERE project = 'p1' AND seq = 2`,
			[]any{[]byte(`{"i":999}`), hashBytes(store.DataHash([]byte(`{"i":999}`)))}, store.ChainError{Project: "p1", Seq: 2, Field: "hash"}},
		{"type changed", `UPDATE events SET type = 'test.forged' WHERE project = 'p1' AND seq = 3`,
			nil, store.ChainError{Project: "p1", Seq: 3, Field: "hash"}},
		{"time changed", `UPDATE events SET at = at + 1 WHERE project = 'p1' AND seq = 1`,
			nil, store.ChainError{Project: "p1", Seq: 1, Field: "hash"}},
		{"link changed", `UPDATE events SET prev_hash = $1 WHERE project = 'p1' AND seq = 5`,
			[]any{make([]byte, 32)}, store.ChainError{Project: "p1", Seq: 5, Field: "prev_hash"}},
		{"event removed", `DELETE FROM events WHERE project = 'p1' AND seq = 3`,
			nil, store.ChainError{Project: "p1", Seq: 4, Field: "seq"}},
		{"last event removed", `DELETE FROM events WHERE project = 'p1' AND seq = 5`,
			nil, store.ChainError{Project: "p1", Seq: 5, Field: "head"}},
		{"blob changed", `UPDATE blobs SET data = $1`,
			[]any{[]byte(`"forged"`)}, store.ChainError{Project: "p1", Seq: 4, Field: "data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, h)
			tamperLog(t, s)
			if _, err := s.Verify(t.Context(), "p1"); err != nil {
				t.Fatalf("Verify before tampering: %v", err)
			}
			h.Tamper(t, s, tt.query, tt.args...)
			_, err := s.Verify(t.Context(), "p1")
			if !errors.Is(err, store.ErrChainBroken) {
				t.Fatalf("Verify after tampering = %v, want %v", err, store.ErrChainBroken)
			}
			ce, ok := errors.AsType[*store.ChainError](err)
			if !ok {
				t.Fatalf("Verify error %v is not a *store.ChainError", err)
			}
			if diff := cmp.Diff(tt.want, *ce, cmpopts.IgnoreFields(store.ChainError{}, "Want", "Got")); diff != "" {
				t.Errorf("first broken link (-want +got):\n%s", diff)
			}
		})
	}
}

func hashBytes(h store.Hash) []byte { return h[:] }
