package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Bootstrap is what [Directory.Init] creates.
type Bootstrap struct {
	Member  contract.Member
	Project contract.Project
	Token   Token // a CLI session of the member, shown once
	Expires time.Time
}

// Init creates the installation's first member with passphrase, the project it belongs
// to, and a long-lived CLI session, in one transaction. It refuses when a member exists.
func (a *Directory) Init(ctx context.Context, memberName, passphrase string, project contract.ProjectID) (Bootstrap, error) {
	name, err := contract.ParseName(memberName)
	if err != nil {
		return Bootstrap{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	if _, err := contract.ParseProjectID(string(project)); err != nil {
		return Bootstrap{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	if err := checkNewPassphrase(passphrase); err != nil {
		return Bootstrap{}, err
	}
	hash, err := hashPassphrase(a.rand, passphrase)
	if err != nil {
		return Bootstrap{}, fmt.Errorf("init: %w", err)
	}
	mid, err := NewID(a.rand, "mem_")
	if err != nil {
		return Bootstrap{}, fmt.Errorf("init: %w", err)
	}
	tok, err := a.newToken(contract.PrefixSession)
	if err != nil {
		return Bootstrap{}, fmt.Errorf("init: %w", err)
	}
	now := a.nowUTC()
	b := Bootstrap{
		Member:  contract.Member{ID: contract.MemberID(mid), Name: name, CreatedAt: now},
		Project: contract.Project{ID: project, Name: string(project), CreatedAt: now},
		Token:   tok,
		Expires: now.Add(DefaultCLISessionTTL),
	}
	actor := contract.NewPrincipal(contract.PrincipalMember, mid)
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if ps, err := tx.Projects(ctx); err != nil {
			return err
		} else if len(ps) > 0 {
			return contract.Errorf(contract.CodeAlreadyExists, "this installation is already initialized; log in as one of its members instead.")
		}
		if err := tx.CreateProject(ctx, store.Project{ID: string(project), Name: string(project), CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.CreateMember(ctx, store.Member{ID: mid, Name: name, PassphraseHash: hash, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.AddMembership(ctx, string(project), mid); err != nil {
			return err
		}
		if err := tx.CreateSession(ctx, store.Session{TokenDigest: tok.digest(), MemberID: mid, CreatedAt: now, ExpiresAt: b.Expires}); err != nil {
			return err
		}
		if err := eventlog.Append(ctx, tx, project, actor, now, event.ProjectCreatedData{Project: b.Project}); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, actor, now, event.MemberCreatedData{Member: b.Member})
	})
	if err != nil {
		return Bootstrap{}, fmt.Errorf("init: %w", eventlog.Refuse(err, "member"))
	}
	a.log.InfoContext(ctx, "installation initialized", logProject, project, logActor, actor, logToken, tok)
	return b, nil
}

func checkNewPassphrase(p string) error {
	if len(p) < minPassphrase {
		return contract.Errorf(contract.CodeInvalidArgument, "a passphrase needs at least %d characters; choose a longer one.", minPassphrase)
	}
	if len(p) > 1024 {
		return contract.Errorf(contract.CodeInvalidArgument, "a passphrase may have at most 1024 characters.")
	}
	return nil
}

func (a *Directory) newToken(prefix string) (Token, error) {
	s, err := newSecret(a.rand)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	return Token(prefix + s), nil
}

// Session is a member's login.
type Session struct {
	Token   Token
	Expires time.Time
	Member  contract.Member
}

// Login checks a member's passphrase and opens a session of ttl (0 means the configured
// SessionTTL). A wrong name and a wrong passphrase are refused alike.
func (a *Directory) Login(ctx context.Context, name, passphrase string, ttl time.Duration) (Session, error) {
	m, err := a.store.MemberByName(ctx, name)
	wrong := &contract.Error{Code: contract.CodeUnauthenticated, Teaching: "the member name or passphrase is wrong; check both and try again."}
	if errors.Is(err, store.ErrNotFound) {
		// Hash anyway so that a wrong name costs what a wrong passphrase costs.
		_, _ = hashPassphrase(a.rand, passphrase)
		return Session{}, wrong
	}
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", eventlog.Refuse(err, "member"))
	}
	ok, err := checkPassphrase(m.PassphraseHash, passphrase)
	if err != nil {
		return Session{}, fmt.Errorf("login %s: %w", m.ID, err)
	}
	if !ok {
		return Session{}, wrong
	}
	if m.RevokedAt != nil {
		return Session{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this member was revoked; ask another member."}
	}
	if ttl <= 0 {
		ttl = a.sessionTTL
	}
	tok, err := a.newToken(contract.PrefixSession)
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", err)
	}
	now := a.nowUTC()
	s := Session{Token: tok, Expires: now.Add(ttl), Member: memberWire(m)}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		return tx.CreateSession(ctx, store.Session{TokenDigest: tok.digest(), MemberID: m.ID, CreatedAt: now, ExpiresAt: s.Expires})
	})
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", eventlog.Refuse(err, "session"))
	}
	a.log.InfoContext(ctx, "member logged in", logActor, m.ID, logToken, tok)
	return s, nil
}

// Logout revokes the session whose token is tok. Signing out of a member's last live
// session revokes all of its delegates too.
func (a *Directory) Logout(ctx context.Context, tok Token) error {
	now := a.nowUTC()
	err := a.store.Update(ctx, func(tx store.Tx) error {
		s, err := tx.Session(ctx, tok.digest(), now)
		if errors.Is(err, store.ErrRevoked) || errors.Is(err, store.ErrExpired) {
			return tx.RevokeSession(ctx, tok.digest(), now) // as before: a no-op that finds the row
		}
		if err != nil {
			return err
		}
		if err := tx.RevokeSession(ctx, tok.digest(), now); err != nil {
			return err
		}
		n, err := tx.LiveSessions(ctx, s.MemberID, now)
		if err != nil || n > 0 {
			return err
		}
		return revokeDelegates(ctx, tx, s.MemberID, now, "signed_out")
	})
	if err != nil {
		return fmt.Errorf("logout: %w", eventlog.Refuse(err, "session"))
	}
	a.revoked()
	return nil
}

// CreateMember creates a member and adds it to every project of the caller.
func (a *Directory) CreateMember(ctx context.Context, c Caller, req contract.CreateMemberRequest) (contract.Member, error) {
	if c.Kind != contract.PrincipalMember {
		return contract.Member{}, contract.Errorf(contract.CodeForbidden, "only members add members.")
	}
	if c.IsDelegate() {
		return contract.Member{}, c.RequireInPerson("")
	}
	name, err := contract.ParseName(req.Name)
	if err != nil {
		return contract.Member{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	if err := checkNewPassphrase(req.Passphrase); err != nil {
		return contract.Member{}, err
	}
	hash, err := hashPassphrase(a.rand, req.Passphrase)
	if err != nil {
		return contract.Member{}, fmt.Errorf("create member: %w", err)
	}
	id, err := NewID(a.rand, "mem_")
	if err != nil {
		return contract.Member{}, fmt.Errorf("create member: %w", err)
	}
	now := a.nowUTC()
	m := contract.Member{ID: contract.MemberID(id), Name: name, CreatedAt: now}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateMember(ctx, store.Member{ID: id, Name: name, PassphraseHash: hash, CreatedAt: now}); err != nil {
			return err
		}
		for _, p := range c.Projects {
			if err := tx.AddMembership(ctx, string(p), id); err != nil {
				return err
			}
			if err := eventlog.Append(ctx, tx, p, c.Principal(), now, event.MemberCreatedData{Member: m}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return contract.Member{}, fmt.Errorf("create member %s: %w", name, eventlog.Refuse(err, "member "+name))
	}
	return m, nil
}

func memberWire(m store.Member) contract.Member {
	return contract.Member{ID: contract.MemberID(m.ID), Name: m.Name, CreatedAt: m.CreatedAt, RevokedAt: m.RevokedAt}
}

// MemberNames maps each of ids that is a member of project to the member's name, for a
// page that shows who acted where the log keeps member:<id>. An id that is no member of
// project, or no member at all, is left out: a name is shown only to someone who shares
// a project with its member (docs/console.md, "Names, not ids").
func (a *Directory) MemberNames(ctx context.Context, c Caller, project contract.ProjectID, ids []contract.MemberID) (map[contract.MemberID]string, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	out := make(map[contract.MemberID]string, len(ids))
	for _, id := range ids {
		if _, done := out[id]; done {
			continue
		}
		m, err := a.store.Member(ctx, string(id))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("load member %s: %w", id, eventlog.Refuse(err, "member"))
		}
		ps, err := a.store.MemberProjects(ctx, m.ID)
		if err != nil {
			return nil, fmt.Errorf("load projects of member %s: %w", id, eventlog.Refuse(err, "member"))
		}
		if slices.Contains(ps, string(project)) {
			out[id] = m.Name
		}
	}
	return out, nil
}

// Projects returns the caller's projects.
func (a *Directory) Projects(ctx context.Context, c Caller) ([]contract.Project, error) {
	out := []contract.Project{}
	for _, id := range c.Projects {
		p, err := a.store.Project(ctx, string(id))
		if err != nil {
			return nil, fmt.Errorf("load project %s: %w", id, eventlog.Refuse(err, "project"))
		}
		out = append(out, contract.Project{ID: contract.ProjectID(p.ID), Name: p.Name, CreatedAt: p.CreatedAt})
	}
	return out, nil
}

// CreateProject creates a project whose first member is the caller.
func (a *Directory) CreateProject(ctx context.Context, c Caller, req contract.CreateProjectRequest) (contract.Project, error) {
	if c.Kind != contract.PrincipalMember {
		return contract.Project{}, contract.Errorf(contract.CodeForbidden, "only members create projects.")
	}
	if c.IsDelegate() {
		return contract.Project{}, c.RequireInPerson("")
	}
	id, err := contract.ParseProjectID(req.ID)
	if err != nil {
		return contract.Project{}, contract.Errorf(contract.CodeInvalidArgument, "%v.", err)
	}
	name := req.Name
	if name == "" {
		name = req.ID
	}
	now := a.nowUTC()
	p := contract.Project{ID: id, Name: name, CreatedAt: now}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: string(id), Name: name, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.AddMembership(ctx, string(id), c.ID); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, id, c.Principal(), now, event.ProjectCreatedData{Project: p})
	})
	if err != nil {
		return contract.Project{}, fmt.Errorf("create project %s: %w", id, eventlog.Refuse(err, "project "+string(id)))
	}
	return p, nil
}
