package authority

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// MaxEventPage is the largest page of events one call returns.
const MaxEventPage = eventlog.MaxEventPage

// Events returns up to limit events of project after sequence number after, in order.
// limit <= 0 means 100.
func (a *Authority) Events(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64, limit int) ([]contract.Event, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	if after < 0 {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the cursor %d is negative; start from 0.", after)
	}
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxEventPage)
	es, err := a.store.Events(ctx, string(project), after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", project, eventlog.Refuse(err, "project "+string(project)))
	}
	out := make([]contract.Event, 0, len(es))
	for _, e := range es {
		out = append(out, eventWire(e))
	}
	return out, nil
}

// FollowEvents is [Authority.Events] for a client that follows the log (the console's
// event stream): the events after after that this process committed and still keeps in
// memory ([eventlog.Recent]) are taken from there, as far as they follow after without a
// gap, and the store is read only when memory has not the next event. Memory holds
// committed events only, at the sequence numbers they were committed at, so what it
// answers is what the store would (docs/architecture.md, "Catch-ups from memory"). Its
// page may end before the log's head, another instance's events being read at the next
// call: a follower waits and reads again, where a reader of pages would take a short
// page for the end of the log.
func (a *Authority) FollowEvents(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64, limit int) ([]contract.Event, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	if after < 0 || limit <= 0 {
		return a.Events(ctx, c, project, after, limit)
	}
	es := eventlog.Recent(a.store, project, after, after+int64(min(limit, MaxEventPage)))
	if len(es) == 0 {
		return a.Events(ctx, c, project, after, limit)
	}
	out := make([]contract.Event, 0, len(es))
	for _, e := range es {
		out = append(out, eventWire(e))
	}
	return out, nil
}

// WaitEvents blocks until project's log holds an event after sequence number after, or
// ctx ends.
func (a *Authority) WaitEvents(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64) error {
	if err := c.RequireMember(project); err != nil {
		return err
	}
	_, err := a.store.Wait(ctx, string(project), after)
	return err
}

// VerifyEvents recomputes project's hash chain, checks its signed checkpoints against
// the installation's public keys, then checks the node table and the installed releases
// against the log ([boards.VerifyLog]). A broken chain, checkpoint or row is a report,
// not an error: the report names the first that does not hold.
func (a *Authority) VerifyEvents(ctx context.Context, c identity.Caller, project contract.ProjectID) (contract.ChainReport, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.ChainReport{}, err
	}
	var keys []signing.PublicKey
	if a.signer != nil {
		keys = a.signer.Public()
	}
	r, err := boards.VerifyLog(ctx, a.store, project, keys)
	if err != nil {
		return contract.ChainReport{}, fmt.Errorf("verify events of %s: %w", project, eventlog.Refuse(err, "project "+string(project)))
	}
	if !r.OK {
		a.log.WarnContext(ctx, "event log does not verify", logProject, project, logSeq, r.Broken.Seq, logField, r.Broken.Field)
	}
	return r, nil
}

func eventWire(e store.Event) contract.Event {
	return contract.Event{Project: contract.ProjectID(e.Project), Seq: e.Seq, ID: e.ID, Type: e.Type, At: e.At,
		Actor: e.Actor, Data: e.Data, DataHash: e.DataHash.String(), PrevHash: e.PrevHash.String(), Hash: e.Hash.String()}
}

// Checkpoint signs project's head now (on demand) and appends the checkpoint to its log;
// a member acting itself may, not its delegate.
func (a *Authority) Checkpoint(ctx context.Context, c identity.Caller, project contract.ProjectID) (signing.Checkpoint, error) {
	if err := c.RequireInPerson(project); err != nil {
		return signing.Checkpoint{}, err
	}
	return a.SignHead(ctx, project)
}

// SignHead signs project's head now, for the operator who holds the data dir (docket
// events checkpoint), and appends the checkpoint to its log.
func (a *Authority) SignHead(ctx context.Context, project contract.ProjectID) (signing.Checkpoint, error) {
	return a.boards.Checkpoint(ctx, project, signing.ReasonDemand)
}

// PublicKeys returns the installation's public signing keys, oldest first; none when it
// signs nothing.
func (a *Authority) PublicKeys() []signing.PublicKey {
	if a.signer == nil {
		return nil
	}
	return a.signer.Public()
}

// KeyDirectory returns the keys of the HTTP message signatures directory: the
// installation's public keys, then the keys of the bound Sources that sign their requests.
func (a *Authority) KeyDirectory(ctx context.Context) ([]signing.PublicKey, error) {
	src, err := a.dir.SourceSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := a.PublicKeys()
	for _, k := range src {
		if !slices.ContainsFunc(out, func(o signing.PublicKey) bool { return o.ID == k.ID }) {
			out = append(out, k)
		}
	}
	return out, nil
}

// RunCheckpoints signs a checkpoint of every project whose log moved since its last
// checkpoint, every interval, until ctx ends. It returns nil when ctx ends.
func (a *Authority) RunCheckpoints(ctx context.Context, interval time.Duration) error {
	if a.signer == nil {
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ps, err := a.store.Projects(ctx)
		if err != nil {
			a.log.ErrorContext(ctx, "checkpoints: list projects", logErr, err)
			continue
		}
		for _, p := range ps {
			if _, err := a.boards.Checkpoint(ctx, contract.ProjectID(p.ID), signing.ReasonInterval); err != nil && ctx.Err() == nil {
				a.log.ErrorContext(ctx, "checkpoint failed", logProject, p.ID, logErr, err)
			}
		}
	}
}
