package authority

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// ConsentCall is a delegate's call of a consent operation as the console received it.
type ConsentCall struct {
	Operation opclass.Operation
	Path      string            // as sent, escaped
	Values    map[string]string // the route's wildcards
	Body      []byte            // JSON, or empty
	Reason    string
}

// Propose takes delegate c's consent call in project. When the delegate policy
// in force exempts the operation, the exemption is recorded with that policy's version
// and card is nil: the caller then runs the call as the delegate. Otherwise the call is
// recorded as an open card, bound to its subject as it stands now, and nothing runs.
func (o *Operations) Propose(ctx context.Context, c identity.Caller, project contract.ProjectID, call ConsentCall) (*contract.Card, error) {
	if call.Operation.Class != opclass.Consent {
		return nil, fmt.Errorf("propose %s: it is %s, not consent", call.Operation.Name, call.Operation.Class)
	}
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	if err := identity.CheckReason(call.Reason); err != nil {
		return nil, err
	}
	body, digest, err := canonicalBody(call.Body)
	if err != nil {
		return nil, err
	}
	v, doc, err := o.a.policies.InForce(ctx, project, contract.PolicyDelegate)
	if err != nil {
		return nil, fmt.Errorf("propose %s: %w", call.Operation.Name, err)
	}
	cc := identity.CardCall{Operation: call.Operation.Name, Method: call.Operation.Method(), Path: call.Path, Body: body, BodyDigest: digest,
		Reason: call.Reason, Changes: call.Operation.Changes, Policy: v.Version}
	if doc.Delegate != nil && doc.Delegate.Exempts(call.Operation.Name) {
		return nil, o.a.dir.RecordExempt(ctx, c, project, cc)
	}
	if cc.Subject, err = o.subjectNow(ctx, c, project, call.Operation, call.Values, body); err != nil {
		return nil, err
	}
	card, err := o.a.dir.RecordCard(ctx, c, project, cc)
	if err != nil {
		return nil, err
	}
	return &card, nil
}

// ConfirmCard confirms card id for member c acting itself: its subject is read again
// first, and one that changed voids the card (card_void). The caller then runs the
// card's call once, as c, and settles it with [identity.Directory.SettleCard].
func (o *Operations) ConfirmCard(ctx context.Context, c identity.Caller, id string) (contract.Card, error) {
	return o.a.dir.ConfirmCard(ctx, c, id, func(card contract.Card) (contract.CardSubject, error) {
		op, ok := opclass.ByName(card.Operation)
		if !ok {
			return contract.CardSubject{}, fmt.Errorf("card %s names operation %s, which the table lacks", card.ID, card.Operation)
		}
		values, ok := op.PathValues(card.Path)
		if !ok {
			return contract.CardSubject{}, fmt.Errorf("card %s: path %s is not one of %s", card.ID, card.Path, op.Route)
		}
		return o.subjectNow(ctx, c, card.Project, op, values, card.Body)
	})
}

// canonicalBody returns body in canonical JSON (RFC 8785) and its digest; an empty body
// stays empty.
func canonicalBody(body []byte) (json.RawMessage, string, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, contract.Sum(nil).String(), nil
	}
	if !json.Valid(body) {
		return nil, "", contract.Errorf(contract.CodeInvalidArgument, "the request body is not JSON; send the operation's JSON body.")
	}
	canon, err := jcs.Transform(body)
	if err != nil {
		return nil, "", contract.Errorf(contract.CodeInvalidArgument, "the request body has no canonical JSON form (%v); send plain JSON.", err)
	}
	return canon, contract.Sum(canon).String(), nil
}

