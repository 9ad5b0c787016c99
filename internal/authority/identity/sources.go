package identity

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// BindSource binds (or rebinds) the public record of a Source to a Connection. Its secret
// parts stay in the worker's vault and never come here.
func (a *Directory) BindSource(ctx context.Context, c Caller, project contract.ProjectID, conn string, src contract.Source) (contract.Source, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Source{}, err
	}
	if _, err := contract.ParseName(src.Name); err != nil {
		return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source %v.", err)
	}
	if !slices.Contains(contract.SourceTypes, src.Type) {
		return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source type %q is not one of %s; choose one of them.", src.Type, strings.Join(contract.SourceTypes, ", "))
	}
	if !src.Tier.Valid() {
		return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source %q needs a tier (usually attested).", src.Name)
	}
	// A Source with no words attests nothing: a call through it runs and answers, and
	// the Board takes no fact of it (a write's receipt, an HTTP route whose rows no Tool
	// maps to facts). Words are added when a Tool comes to return facts.
	for _, w := range src.Words {
		if !isPredicate(w) {
			return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source word %q is not a predicate name; use lower-case letters, digits and '_', starting with a letter.", w)
		}
	}
	if k := src.SigningKey; k != nil {
		if _, err := sourceKey(*k); err != nil {
			return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source %q: signingKey %v; give the public JWK of its Ed25519 key (kty OKP, crv Ed25519, x, kid its RFC 7638 thumbprint).", src.Name, err)
		}
		if src.Type != "http" {
			return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source %q: only an http Source signs its requests; leave signingKey out.", src.Name)
		}
	}
	words := slices.Clone(src.Words)
	slices.Sort(words)
	words = slices.Compact(words)
	now := a.nowUTC()
	var out contract.Source
	err := a.store.Update(ctx, func(tx store.Tx) error {
		cn, err := findConnection(ctx, tx, project, conn)
		if err != nil {
			return err
		}
		if cn.RevokedAt != nil {
			return contract.Errorf(contract.CodeCredentialRevoked, "connection %q is revoked; bind the source to a live connection.", conn)
		}
		out = contract.Source{Connection: contract.ConnectionID(cn.ID), Name: src.Name, Type: src.Type, Words: words, Tier: src.Tier, SigningKey: src.SigningKey}
		data, err := json.Marshal(out)
		if err != nil {
			return err
		}
		d := contract.Sum(data)
		out.Digest = d.String()
		if err := tx.PutSource(ctx, store.Source{Connection: cn.ID, ID: src.Name, Digest: d[:], Data: data}); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.SourceBoundData{Source: out})
	})
	if err != nil {
		return contract.Source{}, fmt.Errorf("bind source %s: %w", src.Name, eventlog.Refuse(err, "connection "+conn))
	}
	return out, nil
}

// Sources lists the Sources bound to a Connection of project.
func (a *Directory) Sources(ctx context.Context, c Caller, project contract.ProjectID, conn string) ([]contract.Source, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	cn, err := findConnection(ctx, a.store, project, conn)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", eventlog.Refuse(err, "connection "+conn))
	}
	ss, err := a.store.Sources(ctx, cn.ID)
	if err != nil {
		return nil, fmt.Errorf("list sources of %s: %w", cn.ID, eventlog.Refuse(err, "connection "+conn))
	}
	out := make([]contract.Source, 0, len(ss))
	for _, s := range ss {
		var src contract.Source
		if err := json.Unmarshal(s.Data, &src); err != nil {
			return nil, fmt.Errorf("decode source %s of %s: %w", s.ID, cn.ID, err)
		}
		d, err := contract.DigestFrom(s.Digest)
		if err != nil {
			return nil, fmt.Errorf("source %s of %s: %w", s.ID, cn.ID, err)
		}
		src.Digest = d.String()
		out = append(out, src)
	}
	return out, nil
}

// LockTool authorizes a Tool on a Connection at the digest of its definition, replacing
// an earlier lock of the same Tool. The lock keeps its record: l's approval (or the
// default of the Tool's kind), the descriptor the caller found advertised at that digest
// (nil: none), who locked it and when.
func (a *Directory) LockTool(ctx context.Context, c Caller, project contract.ProjectID, conn string, l contract.ToolLock) (contract.ToolLock, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.ToolLock{}, err
	}
	if !isToolID(l.Tool) {
		return contract.ToolLock{}, contract.Errorf(contract.CodeInvalidArgument, "tool %q is not a tool id; write vendor.name@N, e.g. docket.workspace.read_json@1.", l.Tool)
	}
	digest, err := contract.ParseDigest(l.Digest)
	if err != nil {
		return contract.ToolLock{}, contract.Errorf(contract.CodeInvalidArgument, "tool digest %q is not sha256:<64 hex digits>; copy it from the worker's tool manifest.", l.Digest)
	}
	if l.Descriptor != nil && (string(l.Descriptor.Tool) != l.Tool || !strings.EqualFold(l.Descriptor.Digest, digest.String())) {
		return contract.ToolLock{}, fmt.Errorf("lock tool %s: the descriptor names %s at %s", l.Tool, l.Descriptor.Tool, l.Descriptor.Digest)
	}
	if l.Approval == "" {
		l.Approval = DefaultApproval(l.Descriptor)
	}
	if err := CheckApproval(l.Approval); err != nil {
		return contract.ToolLock{}, err
	}
	now := a.nowUTC()
	out := contract.ToolLock{Tool: l.Tool, Digest: digest.String(), Approval: l.Approval, LockedBy: c.Principal(), LockedAt: &now, Descriptor: l.Descriptor}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		cn, err := findConnection(ctx, tx, project, conn)
		if err != nil {
			return err
		}
		if cn.RevokedAt != nil {
			return contract.Errorf(contract.CodeCredentialRevoked, "connection %q is revoked; lock tools on a live connection.", conn)
		}
		out.Connection = contract.ConnectionID(cn.ID)
		if err := putLock(ctx, tx, out); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.ToolLockedData{ToolLock: out})
	})
	if err != nil {
		return contract.ToolLock{}, fmt.Errorf("lock tool %s: %w", l.Tool, eventlog.Refuse(err, "connection "+conn))
	}
	return out, nil
}

