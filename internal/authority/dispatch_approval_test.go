package authority_test

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// sendDigest is a digest test.send@1 is locked at; resendDigest another one.
var (
	sendDigest   = "sha256:" + strings.Repeat("5", 64)
	resendDigest = "sha256:" + strings.Repeat("6", 64)
)

func sendTool(digest string) []contract.ToolDescriptor {
	return []contract.ToolDescriptor{{Tool: "test.send@1", Digest: digest, Adapter: "run", AdapterDigest: "sha256:adad", Kind: "write", SourceTypes: []string{"file"}}}
}

// target has the member assert the trusted target fact send binds its address from.
func (f *opsFixture) target(t *testing.T, addr string) {
	t.Helper()
	member := f.admin.Principal()
	err := f.a.Commit(t.Context(), "default", member, func(bd *board.Board) (boards.Change, error) {
		res, err := bd.ApplyBatch(board.Author{Principal: member, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "target", Args: contract.Args{"addr": contract.StringValue(addr)}}}}})
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// approvedSend has the Agent call send (which needs a person) with test.send@1 locked on
// the laptop, and a member approve it; it returns the approved Request.
func (f *hopFixture) approvedSend(t *testing.T) contract.Request {
	t.Helper()
	ctx := t.Context()
	if _, err := f.a.LockTool(ctx, f.admin, "default", "laptop", contract.ToolLock{Tool: "test.send@1", Digest: sendDigest}); err != nil {
		t.Fatal(err)
	}
	f.target(t, "a@x")
	if ans := f.call(t, f.ops, &contract.ApplyActionInput{Action: "send"}); state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("send = %s %+v, want waiting_for_decision", ans.Result.ErrorCode, ans.Result.Operations)
	}
	rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	req := rs[0]
	if req.Vector.ToolDigest != sendDigest || !strings.HasPrefix(req.Vector.Source, "workspace@sha256:") {
		t.Fatalf("request vector = %+v, want the locked digest and the Source record", req.Vector)
	}
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	return req
}

// TestDispatcher_ServesOnlyWhatWasApproved: the vector a person approved is compared with
// what the hop serves; a Source rebound or a Tool re-locked after the approval voids it
// (call_changed) and a new request asks again — before, the call ran under the old
// approval.
func TestDispatcher_ServesOnlyWhatWasApproved(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, f *hopFixture)
		tools  []contract.ToolDescriptor // what the worker advertises
	}{
		{"source rebound", func(t *testing.T, f *hopFixture) {
			if _, err := f.a.Directory().BindSource(t.Context(), f.admin, "default", "laptop", contract.Source{Name: "workspace", Type: "file",
				Words: []string{"fetched", "sent"}, Tier: contract.TierAttested}); err != nil {
				t.Fatal(err)
			}
		}, sendTool(sendDigest)},
		{"tool re-locked", func(t *testing.T, f *hopFixture) {
			if _, err := f.a.LockTool(t.Context(), f.admin, "default", "laptop", contract.ToolLock{Tool: "test.send@1", Digest: resendDigest}); err != nil {
				t.Fatal(err)
			}
		}, sendTool(resendDigest)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHopFixture(t)
			ctx := t.Context()
			approved := f.approvedSend(t)
			tt.change(t, f)
			l := f.startup(t, "wkr-a")
			if rows := f.poll(t, l, tt.tools); len(rows) != 0 {
				t.Fatalf("Poll served %d rows of a call that is no longer what was approved, want none", len(rows))
			}
			rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 2 || rs[0].State != contract.RequestVoid || rs[1].State != contract.RequestPending || rs[1].Digest == approved.Digest {
				t.Fatalf("requests after the poll = %+v, want the approval void and a new pending request", rs)
			}
			if e := f.opState(t); e.State != contract.OpWaitingForDecision || e.Decision != string(rs[1].ID) {
				t.Fatalf("operation after the poll = %+v, want waiting for %s", e, rs[1].ID)
			}
			if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", rs[1].ID, contract.Decision{Digest: rs[1].Digest, Verdict: contract.VerdictApprove}); err != nil {
				t.Fatal(err)
			}
			rows := f.poll(t, l, tt.tools)
			if len(rows) != 1 {
				t.Fatalf("Poll after the new approval served %d rows, want 1", len(rows))
			}
			if err := f.claim(l, rows[0]); err != nil {
				t.Fatalf("Claim: %v", err)
			}
		})
	}
	t.Run("as approved", func(t *testing.T) {
		f := newHopFixture(t)
		f.approvedSend(t)
		l := f.startup(t, "wkr-a")
		if rows := f.poll(t, l, sendTool(sendDigest)); len(rows) != 1 {
			t.Fatalf("Poll served %d rows of the call as approved, want 1", len(rows))
		}
	})
}