// subjectNow reads the subject of a call of op, as the table binds it
// ([opclass.Subjects]), as it stands now: this is the one place each kind's version is
// read, when a card is recorded and again when it is confirmed.
func (o *Operations) subjectNow(ctx context.Context, c identity.Caller, project contract.ProjectID, op opclass.Operation, values map[string]string, body []byte) (contract.CardSubject, error) {
	sub, ok := opclass.Subjects[op.Name]
	if !ok {
		return contract.CardSubject{}, fmt.Errorf("operation %s has no subject in the table", op.Name)
	}
	refs := make([]string, 0, len(sub.Refs))
	for _, ref := range sub.Refs {
		v, err := refValue(ref, values, body)
		if err != nil {
			return contract.CardSubject{}, err
		}
		refs = append(refs, v)
	}
	switch sub.Kind {
	case opclass.SubjectCapability:
		return o.capabilitySubject(ctx, c, project, body)
	case opclass.SubjectRequest:
		out := contract.CardSubject{Kind: sub.Kind, Ref: refs[0], Version: contract.SubjectAbsent}
		rs, err := o.ops.Requests(ctx, c, project)
		if err != nil {
			return contract.CardSubject{}, err
		}
		for _, r := range rs {
			if string(r.ID) == refs[0] {
				out.Version, err = identity.VersionOf([]any{r.State, r.Digest})
				return out, err
			}
		}
		return out, nil
	case opclass.SubjectSchedule:
		out := contract.CardSubject{Kind: sub.Kind, Ref: refs[0], Version: contract.SubjectAbsent}
		s, err := o.a.store.Schedule(ctx, refs[0])
		if errors.Is(err, store.ErrNotFound) || (err == nil && (s.Project != string(project) || s.DeletedAt != nil)) {
			return out, nil
		}
		if err != nil {
			return contract.CardSubject{}, fmt.Errorf("read schedule %s: %w", refs[0], err)
		}
		out.Version, err = identity.VersionOf([]any{s.ID, s.Agent, s.Cron, s.Every, s.TimeZone, s.Missed, s.Task, s.PausedAt})
		return out, err
	case opclass.SubjectBudget:
		out := contract.CardSubject{Kind: sub.Kind, Ref: refs[0], Version: contract.SubjectAbsent}
		v, ok, err := o.a.budgets.Version(ctx, project, refs[0])
		if err != nil || !ok {
			return out, err
		}
		out.Version, err = identity.VersionOf([]any{refs[0], v})
		return out, err
	}
	out, ok, err := o.a.dir.SubjectNow(ctx, project, sub.Kind, refs)
	if !ok && err == nil {
		err = fmt.Errorf("operation %s: subject kind %s is read nowhere", op.Name, sub.Kind)
	}
	return out, err
}

// refValue is one reference of a subject: a path wildcard or a string field of the body.
func refValue(ref string, values map[string]string, body []byte) (string, error) {
	if name, ok := strings.CutPrefix(ref, "{"); ok {
		return values[strings.TrimSuffix(name, "}")], nil
	}
	field, ok := strings.CutPrefix(ref, "body.")
	if !ok {
		return "", nil // the body as a whole: its kind reads it
	}
	// A dotted field (task.agent) names a string inside nested objects.
	raw := json.RawMessage(body)
	for name := range strings.SplitSeq(field, ".") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", contract.Errorf(contract.CodeInvalidArgument, "the request body's %s is not inside JSON objects; send the operation's JSON body.", field)
		}
		var ok bool
		if raw, ok = m[name]; !ok {
			return "", nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", contract.Errorf(contract.CodeInvalidArgument, "the body's %s is not a string; send the operation's JSON body.", field)
	}
	return s, nil
}

// capabilitySubject reads the subject of a capability install: the release of the
// capability the package declares that is installed now, or absent. A package that does
// not check is refused now, as its install would be.
func (o *Operations) capabilitySubject(ctx context.Context, c identity.Caller, project contract.ProjectID, body []byte) (contract.CardSubject, error) {
	var up contract.CapabilityUpload
	if err := json.Unmarshal(body, &up); err != nil || len(up.Files) == 0 {
		return contract.CardSubject{}, contract.Errorf(contract.CodeCapabilityInvalid, "the upload holds no files; send capability.toml and its .dl rule files.")
	}
	files := make(map[string][]byte, len(up.Files))
	for name, text := range up.Files {
		files[name] = []byte(text)
	}
	pkg, err := capability.Check(files)
	if err != nil {
		return contract.CardSubject{}, err
	}
	out := contract.CardSubject{Kind: opclass.SubjectCapability, Ref: pkg.Release.ID, Version: contract.SubjectAbsent}
	rs, err := o.a.Installs(ctx, c, project)
	if err != nil {
		return contract.CardSubject{}, err
	}
	for _, r := range rs {
		if r.ID == pkg.Release.ID {
			out.Version, err = identity.VersionOf([]any{r.ID, r.Version, r.Digest})
			return out, err
		}
	}
	return out, nil
}
