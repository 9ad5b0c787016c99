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
	if len(src.Words) == 0 {
		return contract.Source{}, contract.Errorf(contract.CodeInvalidArgument, "source %q needs the predicates it may attest (words).", src.Name)
	}
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
// an earlier lock of the same Tool.
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
	now := a.nowUTC()
	var out contract.ToolLock
	err = a.store.Update(ctx, func(tx store.Tx) error {
		cn, err := findConnection(ctx, tx, project, conn)
		if err != nil {
			return err
		}
		if cn.RevokedAt != nil {
			return contract.Errorf(contract.CodeCredentialRevoked, "connection %q is revoked; lock tools on a live connection.", conn)
		}
		out = contract.ToolLock{Connection: contract.ConnectionID(cn.ID), Tool: l.Tool, Digest: digest.String()}
		if err := tx.LockTool(ctx, store.ToolLock{Connection: cn.ID, Tool: l.Tool, Digest: digest[:]}); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.ToolLockedData{ToolLock: out})
	})
	if err != nil {
		return contract.ToolLock{}, fmt.Errorf("lock tool %s: %w", l.Tool, eventlog.Refuse(err, "connection "+conn))
	}
	return out, nil
}

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
		d, err := contract.DigestFrom(l.Digest)
		if err != nil {
			return nil, fmt.Errorf("tool lock %s of %s: %w", l.Tool, cn.ID, err)
		}
		out = append(out, contract.ToolLock{Connection: contract.ConnectionID(l.Connection), Tool: l.Tool, Digest: d.String()})
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
