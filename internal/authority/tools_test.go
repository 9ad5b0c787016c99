package authority_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// Tools a worker of the notes Connection advertises: a read whose rows become facts, and
// a write.
var (
	notesList = contract.ToolDescriptor{Tool: "acme.notes.list@1", Digest: "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		Adapter: "run", AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}, Direct: true,
		Params: []contract.ToolParam{{Name: "dir", Type: "string", Required: true}},
		Facts:  []contract.ToolFact{{Predicate: "note_file", Args: map[string]string{"path": "$path"}}}}
	notesWrite = contract.ToolDescriptor{Tool: "acme.notes.write@1", Digest: "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		Adapter: "run", AdapterDigest: "sha256:adad", Kind: "write", SourceTypes: []string{"file"}, Direct: true,
		Params: []contract.ToolParam{{Name: "path", Type: "string", Required: true}}}
)

// notesWorker plays the worker of Connection notes, advertising both Tools with the
// notes Source in its vault; lock says whether it locks them as advertised.
func notesWorker(t *testing.T, f *opsFixture, lock bool) *authoritytest.Worker {
	t.Helper()
	return authoritytest.NewWorker(t, f.a, f.admin, f.ops, authoritytest.WorkerOptions{Connection: "notes", LockAdvertised: lock,
		Sources: []contract.Source{
			{Name: "notes", Type: "file", Words: []string{"note_file"}, Tier: contract.TierAttested},
			{Name: "archive", Type: "file", Words: []string{"note_file"}, Tier: contract.TierAttested},
		},
		Tools: []contract.ToolDescriptor{notesList, notesWrite}, VaultSources: []string{"notes"}})
}

func TestAuthority_LockToolAdvertised(t *testing.T) {
	f := newOpsFixture(t, 0)
	ctx := t.Context()
	if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "idle"}); err != nil {
		t.Fatal(err)
	}
	notesWorker(t, f, false)
	tests := []struct {
		name         string
		conn         string
		lock         contract.ToolLock
		code         contract.Code
		wantApproval string
	}{
		{"no worker polls the Connection", "idle", contract.ToolLock{Tool: "acme.notes.list@1"}, contract.CodeToolNotAdvertised, ""},
		{"the worker does not advertise the Tool", "notes", contract.ToolLock{Tool: "acme.other@1"}, contract.CodeToolNotAdvertised, ""},
		{"a pinned digest the worker does not run", "notes", contract.ToolLock{Tool: "acme.notes.list@1", Digest: notesWrite.Digest}, contract.CodeToolLockDigest, ""},
		{"an approval that is no word", "notes", contract.ToolLock{Tool: "acme.notes.list@1", Approval: "Any One"}, contract.CodeInvalidArgument, ""},
		{"a read runs freely by default", "notes", contract.ToolLock{Tool: "acme.notes.list@1"}, "", contract.ApprovalNone},
		{"a write needs a person by default", "notes", contract.ToolLock{Tool: "acme.notes.write@1"}, "", contract.ApprovalPerson},
		{"the advertised digest pinned", "notes", contract.ToolLock{Tool: "acme.notes.write@1", Digest: notesWrite.Digest, Approval: "ops_writes"}, "", "ops_writes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := f.a.LockTool(ctx, f.admin, "default", tc.conn, tc.lock)
			wantCode(t, err, tc.code)
			if err != nil {
				return
			}
			if l.Approval != tc.wantApproval || l.Descriptor == nil || l.Descriptor.Tool != contract.ToolID(tc.lock.Tool) || l.LockedBy != f.admin.Principal() || l.LockedAt == nil {
				t.Errorf("lock = %+v, want approval %s with the advertised descriptor, by the member", l, tc.wantApproval)
			}
		})
	}

	inv, err := f.a.ToolInventory(ctx, f.admin, "default", "notes")
	if err != nil {
		t.Fatal(err)
	}
	if inv.Worker == nil || !inv.Worker.Live || inv.Worker.WorkerID != "wkr-test" {
		t.Errorf("inventory worker = %+v, want the live test worker", inv.Worker)
	}
	var tools []string
	for _, e := range inv.Tools {
		tools = append(tools, e.Tool+" "+e.Action)
		if e.Advertised == nil || e.Lock == nil || e.Stale {
			t.Errorf("tool %s: advertised %v, lock %v, stale %v; want advertised and locked at that digest", e.Tool, e.Advertised, e.Lock, e.Stale)
		}
	}
	if diff := cmp.Diff([]string{"acme.notes.list@1 acme.notes.list@1", "acme.notes.write@1 acme.notes.write@1"}, tools); diff != "" {
		t.Errorf("inventory tools and their direct Actions (-want +got):\n%s", diff)
	}
	held := map[string]bool{}
	for _, s := range inv.Sources {
		if s.InVault == nil {
			t.Fatalf("source %s: inVault unknown with a worker that reported its vault", s.Name)
		}
		held[s.Name] = *s.InVault
	}
	if diff := cmp.Diff(map[string]bool{"notes": true, "archive": false}, held); diff != "" {
		t.Errorf("sources in the worker's vault (-want +got):\n%s", diff)
	}
	if inv, err := f.a.ToolInventory(ctx, f.admin, "default", "idle"); err != nil || inv.Worker != nil || len(inv.Tools) != 0 {
		t.Errorf("inventory of a Connection no worker polled = %+v, %v; want no worker and no Tools", inv, err)
	}
}

