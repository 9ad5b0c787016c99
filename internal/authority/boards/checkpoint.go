package boards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// ErrNoSigner refuses a checkpoint when the authority was started without signing keys.
var ErrNoSigner = errors.New("no signing keys")

// appendCheckpoint signs project's head as tx sees it and appends the
// [event.CheckpointSigned] event holding the checkpoint, in tx.
func (a *Cache) appendCheckpoint(ctx context.Context, tx store.Tx, project contract.ProjectID, reason, caseID string, at time.Time) (signing.Checkpoint, error) {
	head, err := tx.LockHead(ctx, string(project))
	if err != nil {
		return signing.Checkpoint{}, err
	}
	cp := a.signer.SignCheckpoint(signing.Checkpoint{Project: string(project), Seq: head.Seq, Hash: head.Hash.String(), At: at, Reason: reason, Case: caseID})
	if err := eventlog.Append(ctx, tx, project, adoptActor, at, event.CheckpointSignedData(cp)); err != nil {
		return signing.Checkpoint{}, err
	}
	return cp, nil
}

// Checkpoint signs project's head for reason and appends it to the log, unless the
// last event already is a checkpoint, which it then returns: a checkpoint of a checkpoint
// proves nothing more.
func (a *Cache) Checkpoint(ctx context.Context, project contract.ProjectID, reason string) (signing.Checkpoint, error) {
	if a.signer == nil {
		return signing.Checkpoint{}, ErrNoSigner
	}
	var cp signing.Checkpoint
	err := a.store.Update(ctx, func(tx store.Tx) error {
		head, err := tx.LockHead(ctx, string(project))
		if err != nil {
			return err
		}
		if head.Seq > 0 {
			last, err := tx.Events(ctx, string(project), head.Seq-1, 1)
			if err != nil {
				return err
			}
			if len(last) == 1 && last[0].Type == event.CheckpointSigned {
				var d event.CheckpointSignedData
				err := json.Unmarshal(last[0].Data, &d)
				cp = signing.Checkpoint(d)
				return err
			}
		}
		cp, err = a.appendCheckpoint(ctx, tx, project, reason, "", a.nowUTC())
		return err
	})
	if err != nil {
		return signing.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", project, err)
	}
	return cp, nil
}

// CheckpointError names a checkpoint event of a project's log that does not hold: its
// signature does not verify under the public keys, or it signs a head the log does not
// have there (the log was rewritten and its chain recomputed without the key).
type CheckpointError struct {
	Project contract.ProjectID
	Seq     int64 // the checkpoint event's sequence number
	Want    string
	Got     string
}

// Error names the project, the checkpoint and what differs.
func (e *CheckpointError) Error() string {
	return fmt.Sprintf("checkpoint at seq %d of %s does not hold: %s, want %s", e.Seq, e.Project, e.Got, e.Want)
}

// CheckCheckpoints checks every checkpoint event of project's log read from r: that
// keys verify its signature and that the head it signs is the one the log has just
// before it. It returns the last checkpoint (the zero Checkpoint when there is none) or
// a *[CheckpointError] naming the first that does not hold. The hash chain itself is
// [store.Store.Verify]'s to check.
func CheckCheckpoints(ctx context.Context, r store.Reader, project contract.ProjectID, keys []signing.PublicKey) (signing.Checkpoint, error) {
	var last signing.Checkpoint
	err := eventlog.Scan(ctx, r, project, 0, -1, func(e store.Event) error {
		if e.Type != event.CheckpointSigned {
			return nil
		}
		cp, err := CheckCheckpoint(e, keys)
		if err != nil {
			return err
		}
		last = cp
		return nil
	})
	return last, err
}

