package console

import (
	"context"
	"net/url"
	"strings"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// nameBackend is the part of the identity directory that says who a member is.
type nameBackend interface {
	MemberNames(ctx context.Context, c identity.Caller, project contract.ProjectID, ids []contract.MemberID) (map[contract.MemberID]string, error)
}

// who is a principal as a page shows it: the name a person knows it by, the principal
// itself (the element's title, and what the Events filter takes), and the page about it
// when there is one. The template "who" renders it.
type who struct {
	Name      string
	Principal string
	Href      string
}

// nameBook resolves principals to the names people know them by, for one page: every
// page shows who acted by name — "ada", Agent "calc" — where the log keeps member:mem_…
// or agent:agt_… (docs/console.md, "Names, not ids"). It is the one resolver the pages
// share; build it with [Server.names] from the principals the page will show.
type nameBook struct {
	project contract.ProjectID
	agents  map[string]string
	members map[contract.MemberID]string
}

// names reads the names of the project's Agents and of the members among ps.
func (s *Server) names(ctx context.Context, v visit, ps ...contract.Principal) (nameBook, error) {
	agents, err := s.agentNames(ctx, v)
	if err != nil {
		return nameBook{}, err
	}
	var ids []contract.MemberID
	for _, p := range ps {
		if p.Kind() == contract.PrincipalMember && !strings.Contains(p.ID(), "/") {
			ids = append(ids, contract.MemberID(p.ID()))
		}
	}
	members := map[contract.MemberID]string{}
	if len(ids) > 0 {
		if members, err = s.ids.MemberNames(ctx, v.caller, v.project, ids); err != nil {
			return nameBook{}, err
		}
	}
	return nameBook{project: v.project, agents: agents, members: members}, nil
}

// who is p as a page shows it. A principal the book does not know keeps its id as its
// name: a page never hides who acted, it only says it better when it can.
func (n nameBook) who(p contract.Principal) who {
	w := who{Name: string(p), Principal: string(p)}
	if p == "" {
		w.Name = "—"
		return w
	}
	id := p.ID()
	switch p.Kind() {
	case contract.PrincipalAgent:
		if name, ok := n.agents[id]; ok {
			w.Name = "Agent " + name
			w.Href = "/projects/" + url.PathEscape(string(n.project)) + "/agents/" + url.PathEscape(id)
		}
	case contract.PrincipalMember:
		if member, delegate, ok := strings.Cut(id, "/"); ok {
			// A delegate's acts are recorded as member:<member's name>/<delegate's name>.
			w.Name = "delegate " + delegate + " of " + member
		} else if name, ok := n.members[contract.MemberID(id)]; ok {
			w.Name = name
		}
	case contract.PrincipalTool:
		w.Name = "Tool " + id
	case contract.PrincipalCapability:
		w.Name = "capability " + id
	}
	return w
}

// whoOf is who of the principal an event's actor names, which is text in the log.
func (n nameBook) whoOf(actor string) who { return n.who(contract.Principal(actor)) }
