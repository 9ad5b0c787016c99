package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Caller is an authenticated principal: a member (by session) or an Agent (by token).
type Caller struct {
	Kind      contract.PrincipalKind
	ID        string
	Name      string
	Projects  []contract.ProjectID // a member's projects; an Agent's one project
	AgentKind contract.AgentKind   // for an Agent
	// Hook marks an Agent proven by its hook token (contract.PrefixHook): it may use the
	// hook routes and nothing else, and the hook routes take no other credential.
	Hook bool

	// Delegate and DelegateID name the delegate a member's credential is; both
	// are empty when the member acts itself. A delegate's Projects is its one project.
	Delegate   string
	DelegateID string
}

// Principal returns the caller as an event actor, "member:<id>" or "agent:<id>"; a
// delegate acts as "member:<member name>/<delegate name>", so every event names the
// member it acts for.
func (c Caller) Principal() contract.Principal {
	if c.Delegate != "" {
		return delegateActor(c.Name, c.Delegate)
	}
	return contract.NewPrincipal(c.Kind, c.ID)
}

func delegateActor(member, delegate string) contract.Principal {
	return contract.NewPrincipal(contract.PrincipalMember, member+"/"+delegate)
}

// IsDelegate reports whether c is a delegate of its member.
func (c Caller) IsDelegate() bool { return c.Delegate != "" }

// Whoami returns the caller's wire description.
func (c Caller) Whoami() contract.Whoami {
	return contract.Whoami{Kind: c.Kind, ID: c.ID, Name: c.Name, Projects: c.Projects}
}

// errUnauthenticated is the one refusal for a token that proves nothing: it does not say
// whether the token was malformed, unknown or of the wrong kind.
func errUnauthenticated(err error) error {
	return &contract.Error{Code: contract.CodeUnauthenticated,
		Teaching: "the credential is not valid; log in again or use the token printed by docket init.", Err: err}
}

// Authenticate returns the principal a bearer token proves: a session token proves its
// member, an agent token its Agent. Connection keys authenticate workers, not API calls.
func (a *Directory) Authenticate(ctx context.Context, tok Token) (Caller, error) {
	prefix, ok := tokenPrefix(string(tok))
	if !ok || !validSecret(strings.TrimPrefix(string(tok), prefix)) {
		return Caller{}, errUnauthenticated(errors.New("malformed token"))
	}
	switch prefix {
	case contract.PrefixSession:
		s, err := a.store.Session(ctx, tok.digest(), a.nowUTC())
		switch {
		case errors.Is(err, store.ErrRevoked):
			return Caller{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this session was revoked; log in again.", Err: err}
		case errors.Is(err, store.ErrExpired):
			return Caller{}, &contract.Error{Code: contract.CodeSessionExpired, Teaching: "this session has expired; log in again.", Err: err}
		case errors.Is(err, store.ErrNotFound):
			return Caller{}, errUnauthenticated(err)
		case err != nil:
			return Caller{}, fmt.Errorf("authenticate session: %w", eventlog.Refuse(err, "session"))
		}
		return a.memberCaller(ctx, contract.MemberID(s.MemberID))
	case contract.PrefixAgent, contract.PrefixHook:
		ag, err := a.store.AgentByToken(ctx, tok.digest())
		switch {
		case errors.Is(err, store.ErrRevoked):
			return Caller{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this agent token was revoked or replaced; ask a member for a new one (docket agent token).", Err: err}
		case errors.Is(err, store.ErrNotFound):
			return Caller{}, errUnauthenticated(err)
		case err != nil:
			return Caller{}, fmt.Errorf("authenticate agent: %w", eventlog.Refuse(err, "agent"))
		}
		if ag.RevokedAt != nil {
			return Caller{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this agent was revoked.", Err: store.ErrRevoked}
		}
		return Caller{Kind: contract.PrincipalAgent, ID: ag.ID, Name: ag.Name,
			Projects: []contract.ProjectID{contract.ProjectID(ag.Project)}, AgentKind: contract.AgentKind(ag.Kind), Hook: prefix == contract.PrefixHook}, nil
	case contract.PrefixDelegate:
		return a.delegateCaller(ctx, tok)
	}
	return Caller{}, errUnauthenticated(errors.New("connection key used as an API token"))
}

// MemberCaller returns the Caller of member id acting itself, as a session of it would
// prove: what a schedule's fire acts as, so a revoked member's schedule posts nothing.
func (a *Directory) MemberCaller(ctx context.Context, id contract.MemberID) (Caller, error) {
	return a.memberCaller(ctx, id)
}

func (a *Directory) memberCaller(ctx context.Context, id contract.MemberID) (Caller, error) {
	m, err := a.store.Member(ctx, string(id))
	if err != nil {
		return Caller{}, fmt.Errorf("load member %s: %w", id, eventlog.Refuse(err, "member"))
	}
	if m.RevokedAt != nil {
		return Caller{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this member was revoked.", Err: store.ErrRevoked}
	}
	ps, err := a.store.MemberProjects(ctx, m.ID)
	if err != nil {
		return Caller{}, fmt.Errorf("load projects of member %s: %w", id, eventlog.Refuse(err, "member"))
	}
	c := Caller{Kind: contract.PrincipalMember, ID: m.ID, Name: m.Name}
	for _, p := range ps {
		c.Projects = append(c.Projects, contract.ProjectID(p))
	}
	return c, nil
}

// AuthenticateConnection returns the live Connection whose key is key (see
// [ParseConnectionKey]).
func (a *Directory) AuthenticateConnection(ctx context.Context, key Token) (contract.Connection, error) {
	id, ok := ParseConnectionKey(key)
	if !ok {
		return contract.Connection{}, errUnauthenticated(errors.New("malformed connection key"))
	}
	c, plain, err := a.connectionKey(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return contract.Connection{}, errUnauthenticated(err)
	}
	if err != nil {
		return contract.Connection{}, err
	}
	if subtle.ConstantTimeCompare([]byte(plain), []byte(key)) != 1 {
		return contract.Connection{}, errUnauthenticated(errors.New("connection key does not match"))
	}
	if c.RevokedAt != nil {
		return contract.Connection{}, &contract.Error{Code: contract.CodeCredentialRevoked, Teaching: "this connection was revoked; create a new one (docket connection create).", Err: store.ErrRevoked}
	}
	return connectionWire(c), nil
}

// RequireInPerson requires c to be a member of project acting itself, not through a
// delegate. The member-only acts (docs/delegates.md: members, sessions, delegates,
// policies, autonomy and windows, confirming a card) call it, so a delegate is refused them even
// where no gate stood before.
func (c Caller) RequireInPerson(project contract.ProjectID) error {
	if c.IsDelegate() {
		return contract.Errorf(contract.CodeMemberOnly, "only member %s may do this, not its delegate %s; docket operation list shows what a delegate may do.", c.Name, c.Delegate)
	}
	return c.RequireMember(project)
}

// member requires c to be a member of project: only members administer projects;
// an Agent reaching the admin API is refused.
func (c Caller) RequireMember(project contract.ProjectID) error {
	if c.Kind != contract.PrincipalMember {
		return contract.Errorf(contract.CodeForbidden, "only members administer projects; use a member's token (docket init prints one).")
	}
	if !slices.Contains(c.Projects, project) {
		return contract.Errorf(contract.CodeForbidden, "you are not a member of project %q; ask one of its members to add you.", project)
	}
	return nil
}
