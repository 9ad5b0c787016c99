package authority_test

import (
	"crypto/rand"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// rewriteEvent2 changes the actor of event 2 of project default and recomputes every
// later hash and the head, as someone without the signing key can.
func rewriteEvent2(t *testing.T, st store.Store, exec func(*testing.T, string, ...any)) {
	t.Helper()
	evs, err := st.Events(t.Context(), "default", 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	prev := evs[0].Hash
	for i := 1; i < len(evs); i++ {
		e := evs[i]
		if i == 1 {
			e.Actor = "member:mallory"
		}
		e.PrevHash = prev
		e.Hash = store.EventHash(e)
		exec(t, `UPDATE events SET actor = $1, prev_hash = $2, hash = $3 WHERE project = 'default' AND seq = $4`,
			e.Actor, e.PrevHash[:], e.Hash[:], e.Seq)
		prev = e.Hash
	}
	exec(t, `UPDATE event_heads SET hash = $1 WHERE project = 'default'`, prev[:])
	if _, err := st.Verify(t.Context(), "default"); err != nil {
		t.Fatalf("the recomputed chain does not hold, so the test proves nothing: %v", err)
	}
}

// signedAuthority is an authority over st that signs with a new keyring, a Board write
// signing the head every events (0: the default).
func signedAuthority(t *testing.T, st store.Store, key identity.Key, every int64) (*authority.Authority, *signing.Keyring) {
	t.Helper()
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a := authoritytest.Bare(t, authoritytest.Options{Store: st, Key: key, Signer: keys, CheckpointEvery: every})
	return a, keys
}

// TestAuthority_CheckpointRecomputedChain rewrites an event and recomputes every later
// hash and the head without the signing key: the chain then holds, and the signed
// checkpoint after the edit names the rewrite.
func TestAuthority_CheckpointRecomputedChain(t *testing.T) {
	for _, be := range tamperBackends {
		t.Run(be.name, func(t *testing.T) {
			st, exec := be.open(t)
			f := newFixtureOn(t, st)
			ctx := t.Context()
			a, keys := signedAuthority(t, st, f.key, 0)
			if err := a.Commit(ctx, "default", f.admin.Principal(), assertedFact("j1")); err != nil {
				t.Fatal(err)
			}
			cp, err := a.Checkpoint(ctx, f.admin, "default")
			if err != nil {
				t.Fatalf("Checkpoint: %v", err)
			}
			again, err := a.Checkpoint(ctx, f.admin, "default")
			if err != nil || again != cp {
				t.Errorf("Checkpoint of a log ending in a checkpoint = %+v, %v; want the same checkpoint", again, err)
			}
			rep, err := a.VerifyEvents(ctx, f.admin, "default")
			if err != nil || !rep.OK || rep.SignedSeq != cp.Seq || rep.SignedBy != keys.KeyID() {
				t.Fatalf("VerifyEvents before tampering = %+v, %v; want ok, signed at %d", rep, err, cp.Seq)
			}

			rewriteEvent2(t, st, exec)
			rep, err = a.VerifyEvents(ctx, f.admin, "default")
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || rep.Broken == nil || rep.Broken.Field != "checkpoint" || rep.Broken.Seq != cp.Seq+1 {
				t.Fatalf("VerifyEvents after a recomputed chain = %+v; want the checkpoint at seq %d named", rep, cp.Seq+1)
			}
		})
	}
}

// TestAuthority_CheckpointRotatedKey: after a rotation the new key signs, and what the
// old key signed still verifies.
func TestAuthority_CheckpointRotatedKey(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, keys := signedAuthority(t, f.st, f.key, 0)
	old, err := a.Checkpoint(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Rotate(rand.Reader, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx, "default", f.admin.Principal(), assertedFact("j1")); err != nil {
		t.Fatal(err)
	}
	cp, err := a.Checkpoint(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	if cp.KeyID == old.KeyID || cp.KeyID != keys.KeyID() {
		t.Errorf("after a rotation the checkpoint is signed by %s, want the new key %s (the old was %s)", cp.KeyID, keys.KeyID(), old.KeyID)
	}
	rep, err := a.VerifyEvents(ctx, f.admin, "default")
	if err != nil || !rep.OK {
		t.Fatalf("VerifyEvents after a rotation = %+v, %v; want ok with the old key kept", rep, err)
	}
	if got := len(a.PublicKeys()); got != 2 {
		t.Errorf("PublicKeys after one rotation holds %d keys, want 2", got)
	}
}

// TestAuthority_CaseCloseSignsCheckpoint: a Case close is sealed in the log by a signed
// checkpoint of the head that ends in its receipt.
func TestAuthority_CaseCloseSignsCheckpoint(t *testing.T) {
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st := openSQLite(t, filepath.Join(t.TempDir(), "docket.db"))
	p := authoritytest.New(t, authoritytest.Options{Store: st, Capability: "testdata/grant", Agent: "calc", Signer: keys})
	ops := authority.NewOperations(p.A, operation.Config{HoldBound: time.Minute})
	ctx := t.Context()
	if err := p.A.Commit(ctx, "default", p.Admin.Principal(), assertRoster("ann", "reader")); err != nil {
		t.Fatal(err)
	}
	in := &contract.OpenCaseInput{CaseType: "access", BusinessKey: contract.Args{"user": contract.StringValue("ann")}}
	ans, err := ops.Call(ctx, p.Agent, operation.Call{Tool: contract.ToolOpenCase, Input: in, Delivered: func(int64) bool { return true }})
	if err != nil || len(ans.Focus) != 1 {
		t.Fatalf("OpenCase = %+v, %v", ans.Result, err)
	}
	id := ans.Focus[0]
	ans, err = ops.Call(ctx, p.Agent, operation.Call{Tool: contract.ToolCloseCase, Delivered: func(int64) bool { return true },
		Input: &contract.CloseCaseInput{CaseID: id, Disposition: contract.DispositionCancelled, Reason: "not needed"}})
	if err != nil || state(ans) != contract.OpDone {
		t.Fatalf("CloseCase = %+v, %v; want done", ans.Result, err)
	}
	cp, after := checkpointAfter(t, st, event.CaseClosed)
	if cp.Reason != signing.ReasonCaseClosed || cp.Case != string(id) || cp.Seq < after {
		t.Errorf("checkpoint after the close = %+v; want one of reason case.closed naming %s, covering seq %d", cp, id, after)
	}
	if err := cp.Verify(keys.Public()); err != nil {
		t.Error(err)
	}
}

// checkpointAfter returns the first checkpoint of project default after its last event
// of type typ, and that event's seq.
func checkpointAfter(t *testing.T, st store.Store, typ string) (signing.Checkpoint, int64) {
	t.Helper()
	evs, err := st.Events(t.Context(), "default", 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var after int64
	var cp signing.Checkpoint
	for _, e := range evs {
		switch {
		case e.Type == typ:
			after, cp = e.Seq, signing.Checkpoint{}
		case e.Type == event.CheckpointSigned && after > 0 && cp.Seq == 0:
			if err := json.Unmarshal(e.Data, &cp); err != nil {
				t.Fatal(err)
			}
			if cp.Seq != e.Seq-1 {
				t.Errorf("checkpoint at %d signs seq %d, want the head before it", e.Seq, cp.Seq)
			}
		}
	}
	if cp.Seq == 0 {
		t.Fatalf("no checkpoint after the %s event at seq %d", typ, after)
	}
	return cp, after
}

// TestAuthority_CheckpointEveryEvents: a Board write signs the head once the log moved
// CheckpointEvery events past the last checkpoint.
func TestAuthority_CheckpointEveryEvents(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, _ := signedAuthority(t, f.st, f.key, 4)
	if err := a.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	head, err := f.st.Head(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{"j1", "j2", "j3", "j4", "j5"} {
		if err := a.Commit(ctx, "default", f.admin.Principal(), assertedFact(job)); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := f.st.Events(ctx, "default", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range evs {
		if e.Type == event.CheckpointSigned {
			var cp signing.Checkpoint
			if err := json.Unmarshal(e.Data, &cp); err != nil {
				t.Fatal(err)
			}
			if cp.Reason != signing.ReasonEvents {
				t.Errorf("checkpoint at %d has reason %s, want %s", e.Seq, cp.Reason, signing.ReasonEvents)
			}
			seqs = append(seqs, cp.Seq)
		}
	}
	// Each write appends two events (its own and its record) to the log Init began.
	if len(seqs) != 2 || seqs[0]-head.Seq < 4 || seqs[1]-seqs[0] < 4 || seqs[1]-seqs[0] > 5 {
		t.Fatalf("checkpoints signed heads %v over %d events, want two, 4 or 5 events apart", seqs, len(evs))
	}
	if rep, err := a.VerifyEvents(ctx, f.admin, "default"); err != nil || !rep.OK || rep.SignedSeq != seqs[1] {
		t.Errorf("VerifyEvents = %+v, %v; want ok signed at %d", rep, err, seqs[1])
	}
}

// TestAuthority_ActionOutcomeSignsCheckpoint: an executed Action's outcome, reported by a
// worker, is sealed in the log by a signed checkpoint of the head that ends in it.
func TestAuthority_ActionOutcomeSignsCheckpoint(t *testing.T) {
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st := openSQLite(t, filepath.Join(t.TempDir(), "docket.db"))
	p := authoritytest.New(t, authoritytest.Options{Store: st, Capability: "testdata/ops", Agent: "calc", Signer: keys})
	ops := authority.NewOperations(p.A, operation.Config{HoldBound: time.Nanosecond})
	ans, err := ops.Call(t.Context(), p.Agent, operation.Call{Tool: contract.ToolApplyAction,
		Input: &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a")}}})
	if err != nil || state(ans) != contract.OpRunning {
		t.Fatalf("ApplyAction fetch = %+v, %v; want running", ans.Result, err)
	}
	authoritytest.NewWorker(t, p.A, p.Admin, ops, authoritytest.WorkerOptions{
		Sources: []contract.Source{{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}},
		Tools:   fetchTool,
	}).Settle(t, p.Agent.ID, 1, contract.Args{"path": contract.StringValue("a")})
	cp, after := checkpointAfter(t, st, event.ActionCompleted)
	if cp.Reason != signing.ReasonActionCompleted || cp.Seq < after {
		t.Errorf("checkpoint after the outcome = %+v; want reason action.completed covering seq %d", cp, after)
	}
}
