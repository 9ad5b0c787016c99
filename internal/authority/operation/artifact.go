package operation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// artifactPrefix starts every artifact reference; a ref is never a path or a URL.
const artifactPrefix = "art_"

// artifactRef is the ref of content kept by agent: derived from both, so one Agent that
// keeps the same bytes twice has one artifact, and two Agents never share a ref.
func artifactRef(agent string, h store.Hash) string {
	sum := sha256.Sum256([]byte(agent + "\x00" + h.String()))
	return artifactPrefix + hex.EncodeToString(sum[:16])
}

// PutArtifact keeps content as an artifact of the Agent c and returns its reference, once
// the artifact is durable: its bytes are a blob of the store (content-addressed) and an
// artifact.issued event names them, so ReadArtifact reads them after any restart of
// serve or of the runtime. Content kept again while its artifact can still be read gets
// the same ref and appends nothing. Content over [contract.MaxArtifactBytes] is refused
// with [contract.CodeArtifactTooLarge].
func (o *Operations) PutArtifact(ctx context.Context, c identity.Caller, content []byte) (contract.ArtifactRef, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return contract.ArtifactRef{}, contract.Errorf(contract.CodeForbidden, "only agents keep artifacts; use an agent token.")
	}
	if len(content) > contract.MaxArtifactBytes {
		return contract.ArtifactRef{}, contract.Errorf(contract.CodeArtifactTooLarge,
			"the artifact is %d bytes, over the bound of %d; keep a smaller result (narrow the query, or page it)", len(content), contract.MaxArtifactBytes)
	}
	project := c.Projects[0]
	digest := contract.Sum(content)
	h := store.Hash(digest)
	ref := artifactRef(c.ID, h)
	now := o.nowUTC()
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return contract.ArtifactRef{}, fmt.Errorf("keep artifact: %w", err)
	}
	if out, ok := l.keptLocked(ref, c.ID, digest, now); ok {
		return out, nil
	}
	// The retention in force is read before the transaction, through the ledger held, at
	// the head just read (docs/architecture.md, "The lock order").
	keep, err := o.retention(ctx, l, project)
	if err != nil {
		return contract.ArtifactRef{}, fmt.Errorf("keep artifact: %w", err)
	}
	out := contract.ArtifactRef{Ref: ref, Size: int64(len(content)), Digest: digest, ExpiresAt: now.Add(keep)}
	// Decided again on the ledger caught up under the head lock: content another instance
	// kept meanwhile keeps its ref and appends nothing.
	err = l.updateLocked(ctx, func(tx store.Tx) error {
		if kept, ok := l.keptLocked(ref, c.ID, digest, now); ok {
			out = kept
			return nil
		}
		put, err := tx.PutBlob(ctx, content)
		if err != nil {
			return err
		}
		if put != h {
			return fmt.Errorf("the store named the blob %s, not its sha256 %s", put, h)
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now,
			event.ArtifactIssuedData{Ref: ref, Agent: c.ID, Hash: h.String(), Size: out.Size, ExpiresAt: out.ExpiresAt})
	})
	if err != nil {
		return contract.ArtifactRef{}, eventlog.RefuseWrite(err, "keep artifact", "artifact")
	}
	return out, nil
}

// keptLocked returns the ref of the artifact ref when agent keeps it and it can still be
// read at now. The project's ledger must be locked.
func (l *ledgerState) keptLocked(ref, agent string, digest contract.Digest, now time.Time) (contract.ArtifactRef, bool) {
	art, kept := l.arts[ref]
	if !kept || art.Agent != agent || !art.Expires.IsZero() && !now.Before(art.Expires) {
		return contract.ArtifactRef{}, false
	}
	return contract.ArtifactRef{Ref: ref, Size: art.Size, Digest: digest, ExpiresAt: art.Expires}, true
}

// readArtifact answers ReadArtifact: a fragment of an artifact the authority issued to
// the calling Agent, from offset, of at most limit bytes (and never more than
// [contract.MaxArtifactFragment]). Nothing else can be named.
func (o *Operations) readArtifact(ctx context.Context, c identity.Caller, call Call, in *contract.ReadArtifactInput) (Answer, error) {
	project := c.Projects[0]
	l := o.ledger(project)
	l.lock()
	err := l.catchUpLocked(ctx, o.store)
	art, ok := l.arts[in.Ref]
	l.unlock()
	if err != nil {
		return Answer{}, err
	}
	if !ok || art.Agent != c.ID || in.Offset < 0 || in.Limit < 0 {
		r := refusal(contract.Errorf(contract.CodeArtifactNotFound,
			"no artifact %q was issued to this Agent; pass a ref art_… exactly as an earlier result gave it, with a non-negative offset and limit", in.Ref))
		return o.answer(ctx, c, call.Focus, r, 0, nil, nil)
	}
	if !art.Expires.IsZero() && !o.nowUTC().Before(art.Expires) {
		r := refusal(contract.Errorf(contract.CodeArtifactExpired,
			"artifact %s was kept until %s, the project's artifact retention, and can no longer be read; run the call that produced it again", in.Ref, art.Expires.Format("2006-01-02 15:04 UTC")))
		return o.answer(ctx, c, call.Focus, r, 0, nil, nil)
	}
	data, err := o.store.Blob(ctx, art.Hash)
	if err != nil {
		return Answer{}, fmt.Errorf("read artifact %s: %w", in.Ref, err)
	}
	limit := in.Limit
	if limit == 0 || limit > contract.MaxArtifactFragment {
		limit = contract.MaxArtifactFragment
	}
	start := min(in.Offset, int64(len(data)))
	end := min(start+int64(limit), int64(len(data)))
	frag := contract.ArtifactFragment{Ref: in.Ref, Offset: start, Size: int64(len(data)), Text: string(data[start:end]), More: end < int64(len(data))}
	extra, err := json.Marshal(frag)
	if err != nil {
		return Answer{}, fmt.Errorf("encode artifact fragment %s: %w", in.Ref, err)
	}
	return o.answer(ctx, c, call.Focus, contract.ToolResult{}, 0, extra, nil)
}

// ArtifactRetention is how long an artifact an Agent of project keeps now can be read,
// for a member: the retention of the project's artifact policy in force, else the
// server's ([Config.ArtifactRetention]); fromPolicy says which.
func (o *Operations) ArtifactRetention(ctx context.Context, c identity.Caller, project contract.ProjectID) (keep time.Duration, fromPolicy bool, err error) {
	if err := c.RequireMember(project); err != nil {
		return 0, false, err
	}
	_, d, err := o.inForce(ctx, nil, project, contract.PolicyArtifact)
	if err != nil {
		return 0, false, fmt.Errorf("read the artifact policy of %s: %w", project, err)
	}
	return d.Artifact.Retention(o.artifactRetention), d.Artifact != nil && d.Artifact.RetentionDays > 0, nil
}
