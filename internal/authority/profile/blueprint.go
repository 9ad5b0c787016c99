package profile

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/price"
	"github.com/docketrun/docket/internal/store"
)

// maxDescription bounds a blueprint's description in bytes.
const maxDescription = 256

// ValidateBlueprint refuses a blueprint that cannot be stamped into a working profile,
// with [contract.CodeBlueprintInvalid] and a sentence naming the field and the fix: a
// name that is not a short lower-case word, a description that is not one line, a key
// file or an enabled switch (each Agent's own), a profile [Validate] refuses, and a model
// neither the price table knows nor an endpoint given (modelUrl) serves. Whether the Case
// Types and Actions of its allow-list exist is the Board's to say; the authority checks
// it when the blueprint is set and again when a profile is made from it.
func ValidateBlueprint(name string, spec contract.BlueprintSpec) error {
	refuse := func(format string, args ...any) error {
		return contract.Errorf(contract.CodeBlueprintInvalid, format, args...)
	}
	if err := CheckBlueprintName(name); err != nil {
		return err
	}
	if len(spec.Description) > maxDescription || !utf8.ValidString(spec.Description) || strings.ContainsAny(spec.Description, "\x00\n\r") {
		return refuse("description is not one line of at most %d bytes; shorten it.", maxDescription)
	}
	p := spec.Profile
	if p.KeyFile != "" {
		return refuse("profile.keyFile is each Agent's own, not a blueprint's; drop it and give the key file when a profile is made from the blueprint (--key-file).")
	}
	if p.Enabled {
		return refuse("profile.enabled is each Agent's own, not a blueprint's; drop it and choose when a profile is made from the blueprint.")
	}
	if p.Allow.Empty() {
		return refuse("profile.allow names no Case Type and no Action; a blueprint says what its Agents may use: send allow.caseTypes, allow.actions, or both.")
	}
	if err := Validate(p); err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok {
			return refuse("profile: %s", ce.Teaching)
		}
		return err
	}
	if (p.Provider == contract.ProviderOpenAI || p.Provider == contract.ProviderAnthropic) && p.ModelURL == "" {
		if _, known := price.Lookup(p.Provider, p.Model); !known {
			return refuse("profile.model %.80q is not in the price table of %s's public endpoint; name a model it lists, or give the endpoint that serves it (modelUrl).", p.Model, p.Provider)
		}
	}
	return nil
}

// CheckBlueprintName refuses a name that is not 1 to [contract.MaxBlueprintName] bytes of
// lower-case letters, digits, '-', '_' and '.', beginning with a letter or digit: it
// appears in URLs and commands as it is.
func CheckBlueprintName(name string) error {
	ok := name != "" && len(name) <= contract.MaxBlueprintName
	for i, r := range name {
		if !ok {
			break
		}
		word := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		ok = word || (i > 0 && (r == '-' || r == '_' || r == '.'))
	}
	if !ok {
		return contract.Errorf(contract.CodeBlueprintInvalid,
			"a blueprint's name is 1 to %d lower-case letters, digits, '-', '_' or '.', beginning with a letter or digit (e.g. researcher); rename it.", contract.MaxBlueprintName)
	}
	return nil
}

// validateAllow refuses an allow-list whose names are not distinct, bounded lines.
func validateAllow(a *contract.AllowList) error {
	if a == nil {
		return nil
	}
	for _, l := range []struct {
		field string
		names []string
	}{{"allow.caseTypes", a.CaseTypes}, {"allow.actions", a.Actions}} {
		if len(l.names) > contract.MaxAllowNames {
			return contract.Errorf(contract.CodeProfileInvalid, "%s names %d entries; name at most %d.", l.field, len(l.names), contract.MaxAllowNames)
		}
		for i, n := range l.names {
			if n == "" || len(n) > contract.MaxNameBytes || !utf8.ValidString(n) || strings.ContainsAny(n, "\x00\n\r\t ") {
				return contract.Errorf(contract.CodeProfileInvalid, "%s[%d] is not a name of at most %d bytes without spaces; send the Case Type or Action as the View lists it.", l.field, i, contract.MaxNameBytes)
			}
			if slices.Contains(l.names[:i], n) {
				return contract.Errorf(contract.CodeProfileInvalid, "%s names %.80q twice; name it once.", l.field, n)
			}
		}
	}
	return nil
}

// DigestOf is the digest of spec, which a profile made from the blueprint records.
func DigestOf(spec contract.BlueprintSpec) (contract.Digest, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return contract.Digest{}, fmt.Errorf("digest the blueprint: %w", err)
	}
	return contract.Sum(b), nil
}

