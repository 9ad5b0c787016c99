package authority_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// BenchmarkOperations_HookFree is one free coding-agent call recorded: the hook policy
// read, the call admitted as an Operation in one SQLite transaction, and its outcome
// recorded in another — what a Read costs the coding agent besides the process it starts.
// Its floor is two single-row commits of the sqlite floor.
func BenchmarkOperations_HookFree(b *testing.B) {
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "docket.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	p := authoritytest.New(b, authoritytest.Options{Store: st, Key: identity.Key{9}, Agent: "coder"})
	text, err := os.ReadFile(filepath.Join("testdata", "hook", "hook.toml"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.A.PublishPolicy(ctx, p.Admin, "default", contract.PublishPolicyRequest{File: "hook.toml", Text: string(text)}); err != nil {
		b.Fatal(err)
	}
	// The bound on calls a minute is lifted: this measures what one call costs, many
	// times a minute.
	ops := authority.NewOperations(p.A, operation.Config{MaxHookPerMinute: 1 << 30})
	coder := hookToken(b, p.A, p.Admin, "coder")
	input := json.RawMessage(`{"file_path":"/r/docs/a.md"}`)
	out := contract.HookOutcome{Tool: "Read", OK: true, OutputDigest: "sha256:" + fmt.Sprintf("%064x", 0), OutputBytes: 10}
	n := 0
	for b.Loop() {
		n++
		id := fmt.Sprintf("toolu_%d", n)
		v, err := ops.Operations().Hook(ctx, coder, contract.HookCall{CLI: "claude-code", CallID: id, Tool: "Read", Input: input, Path: "docs/a.md"})
		if err != nil || !v.Allow {
			b.Fatalf("call %d: %+v, %v", n, v, err)
		}
		out.CallID = id
		if _, err := ops.Operations().HookOutcome(ctx, coder, out); err != nil {
			b.Fatal(err)
		}
	}
}