// CheckCheckpoint checks one checkpoint event e: its signature under keys, and that it
// signs the head just before it (e.Seq-1, e.PrevHash).
func CheckCheckpoint(e store.Event, keys []signing.PublicKey) (signing.Checkpoint, error) {
	broken := func(want, got string) error {
		return &CheckpointError{Project: contract.ProjectID(e.Project), Seq: e.Seq, Want: want, Got: got}
	}
	var d event.CheckpointSignedData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return signing.Checkpoint{}, broken("a checkpoint", "data that does not decode")
	}
	cp := signing.Checkpoint(d)
	if err := cp.Verify(keys); err != nil {
		return cp, broken("a signature under the installation's keys", err.Error())
	}
	if cp.Project != e.Project || cp.Seq != e.Seq-1 || cp.Hash != e.PrevHash.String() {
		return cp, broken(fmt.Sprintf("the log's head before it, seq %d hash %s", e.Seq-1, e.PrevHash),
			fmt.Sprintf("a signed head seq %d hash %s", cp.Seq, cp.Hash))
	}
	return cp, nil
}

// VerifyLog checks project's log in st: its hash chain ([store.Store.Verify]), its signed
// checkpoints under keys (none checked when keys is nil), then its node table and
// installed releases against the log ([CheckProjection]). What does not hold is a report,
// naming the first broken link, checkpoint or row, not an error.
func VerifyLog(ctx context.Context, st store.Store, project contract.ProjectID, keys []signing.PublicKey) (contract.ChainReport, error) {
	h, err := st.Verify(ctx, string(project))
	if ce, ok := errors.AsType[*store.ChainError](err); ok {
		return contract.ChainReport{Project: project, Seq: ce.Seq - 1,
			Broken: &contract.BrokenLink{Seq: ce.Seq, Field: ce.Field, Want: ce.Want, Got: ce.Got}}, nil
	}
	if err != nil {
		return contract.ChainReport{}, err
	}
	r := contract.ChainReport{Project: project, OK: true, Seq: h.Seq}
	if h.Seq > 0 {
		r.Hash = h.Hash.String()
	}
	if keys != nil {
		cp, err := CheckCheckpoints(ctx, st, project, keys)
		if ce, ok := errors.AsType[*CheckpointError](err); ok {
			r.OK = false
			r.Broken = &contract.BrokenLink{Seq: ce.Seq, Field: "checkpoint", Want: ce.Want, Got: ce.Got}
			return r, nil
		}
		if err != nil {
			return contract.ChainReport{}, err
		}
		r.SignedSeq, r.SignedBy = cp.Seq, cp.KeyID
	}
	err = CheckProjection(ctx, st, project)
	if pe, ok := errors.AsType[*ProjectionError](err); ok {
		r.OK = false
		r.Broken = &contract.BrokenLink{Seq: pe.Seq, Node: pe.Node, Field: pe.Field, Want: pe.Want, Got: pe.Got}
		return r, nil
	}
	if err != nil {
		return contract.ChainReport{}, err
	}
	return r, nil
}

// CheckHeld checks project's log in r against a checkpoint held outside it (kept by a
// third party from an earlier export or `docket events checkpoint -o json`): the
// checkpoint must verify under keys, and the log must still have its head at its seq. A
// log rewritten and stripped of its own checkpoints fails here, naming the held one.
func CheckHeld(ctx context.Context, r store.Reader, project contract.ProjectID, held signing.Checkpoint, keys []signing.PublicKey) error {
	broken := func(want, got string) error {
		return &CheckpointError{Project: project, Seq: held.Seq, Want: want, Got: got}
	}
	if err := held.Verify(keys); err != nil {
		return broken("a held checkpoint signed under the installation's keys", err.Error())
	}
	if held.Project != string(project) {
		return broken("a checkpoint of project "+string(project), "one of project "+held.Project)
	}
	if held.Seq == 0 {
		return nil
	}
	evs, err := r.Events(ctx, string(project), held.Seq-1, 1)
	if err != nil {
		return fmt.Errorf("read event %d of %s: %w", held.Seq, project, err)
	}
	if len(evs) == 0 || evs[0].Seq != held.Seq {
		return broken(fmt.Sprintf("an event at seq %d, as the held checkpoint signed", held.Seq), "a log that ends before it")
	}
	if got := evs[0].Hash.String(); got != held.Hash {
		return broken(fmt.Sprintf("hash %s at seq %d, as the held checkpoint signed", held.Hash, held.Seq), "hash "+got)
	}
	return nil
}