// Blueprint returns project's blueprint name, for a member; not_found when none is set.
func (k *Keeper) Blueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Blueprint, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Blueprint{}, err
	}
	var out *contract.Blueprint
	if err := k.read(ctx, project, func(s *state) { out = cloneBlueprint(s.blueprints[name]) }); err != nil {
		return contract.Blueprint{}, err
	}
	if out == nil {
		return contract.Blueprint{}, contract.Errorf(contract.CodeNotFound,
			"project %s has no blueprint %.80q; docket agent blueprint list shows its blueprints.", project, name)
	}
	return *out, nil
}

// Blueprints returns project's blueprints by name, for a member.
func (k *Keeper) Blueprints(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Blueprint, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	out := []contract.Blueprint{}
	err := k.read(ctx, project, func(s *state) {
		for _, b := range s.blueprints {
			out = append(out, *cloneBlueprint(b))
		}
	})
	slices.SortFunc(out, func(a, b contract.Blueprint) int { return cmp.Compare(a.Name, b.Name) })
	return out, err
}

// SetBlueprint sets project's blueprint name to spec, for a member acting itself, once it
// is valid ([ValidateBlueprint]); the caller has checked its allow-list against the
// Board. Profiles made from an earlier version keep their copy.
func (k *Keeper) SetBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string, spec contract.BlueprintSpec) (contract.Blueprint, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Blueprint{}, err
	}
	if err := ValidateBlueprint(name, spec); err != nil {
		return contract.Blueprint{}, err
	}
	d, err := DigestOf(spec)
	if err != nil {
		return contract.Blueprint{}, err
	}
	var out contract.Blueprint
	err = k.write(ctx, project, "set the blueprint "+name, "blueprint "+name, func(tx store.Tx, s *state, now time.Time) error {
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.BlueprintSetData{Name: name, BlueprintSpec: spec, Digest: d})
	}, func(s *state) { out = *cloneBlueprint(s.blueprints[name]) })
	return out, err
}

// RemoveBlueprint removes project's blueprint name, for a member acting itself. Profiles
// made from it keep their copy.
func (k *Keeper) RemoveBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) error {
	if err := c.RequireInPerson(project); err != nil {
		return err
	}
	return k.write(ctx, project, "remove the blueprint "+name, "blueprint "+name, func(tx store.Tx, s *state, now time.Time) error {
		if s.blueprints[name] == nil {
			return contract.Errorf(contract.CodeNotFound, "project %s has no blueprint %.80q to remove; docket agent blueprint list shows its blueprints.", project, name)
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.BlueprintRemovedData{Name: name})
	}, func(*state) {})
}

// SetFromBlueprint replaces agent's profile with a copy of blueprint ref (which must
// still have ref's digest, or [contract.CodeBlueprintChanged]), with the Agent's own key
// file and enabled switch, for a member acting itself. The caller has checked the
// blueprint's allow-list against the Board as it stands.
func (k *Keeper) SetFromBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, ref contract.BlueprintRef, keyFile string, enabled bool) (contract.AgentProfile, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.AgentProfile{}, err
	}
	return k.act(ctx, project, agent, func(tx store.Tx, s *state, now time.Time) error {
		if _, live := s.names[agent]; !live {
			return contract.Errorf(contract.CodeNotFound, "Agent %s is revoked; a revoked Agent runs no runtime, so it takes no profile.", agent)
		}
		bp := s.blueprints[ref.Name]
		switch {
		case bp == nil:
			return contract.Errorf(contract.CodeNotFound, "project %s has no blueprint %.80q; docket agent blueprint list shows its blueprints.", project, ref.Name)
		case bp.Digest != ref.Digest:
			return contract.Errorf(contract.CodeBlueprintChanged,
				"blueprint %s was set again since you read it (now %s); read it again and make the profile from what it says now.", ref.Name, bp.Digest)
		}
		spec := bp.Profile
		spec.KeyFile, spec.Enabled = keyFile, enabled
		spec.Allow = cloneAllow(spec.Allow)
		if err := Validate(spec); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.ProfileSetData{Agent: agent, ProfileSpec: spec, Blueprint: &ref})
	})
}

// blueprintState says whether the blueprint a profile was copied from still has the
// digest it copied.
func (s *state) blueprintState(ref *contract.BlueprintRef) string {
	switch bp := s.blueprints[ref.Name]; {
	case bp == nil:
		return contract.BlueprintRemoved
	case bp.Digest != ref.Digest:
		return contract.BlueprintChanged
	}
	return contract.BlueprintCurrent
}

func cloneBlueprint(b *contract.Blueprint) *contract.Blueprint {
	if b == nil {
		return nil
	}
	out := *b
	out.Profile.Allow = cloneAllow(b.Profile.Allow)
	return &out
}

func cloneAllow(a *contract.AllowList) *contract.AllowList {
	if a == nil {
		return nil
	}
	return &contract.AllowList{CaseTypes: slices.Clone(a.CaseTypes), Actions: slices.Clone(a.Actions)}
}