// putLock stores l, its record beside its digest.
func putLock(ctx context.Context, tx store.Tx, l contract.ToolLock) error {
	digest, err := contract.ParseDigest(l.Digest)
	if err != nil {
		return fmt.Errorf("tool lock %s: %w", l.Tool, err)
	}
	data, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encode tool lock %s: %w", l.Tool, err)
	}
	return tx.LockTool(ctx, store.ToolLock{Connection: string(l.Connection), Tool: l.Tool, Digest: digest[:], Data: data})
}

// DefaultApproval is the approval a Tool's direct Action needs unless its locker chose
// another: none for a read, a person for a write or a run, and a person when the kind is
// not known.
func DefaultApproval(d *contract.ToolDescriptor) string {
	if d != nil && d.Kind == contract.ToolKindRead {
		return contract.ApprovalNone
	}
	return contract.ApprovalPerson
}

// CheckApproval refuses an approval that is not none, person or a delegation class name.
func CheckApproval(approval string) error {
	if approval == contract.ApprovalNone || approval == contract.ApprovalPerson || isPredicate(approval) && len(approval) <= 64 {
		return nil
	}
	return contract.Errorf(contract.CodeInvalidArgument, "approval %.40q is not none, person or a delegation class name (lower-case letters, digits and _); choose one of them.", approval)
}

// UnlockTool takes a Tool's lock off a Connection: from then on no work for it is
// served or claimed there, its direct Action leaves the Board, and the pending Requests
// naming it are void (tool_unlocked). It returns the lock as it was.
func (a *Directory) UnlockTool(ctx context.Context, c Caller, project contract.ProjectID, conn, tool string) (contract.ToolLock, error) {
	return a.changeLock(ctx, c, project, conn, tool, "unlock", func(tx store.Tx, l *contract.ToolLock) (event.Payload, error) {
		if err := tx.UnlockTool(ctx, string(l.Connection), l.Tool); err != nil {
			return nil, err
		}
		return event.ToolUnlockedData{ToolLock: *l}, nil
	})
}

// SetToolApproval sets what a locked Tool's direct Action needs: none, person or a
// delegation class. The pending Requests of that direct Action are void, since the
// built-in release they were raised under changed.
func (a *Directory) SetToolApproval(ctx context.Context, c Caller, project contract.ProjectID, conn, tool, approval string) (contract.ToolLock, error) {
	if err := CheckApproval(approval); err != nil {
		return contract.ToolLock{}, err
	}
	return a.changeLock(ctx, c, project, conn, tool, "set the approval of", func(tx store.Tx, l *contract.ToolLock) (event.Payload, error) {
		now := a.nowUTC()
		l.Approval, l.LockedBy, l.LockedAt = approval, c.Principal(), &now
		if err := putLock(ctx, tx, *l); err != nil {
			return nil, err
		}
		return event.ToolApprovalSetData{ToolLock: *l}, nil
	})
}

// changeLock runs change on the lock of tool on conn in one transaction with the event it
// returns; a Tool not locked there is refused tool_not_locked.
func (a *Directory) changeLock(ctx context.Context, c Caller, project contract.ProjectID, conn, tool, doing string, change func(tx store.Tx, l *contract.ToolLock) (event.Payload, error)) (contract.ToolLock, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.ToolLock{}, err
	}
	now := a.nowUTC()
	var out contract.ToolLock
	err := a.store.Update(ctx, func(tx store.Tx) error {
		cn, err := findConnection(ctx, tx, project, conn)
		if err != nil {
			return err
		}
		ls, err := tx.ToolLocks(ctx, cn.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(ls, func(l store.ToolLock) bool { return l.Tool == tool })
		if i < 0 {
			return contract.Errorf(contract.CodeToolNotLocked, "tool %.80q is not locked on connection %s; docket tool list names the Tools locked there.", tool, cn.Name)
		}
		if out, err = lockOf(ls[i]); err != nil {
			return err
		}
		ev, err := change(tx, &out)
		if err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, ev)
	})
	if err != nil {
		return contract.ToolLock{}, fmt.Errorf("%s tool %s: %w", doing, tool, eventlog.Refuse(err, "connection "+conn))
	}
	return out, nil
}

