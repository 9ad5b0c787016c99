package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// CreateDelegate makes a delegate of the calling member in project for req.Life (issue
// 15) and returns its credential, shown this once: the store keeps only its digest. Only
// a member acting itself makes one.
func (a *Directory) CreateDelegate(ctx context.Context, c Caller, project contract.ProjectID, req contract.CreateDelegateRequest) (contract.DelegateToken, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.DelegateToken{}, err
	}
	life, err := contract.ParseDelegateLife(req.Life)
	if err != nil {
		return contract.DelegateToken{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	id, err := NewID(a.rand, "dlg_")
	if err != nil {
		return contract.DelegateToken{}, fmt.Errorf("create delegate: %w", err)
	}
	name := id
	if req.Name != "" {
		if name, err = contract.ParseName(req.Name); err != nil {
			return contract.DelegateToken{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
		}
	}
	tok, err := a.newToken(contract.PrefixDelegate)
	if err != nil {
		return contract.DelegateToken{}, fmt.Errorf("create delegate: %w", err)
	}
	now := a.nowUTC()
	d := store.Delegate{ID: id, Member: c.ID, Project: string(project), Name: name, TokenDigest: tok.digest(), CreatedAt: now, ExpiresAt: now.Add(life)}
	wire := delegateWire(d, c.Name)
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateDelegate(ctx, d); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return contract.Errorf(contract.CodeAlreadyExists, "you already have a delegate named %q; choose another name or revoke it (docket delegate revoke).", name)
			}
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.DelegateCreatedData{Delegate: wire})
	})
	if err != nil {
		return contract.DelegateToken{}, fmt.Errorf("create delegate %s: %w", name, eventlog.Refuse(err, "delegate "+name))
	}
	a.log.InfoContext(ctx, "delegate created", logProject, project, logActor, c.Principal(), logToken, tok)
	return contract.DelegateToken{Delegate: wire, Token: tok.String()}, nil
}

// Delegates returns the calling member's delegates, revoked and expired ones included.
func (a *Directory) Delegates(ctx context.Context, c Caller) ([]contract.Delegate, error) {
	if err := c.RequireInPerson(firstProject(c)); err != nil {
		return nil, err
	}
	ds, err := a.store.Delegates(ctx, c.ID)
	if err != nil {
		return nil, fmt.Errorf("list delegates: %w", eventlog.Refuse(err, "delegate"))
	}
	out := make([]contract.Delegate, 0, len(ds))
	for _, d := range ds {
		out = append(out, delegateWire(d, c.Name))
	}
	return out, nil
}

// RevokeDelegate revokes one of the calling member's delegates, by id or name; its
// credential stops working at once.
func (a *Directory) RevokeDelegate(ctx context.Context, c Caller, delegate string) (contract.Delegate, error) {
	if err := c.RequireInPerson(firstProject(c)); err != nil {
		return contract.Delegate{}, err
	}
	now := a.nowUTC()
	var out contract.Delegate
	err := a.store.Update(ctx, func(tx store.Tx) error {
		ds, err := tx.Delegates(ctx, c.ID)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.ID != delegate && d.Name != delegate {
				continue
			}
			if d.RevokedAt == nil {
				if err := revokeDelegate(ctx, tx, d, now, "revoked"); err != nil {
					return err
				}
				d.RevokedAt = &now
			}
			out = delegateWire(d, c.Name)
			return nil
		}
		return contract.Errorf(contract.CodeNotFound, "you have no delegate %q; docket delegate list shows yours.", delegate)
	})
	if err != nil {
		return contract.Delegate{}, fmt.Errorf("revoke delegate %s: %w", delegate, eventlog.Refuse(err, "delegate "+delegate))
	}
	a.revoked()
	return out, nil
}

// firstProject is a project a member belongs to, for the checks of acts that name none:
// a member of no project has nothing to delegate.
func firstProject(c Caller) contract.ProjectID {
	if len(c.Projects) == 0 {
		return ""
	}
	return c.Projects[0]
}

// revokeDelegates revokes every live delegate of member in tx, each with its event.
func revokeDelegates(ctx context.Context, tx store.Tx, member string, at time.Time, why string) error {
	ds, err := tx.Delegates(ctx, member)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.RevokedAt == nil {
			if err := revokeDelegate(ctx, tx, d, at, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// revokeDelegate revokes d and voids its open cards, each with its event.
func revokeDelegate(ctx context.Context, tx store.Tx, d store.Delegate, at time.Time, why string) error {
	if err := tx.RevokeDelegate(ctx, d.Member, d.ID, at); err != nil {
		return err
	}
	if err := eventlog.Append(ctx, tx, contract.ProjectID(d.Project),
		contract.NewPrincipal(contract.PrincipalMember, d.Member), at, event.DelegateRevokedData{ID: d.ID, Reason: why}); err != nil {
		return err
	}
	voided := "its delegate was revoked"
	if why == "signed_out" {
		voided = "its member signed out of every session, which revoked its delegate"
	}
	return voidCards(ctx, tx, d, at, voided)
}

// delegateCaller returns the Caller a delegate's credential proves: its member, acting
// in the delegate's one project, as long as the member still belongs to it.
func (a *Directory) delegateCaller(ctx context.Context, tok Token) (Caller, error) {
	d, err := a.store.DelegateByToken(ctx, tok.digest(), a.nowUTC())
	switch {
	case errors.Is(err, store.ErrRevoked):
		return Caller{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this delegate was revoked; ask your member for a new one (docket delegate create).", Err: err}
	case errors.Is(err, store.ErrExpired):
		return Caller{}, &contract.Error{Code: contract.CodeSessionExpired, Teaching: "this delegate's life has ended; ask your member for a new one (docket delegate create).", Err: err}
	case errors.Is(err, store.ErrNotFound):
		return Caller{}, errUnauthenticated(err)
	case err != nil:
		return Caller{}, fmt.Errorf("authenticate delegate: %w", eventlog.Refuse(err, "delegate"))
	}
	m, err := a.memberCaller(ctx, contract.MemberID(d.Member))
	if err != nil {
		return Caller{}, err
	}
	if err := m.RequireMember(contract.ProjectID(d.Project)); err != nil {
		return Caller{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this delegate's member no longer belongs to its project.", Err: err}
	}
	m.Projects = []contract.ProjectID{contract.ProjectID(d.Project)}
	m.Delegate, m.DelegateID = d.Name, d.ID
	return m, nil
}

func delegateWire(d store.Delegate, memberName string) contract.Delegate {
	return contract.Delegate{ID: d.ID, Name: d.Name, Member: contract.MemberID(d.Member), Project: contract.ProjectID(d.Project),
		Actor: delegateActor(memberName, d.Name), CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt, RevokedAt: d.RevokedAt}
}