// openExploration opens an exploration Case for the fixture's Agent.
func openExploration(t *testing.T, f *opsFixture) contract.CaseID {
	t.Helper()
	ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: contract.ToolOpenCase,
		Input: &contract.OpenCaseInput{CaseType: board.ExplorationCaseType, BusinessKey: contract.Args{"topic": contract.StringValue("notes")}}})
	if err != nil || !ans.Result.Accepted {
		t.Fatalf("OpenCase = %+v, %v", ans.Result, err)
	}
	cs, err := f.a.Cases(t.Context(), f.admin, "default")
	if err != nil || len(cs) == 0 {
		t.Fatalf("Cases = %v, %v", cs, err)
	}
	return cs[len(cs)-1].CaseID
}

// TestAuthority_ToolApprovalVoidsRequest: a changed approval is a new built-in release,
// so a request raised under the old one takes no decision (call_changed), and a call
// made after runs as the new approval says.
func TestAuthority_ToolApprovalVoidsRequest(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	notesWorker(t, f, true)
	caseID := openExploration(t, f)
	write := &contract.ApplyActionInput{CaseID: caseID, Action: "acme.notes.write@1", Params: contract.Args{"path": contract.StringValue("a.md"), "source": contract.StringValue("notes")}}
	ans := f.call(t, f.ops, write, 1)
	if op := lastOf(ans.Result.Operations, "ApplyAction acme.notes.write@1"); op.State != contract.OpWaitingForDecision {
		t.Fatalf("the direct write = %+v, want waiting_for_decision", op)
	}
	reqs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil || len(reqs) != 1 {
		t.Fatalf("Requests = %v, %v", reqs, err)
	}
	l, err := f.a.Directory().SetToolApproval(ctx, f.admin, "default", "notes", "acme.notes.write@1", contract.ApprovalNone)
	if err != nil || l.Approval != contract.ApprovalNone {
		t.Fatalf("SetToolApproval = %+v, %v", l, err)
	}
	_, err = f.ops.Operations().Decide(ctx, f.admin, "default", reqs[0].ID, contract.Decision{Digest: reqs[0].Digest, Verdict: contract.VerdictApprove})
	wantCode(t, err, contract.CodeCallChanged)
	ans = f.call(t, f.ops, write, 1, 2)
	if !slices.ContainsFunc(ans.Result.Operations, func(o contract.OperationEntry) bool {
		return o.Label == "ApplyAction acme.notes.write@1" && o.State == contract.OpRunning
	}) {
		t.Errorf("the direct write after its approval became none = %+v, want it running without a decision", ans.Result.Operations)
	}
	if _, err := f.a.Directory().SetToolApproval(ctx, f.admin, "default", "notes", "acme.notes.none@1", contract.ApprovalNone); contract.CodeOf(err) != contract.CodeToolNotLocked {
		t.Errorf("approval of a Tool not locked = %v, want tool_not_locked", err)
	}
}