// lockOf decodes a stored lock: its record when it has one, with the row's connection,
// tool and digest, which the store holds to.
func lockOf(l store.ToolLock) (contract.ToolLock, error) {
	d, err := contract.DigestFrom(l.Digest)
	if err != nil {
		return contract.ToolLock{}, fmt.Errorf("tool lock %s of %s: %w", l.Tool, l.Connection, err)
	}
	var out contract.ToolLock
	if len(l.Data) > 0 {
		if err := json.Unmarshal(l.Data, &out); err != nil {
			return contract.ToolLock{}, fmt.Errorf("decode tool lock %s of %s: %w", l.Tool, l.Connection, err)
		}
	}
	out.Connection, out.Tool, out.Digest = contract.ConnectionID(l.Connection), l.Tool, d.String()
	if out.Approval == "" {
		out.Approval = DefaultApproval(out.Descriptor)
	}
	return out, nil
}

// LockOf decodes a stored tool lock ([store.ToolLock]) into its record, for the parts
// that read the store's rows: the Board's built-in release of direct Actions.
func LockOf(l store.ToolLock) (contract.ToolLock, error) { return lockOf(l) }

// ToolLocks lists the Tools locked on a Connection of project.
func (a *Directory) ToolLocks(ctx context.Context, c Caller, project contract.ProjectID, conn string) ([]contract.ToolLock, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	cn, err := findConnection(ctx, a.store, project, conn)
	if err != nil {
		return nil, fmt.Errorf("list tool locks: %w", eventlog.Refuse(err, "connection "+conn))
	}
	ls, err := a.store.ToolLocks(ctx, cn.ID)
	if err != nil {
		return nil, fmt.Errorf("list tool locks of %s: %w", cn.ID, eventlog.Refuse(err, "connection "+conn))
	}
	out := make([]contract.ToolLock, 0, len(ls))
	for _, l := range ls {
		lk, err := lockOf(l)
		if err != nil {
			return nil, err
		}
		out = append(out, lk)
	}
	return out, nil
}

// isPredicate reports whether s is a Board predicate name.
func isPredicate(s string) bool {
	if s == "" || len(s) > 128 || !(s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// isToolID reports whether s is "vendor.name@N": dotted lower-case segments, at least two,
// and a positive version.
func isToolID(s string) bool {
	name, ver, ok := strings.Cut(s, "@")
	if !ok || ver == "" || ver[0] == '0' || len(s) > 200 {
		return false
	}
	for _, r := range ver {
		if r < '0' || r > '9' {
			return false
		}
	}
	segs := strings.Split(name, ".")
	if len(segs) < 2 {
		return false
	}
	for _, seg := range segs {
		if !isPredicate(seg) {
			return false
		}
	}
	return true
}

// sourceKey checks a bound Source's public JWK and returns it as a signing key.
func sourceKey(k contract.PublicJWK) (signing.PublicKey, error) {
	if k.Kty != "OKP" || k.Crv != "Ed25519" {
		return signing.PublicKey{}, errors.New("is not an Ed25519 key")
	}
	x, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return signing.PublicKey{}, errors.New("has no 32-byte base64url x")
	}
	if k.Kid != signing.Thumbprint(x) {
		return signing.PublicKey{}, errors.New("has a kid that is not its RFC 7638 thumbprint")
	}
	return signing.PublicKey{ID: k.Kid, Key: ed25519.PublicKey(x)}, nil
}

// SourceSigningKeys returns the public keys of the Sources bound on live Connections of
// every project, for the key directory a receiver of their signed requests reads.
func (a *Directory) SourceSigningKeys(ctx context.Context) ([]signing.PublicKey, error) {
	ps, err := a.store.Projects(ctx)
	if err != nil {
		return nil, fmt.Errorf("source signing keys: %w", err)
	}
	var out []signing.PublicKey
	for _, p := range ps {
		cs, err := a.store.Connections(ctx, p.ID)
		if err != nil {
			return nil, fmt.Errorf("source signing keys of %s: %w", p.ID, err)
		}
		for _, cn := range cs {
			if cn.RevokedAt != nil {
				continue
			}
			ss, err := a.store.Sources(ctx, cn.ID)
			if err != nil {
				return nil, fmt.Errorf("source signing keys of %s: %w", cn.ID, err)
			}
			for _, s := range ss {
				var src contract.Source
				if err := json.Unmarshal(s.Data, &src); err != nil {
					return nil, fmt.Errorf("decode source %s of %s: %w", s.ID, cn.ID, err)
				}
				if src.SigningKey == nil {
					continue
				}
				k, err := sourceKey(*src.SigningKey)
				if err != nil {
					return nil, fmt.Errorf("source %s of %s: signing key %w", s.ID, cn.ID, err)
				}
				out = append(out, k)
			}
		}
	}
	return out, nil
}
