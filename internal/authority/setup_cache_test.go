package authority_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// TestOperations_SetupFollowsEvents shows that the setup an answer's View is read with
// (which Tools are locked on a live Connection) follows every change to it, made by this
// instance or by another over the same store, though it is kept between calls.
func TestOperations_SetupFollowsEvents(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	ctx := t.Context()
	fetch := func() contract.BlockReason {
		t.Helper()
		ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}})
		if err != nil {
			t.Fatalf("QueryBoard: %v", err)
		}
		i := slices.IndexFunc(ans.Result.View.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == "fetch" })
		if i < 0 {
			t.Fatalf("the View lists no fetch: %+v", ans.Result.View.Actions.Items)
		}
		return ans.Result.View.Actions.Items[i].Reason
	}
	steps := []struct {
		name string
		do   func() error
		want contract.BlockReason
	}{
		{"no connection", func() error { return nil }, contract.BlockNeedsSetup},
		{"asked again", func() error { return nil }, contract.BlockNeedsSetup},
		{"connection without the tool", func() error {
			_, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
			return err
		}, contract.BlockNeedsSetup},
		{"tool locked by another instance", func() error {
			_, err := other.LockTool(ctx, f.admin, "default", "laptop", contract.ToolLock{Tool: "test.fetch@1", Digest: "sha256:" + strings.Repeat("ab", 32)})
			return err
		}, ""},
		{"connection revoked", func() error {
			_, err := f.a.Directory().RevokeConnection(ctx, f.admin, "default", "laptop")
			return err
		}, contract.BlockNeedsSetup},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := fetch(); got != s.want {
			t.Errorf("%s: fetch blocked for %q, want %q", s.name, got, s.want)
		}
	}
}
