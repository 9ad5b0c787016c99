package authority_test

import (
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// benchConversation is an authority on SQLite whose Agent saved conversation "c1" saves
// times, one message each, as the runtime does after each call.
func benchConversation(b *testing.B, saves int) (*authority.Authority, authority.Caller, contract.ConversationHead) {
	b.Helper()
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "docket.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	a, err := authority.New(authority.Config{Store: st, Key: authority.Key{1}})
	if err != nil {
		b.Fatal(err)
	}
	boot, err := a.Init(ctx, "ada", testPassphrase, "default")
	if err != nil {
		b.Fatal(err)
	}
	admin, err := a.Authenticate(ctx, boot.Token)
	if err != nil {
		b.Fatal(err)
	}
	at, err := a.CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		b.Fatal(err)
	}
	ag, err := a.Authenticate(ctx, authority.Token(at.Token))
	if err != nil {
		b.Fatal(err)
	}
	var h contract.ConversationHead
	for i := range saves {
		if h, err = a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Prev: h.Seq, From: i, Messages: msgs("a tool result of modest size")}); err != nil {
			b.Fatal(err)
		}
	}
	return a, ag, h
}

func BenchmarkAuthority_SaveConversation(b *testing.B) {
	a, ag, h := benchConversation(b, 1)
	var err error
	for b.Loop() {
		if h, err = a.SaveConversation(b.Context(), ag, "c1", contract.ConversationSave{Prev: h.Seq, From: h.Messages, Messages: msgs("one more")}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthority_OwnConversation loads a conversation of 200 saves: a load reads the
// project's log from the start.
func BenchmarkAuthority_OwnConversation(b *testing.B) {
	a, ag, _ := benchConversation(b, 200)
	for b.Loop() {
		if _, err := a.OwnConversation(b.Context(), ag, "c1"); err != nil {
			b.Fatal(err)
		}
	}
}