// TestAuthority_DirectActionsOnAnotherInstance: a lock made through one serve is a
// direct Action on the Board of another over the same store, and an unlock takes it off
// there too: the tool events make a cached Board rebuild.
func TestAuthority_DirectActionsOnAnotherInstance(t *testing.T) {
	f := newOpsFixture(t, 0)
	ctx := t.Context()
	b := authoritytest.Open(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	declared := func() []string {
		t.Helper()
		var names []string
		err := b.View(ctx, "default", func(bd *board.Board) error {
			for _, e := range bd.View(board.ViewRequest{Principal: f.agent.Principal()}).Actions.Items {
				if e.Reason == contract.BlockCaseType {
					names = append(names, e.Name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := declared(); len(got) != 0 {
		t.Fatalf("direct Actions before any lock = %v", got)
	}
	notesWorker(t, f, true)
	if diff := cmp.Diff([]string{"acme.notes.list@1", "acme.notes.write@1"}, declared()); diff != "" {
		t.Errorf("direct Actions on the other instance after the locks (-want +got):\n%s", diff)
	}
	if _, err := f.a.Directory().UnlockTool(ctx, f.admin, "default", "notes", "acme.notes.list@1"); err != nil {
		t.Fatal(err)
	}
	if got := declared(); !slices.Equal(got, []string{"acme.notes.write@1"}) {
		t.Errorf("direct Actions on the other instance after the unlock = %v, want the write alone", got)
	}
}

// lastOf returns the newest entry of the strip with label.
func lastOf(strip []contract.OperationEntry, label string) contract.OperationEntry {
	var out contract.OperationEntry
	for _, o := range strip {
		if o.Label == label && !o.At.Before(out.At) {
			out = o
		}
	}
	return out
}

// TestAuthority_UnlockedToolIsNotClaimed: a row served before the unlock is refused at
// its claim, so nothing runs for a Tool no longer locked.
func TestAuthority_UnlockedToolIsNotClaimed(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	w := notesWorker(t, f, true)
	caseID := openExploration(t, f)
	f.call(t, f.ops, &contract.ApplyActionInput{CaseID: caseID, Action: "acme.notes.list@1",
		Params: contract.Args{"dir": contract.StringValue("docs"), "source": contract.StringValue("notes")}}, 1)
	row := w.Served(t, f.agent.ID, 2)
	if _, err := f.a.Directory().UnlockTool(ctx, f.admin, "default", "notes", "acme.notes.list@1"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, w.Claim(ctx, row), contract.CodeGrantMismatch)
}

// TestAuthority_DirectActionVerifies: a project whose direct Actions ran, were unlocked
// and had their approvals changed still verifies where it lies: its chain, its Board's
// node table against its log (docket events verify --data-dir).
func TestAuthority_DirectActionVerifies(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	w := notesWorker(t, f, true)
	caseID := openExploration(t, f)
	f.call(t, f.ops, &contract.ApplyActionInput{CaseID: caseID, Action: "acme.notes.list@1",
		Params: contract.Args{"dir": contract.StringValue("docs"), "source": contract.StringValue("notes")}}, 1)
	w.Settle(t, f.agent.ID, 2, contract.Args{"path": contract.StringValue("docs/a.md")})
	if _, err := f.a.Directory().SetToolApproval(ctx, f.admin, "default", "notes", "acme.notes.list@1", contract.ApprovalPerson); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().UnlockTool(ctx, f.admin, "default", "notes", "acme.notes.write@1"); err != nil {
		t.Fatal(err)
	}
	rep, err := bundle.CheckStore(ctx, f.st, nil, nil)
	if err != nil || len(rep.Broken) != 0 || len(rep.Held) != 1 {
		t.Errorf("CheckStore = %+v, %v; want the project held", rep, err)
	}
}

// TestAuthority_DirectActionPastTheViewBound: a project may lock more Tools than the View
// lists Actions; a direct Action past the bound still runs when called by name.
func TestAuthority_DirectActionPastTheViewBound(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	var tools []contract.ToolDescriptor
	for i := range board.ViewMaxActions + 5 {
		id := contract.ToolID(fmt.Sprintf("acme.tool_%02d@1", i))
		tools = append(tools, contract.ToolDescriptor{Tool: id, Digest: fmt.Sprintf("sha256:%064x", i+1), Adapter: "run", AdapterDigest: "sha256:adad",
			Kind: "read", SourceTypes: []string{}, Direct: true, Params: []contract.ToolParam{}})
	}
	authoritytest.NewWorker(t, f.a, f.admin, f.ops, authoritytest.WorkerOptions{Connection: "many", LockAdvertised: true, Tools: tools})
	caseID := openExploration(t, f)
	last := string(tools[len(tools)-1].Tool)
	ans := f.call(t, f.ops, &contract.ApplyActionInput{CaseID: caseID, Action: last}, 1)
	if ans.Result.ErrorCode != "" || !slices.ContainsFunc(ans.Result.Operations, func(o contract.OperationEntry) bool {
		return o.Label == "ApplyAction "+last && o.State == contract.OpRunning
	}) {
		t.Errorf("the direct Action past the View's bound = %s %+v, want it running", ans.Result.ErrorCode, ans.Result.Operations)
	}
}
