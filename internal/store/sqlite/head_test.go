package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// watchedCtx is a context that counts who asked for its Done channel: database/sql and
// the driver ask for it to start a goroutine that watches it.
type watchedCtx struct {
	context.Context
	asked *atomic.Int64
}

func (c watchedCtx) Done() <-chan struct{} {
	c.asked.Add(1)
	return c.Context.Done()
}

// TestHead_Unwatched: a read of a log's head, which every request makes with its own
// context (one that ends), returns the head without watching the context's end, so it
// starts no watcher goroutine; a context already ended is refused before the read.
func TestHead_Unwatched(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "docket.db"))
	var want store.Head
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		e, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", Type: "t", At: time.Unix(0, 0).UTC(), Data: json.RawMessage(`{}`)})
		want = store.Head{Seq: e.Seq, Hash: e.Hash}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	live, cancel := context.WithCancel(t.Context())
	defer cancel()
	ended, end := context.WithCancel(t.Context())
	end()
	tests := []struct {
		name    string
		ctx     context.Context
		want    store.Head
		wantErr error
	}{
		{"live", live, want, nil},
		{"ended", ended, store.Head{}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked atomic.Int64
			got, err := s.Head(watchedCtx{Context: tt.ctx, asked: &asked}, "p1")
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("Head = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the read asked for the context's Done channel %d times; want none (no watcher)", n)
			}
		})
	}
}
