package authority_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// benchConversation is an authority on SQLite whose Agent saved conversation "c1" saves
// times, one message each, as the runtime does after each call, after noise events of
// the project that are no conversation's.
func benchConversation(b *testing.B, saves, noise int) (a *authority.Authority, admin, ag identity.Caller, h contract.ConversationHead) {
	b.Helper()
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "docket.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	p := authoritytest.New(b, authoritytest.Options{Store: st, Key: identity.Key{1}, Agent: "calc"})
	a, admin, ag = p.A, p.Admin, p.Agent
	if noise > 0 {
		err := st.Update(ctx, func(tx store.Tx) error {
			for i := range noise {
				data, _ := json.Marshal(map[string]string{"note": fmt.Sprintf("unrelated event %d", i)})
				_, err := tx.Append(ctx, store.NewEvent{Project: "default", Type: "bench.noise", At: time.Unix(0, 0).UTC(), Actor: "system", Data: data})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range saves {
		if h, err = a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Prev: h.Seq, From: i, Messages: msgs("a tool result of modest size")}); err != nil {
			b.Fatal(err)
		}
	}
	return a, admin, ag, h
}

func BenchmarkAuthority_SaveConversation(b *testing.B) {
	a, _, ag, h := benchConversation(b, 1, 0)
	var err error
	for b.Loop() {
		if h, err = a.SaveConversation(b.Context(), ag, "c1", contract.ConversationSave{Prev: h.Seq, From: h.Messages, Messages: msgs("one more")}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthority_OwnConversation loads a conversation of 200 saves.
func BenchmarkAuthority_OwnConversation(b *testing.B) {
	a, _, ag, _ := benchConversation(b, 200, 0)
	for b.Loop() {
		if _, err := a.OwnConversation(b.Context(), ag, "c1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthority_OwnConversationLongLog loads a conversation of 5 saves from a project
// whose log holds 20,000 other events: a load reads only the conversation's own events.
func BenchmarkAuthority_OwnConversationLongLog(b *testing.B) {
	a, _, ag, _ := benchConversation(b, 5, 20000)
	for b.Loop() {
		if _, err := a.OwnConversation(b.Context(), ag, "c1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthority_ConversationsLongLog lists the conversations of a project whose log
// holds 20,000 other events.
func BenchmarkAuthority_ConversationsLongLog(b *testing.B) {
	a, admin, _, _ := benchConversation(b, 5, 20000)
	for b.Loop() {
		list, err := a.Conversations(b.Context(), admin, "default", "")
		if err != nil || len(list) != 1 {
			b.Fatalf("Conversations = %v, %v; want one", list, err)
		}
	}
}
