package authority

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

// Capabilities returns what each release installed in project declares — its Case Types,
// its Actions with their parameters, bindings and approval, the Sources it needs — and
// the text of its rule files, for a member to read what the project's agents may do.
func (a *Authority) Capabilities(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.CapabilityContent, error) {
	rs, err := a.Installs(ctx, c, project)
	if err != nil {
		return nil, err
	}
	out := make([]contract.CapabilityContent, 0, len(rs))
	for _, r := range rs {
		rel, err := a.store.Release(ctx, r.ID, r.Version)
		if err != nil {
			return nil, fmt.Errorf("read release %s@%s: %w", r.ID, r.Version, eventlog.Refuse(err, "release "+r.ID))
		}
		var files map[string][]byte
		if err := json.Unmarshal(rel.Content, &files); err != nil {
			return nil, fmt.Errorf("read release %s@%s: %w", r.ID, r.Version, err)
		}
		pkg, err := capability.Check(files)
		if err != nil {
			return nil, fmt.Errorf("read release %s@%s: %w", r.ID, r.Version, err)
		}
		cc := contentOf(pkg)
		cc.Release = r
		for _, name := range pkg.Files {
			if strings.HasSuffix(name, ".dl") {
				cc.Rules = append(cc.Rules, contract.RuleFile{Name: name, Text: string(files[name])})
			}
		}
		out = append(out, cc)
	}
	return out, nil
}

// ActionDescriptions maps the name of every Action project's releases declare to its
// description, for a member reading a Request the Action raised.
func (a *Authority) ActionDescriptions(ctx context.Context, c identity.Caller, project contract.ProjectID) (map[string]string, error) {
	cs, err := a.Capabilities(ctx, c, project)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, cc := range cs {
		for _, ac := range cc.Actions {
			out[ac.Name] = ac.Description
		}
	}
	return out, nil
}

// contentOf is what pkg declares, in the wire's terms.
func contentOf(pkg *capability.Package) contract.CapabilityContent {
	d := pkg.Declarations
	cc := contract.CapabilityContent{Title: pkg.Title, Description: pkg.Description,
		CaseTypes: []contract.CaseTypeContent{}, Actions: []contract.ActionContent{}, Sources: []contract.Source{}, Rules: []contract.RuleFile{}}
	for _, ct := range d.CaseTypes {
		cc.CaseTypes = append(cc.CaseTypes, contract.CaseTypeContent{
			CaseTypeEntry: contract.CaseTypeEntry{Name: ct.Name, Title: ct.Title, KeyArgs: slices.Clone(ct.KeyArgs), Opening: ct.Opening,
				Acceptance: ct.Acceptance, Floor: ct.Floor, Exploration: ct.Exploration},
			Description: ct.Description, KeyPredicate: ct.KeyPredicate})
	}
	for _, ac := range d.Actions {
		cc.Actions = append(cc.Actions, actionContent(ac))
	}
	for _, s := range d.Sources {
		cc.Sources = append(cc.Sources, contract.Source{Name: s.Name, Type: s.Type, Words: slices.Clone(s.Words), Tier: s.Tier})
	}
	return cc
}

func actionContent(ac board.Action) contract.ActionContent {
	out := contract.ActionContent{Name: ac.Name, Description: ac.Description, Approval: ac.Approval,
		Params: []contract.ParamEntry{}, Bindings: []contract.ActionBinding{}}
	for _, p := range ac.Params {
		out.Params = append(out.Params, contract.ParamEntry{Name: p.Name, Type: string(p.Type), Optional: p.Optional, Description: p.Description})
	}
	for _, b := range ac.Bindings {
		out.Bindings = append(out.Bindings, contract.ActionBinding{Param: b.Param, Var: b.Var})
	}
	if x := ac.Execution; x != nil {
		out.Tool, out.Kind, out.Source = x.Tool, string(x.Kind), x.Source
	}
	return out
}
