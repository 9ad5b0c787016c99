// Package policy keeps each project's published policies: versions of each kind,
// monotonic per kind from the built-in version 1, each a policy.published event that only
// a member publishes, and the version in force that every decision records.
package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
	"github.com/docketrun/docket/internal/store"
)

// Book keeps the policies of every project: each project's [state], read and written
// through one [eventlog.Driver] that catches it up with the log before each use, so
// several instances over one store agree (docs/architecture.md, "The project state and
// its driver"). It is safe for concurrent use.
type Book struct {
	store store.Store
	now   func() time.Time
	// log holds each project's state, as a part of a project [eventlog.Log] the
	// operation ledger joins too: one lock for both. A call that holds the ledger reads
	// the state through it (the ...Along methods), never through this lock, which it
	// holds already; a call that holds nothing reads the published state when it covers
	// the head the call read, and locks otherwise.
	log *eventlog.Driver[*state]
	// named remembers, by the digest of a delegation policy's text and an Action, whether
	// a class of that policy names the Action: a View asks on every answer, and a
	// version's text never changes. It holds one entry per published version and Action
	// asked about. Key: digest + " " + action; value: bool.
	named sync.Map
}

// state is one project's published versions and its Agents' autonomy: a pure
// [eventlog.State], stepped only by [state.Apply].
type state struct {
	versions    map[contract.PolicyKind][]contract.PolicyVersion // published versions, from 2, in order
	autonomyDoc policydoc.Autonomy                               // the last published autonomy policy
	agents      map[contract.AgentID]*agentAutonomy              // each Agent's level and windows
	// frozen is the state's last published copy ([state.publish]), nil once Apply
	// changed the state since: every event of the project's log moves the cursor and so
	// publishes, and only the rare ones [Moves] names change a Book.
	frozen *state
}

// publish returns a copy of s that nothing changes, for reads made without the lock
// ([eventlog.Driver.Publish]): made again only when an event changed s since the last.
func (s *state) publish() *state {
	if s.frozen != nil {
		return s.frozen
	}
	c := &state{versions: make(map[contract.PolicyKind][]contract.PolicyVersion, len(s.versions)), autonomyDoc: s.autonomyDoc,
		agents: make(map[contract.AgentID]*agentAutonomy, len(s.agents))}
	for k, vs := range s.versions {
		c.versions[k] = slices.Clip(vs) // Apply appends past the copy's length, never within it
	}
	for id, a := range s.agents {
		ac := *a
		ac.windows = slices.Clip(a.windows)
		c.agents[id] = &ac
	}
	c.frozen = c
	s.frozen = c
	return c
}

// newState returns the state of an empty log.
func newState() *state {
	return &state{versions: map[contract.PolicyKind][]contract.PolicyVersion{}, agents: map[contract.AgentID]*agentAutonomy{}}
}

// New returns the Book over st, on a project log of its own; now is the clock. A Book
// reads what it wrote from the memory of st's commits ([eventlog.Remember]; a no-op on
// the authority's store, which is one already).
func New(st store.Store, now func() time.Time) *Book {
	return Join(eventlog.NewLog(eventlog.Remember(st, nil)), now)
}

// Join returns the Book as a part of l ([eventlog.Join]): its state of a project is
// under the one lock of the project's log, beside the other parts that joined l, which
// read it under that lock through the ...Along methods.
func Join(l *eventlog.Log, now func() time.Time) *Book {
	b := &Book{store: l.Store(), now: now, log: eventlog.Join(l, newState)}
	b.log.Publish(func(s *state) any { return s.publish() })
	return b
}

// Log returns the project log the Book joined.
func (b *Book) Log() *eventlog.Log { return b.log.Log() }

// Moves reports whether an event of type typ may change what a Book reads: a published
// version, or an event that moves an Agent's autonomy, the types [state.Apply] follows.
// A reader that decided on a Book at one head and must know whether that still holds at
// a later one (an admission's gate, inside its transaction, where the Book may not be
// locked: docs/architecture.md, "The lock order") looks for these between.
func Moves(typ string) bool {
	switch typ {
	case event.PolicyPublished, event.AgentCreated, event.LevelSet, event.RiskAcknowledged, event.RunWindowOpened:
		return true
	}
	return false
}

// Apply steps s by e: a published version, or an event that moves an Agent's autonomy.
func (s *state) Apply(e store.Event) error {
	if Moves(e.Type) {
		s.frozen = nil
	}
	if e.Type != event.PolicyPublished {
		return s.applyAutonomy(e)
	}
	var d event.PolicyPublishedData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return err
	}
	v := d.PolicyVersion
	if want := int64(len(s.versions[v.Kind])) + 2; v.Version != want {
		return fmt.Errorf("policy %s version %d published after version %d", v.Kind, v.Version, want-1)
	}
	if v.Kind == contract.PolicyAutonomy {
		d, err := policydoc.Parse(v.File, []byte(v.Text))
		if err != nil {
			return fmt.Errorf("autonomy policy version %d does not parse: %w", v.Version, err)
		}
		s.autonomyDoc = *d.Autonomy
	}
	s.versions[v.Kind] = append(s.versions[v.Kind], v)
	return nil
}

// builtin returns kind's version 1.
func builtin(kind contract.PolicyKind) contract.PolicyVersion {
	text := policydoc.BuiltinText(kind)
	return contract.PolicyVersion{Kind: kind, Version: 1, Builtin: true, Digest: contract.Sum([]byte(text)).String(), Text: text}
}

// latest returns kind's version in force.
func (s *state) latest(kind contract.PolicyKind) contract.PolicyVersion {
	if vs := s.versions[kind]; len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return builtin(kind)
}

// version returns version n of kind, or ok false.
func (s *state) version(kind contract.PolicyKind, n int64) (contract.PolicyVersion, bool) {
	vs := s.versions[kind]
	switch {
	case n == 1:
		return builtin(kind), true
	case n >= 2 && n-2 < int64(len(vs)):
		return vs[n-2], true
	}
	return contract.PolicyVersion{}, false
}

// read runs fn on project's state caught up with the log: to the head ctx carries
// ([eventlog.WithHead]), else to the head read once. It answers from the published
// state when that covers the head, so a read that holds nothing never waits for a write
// of another part of the project's log holding the lock across its transaction (a claim
// batch of the operation ledger: docs/architecture.md, "The project state and its
// driver"); otherwise it locks and catches up to that head. fn must not change s.
func (b *Book) read(ctx context.Context, project contract.ProjectID, fn func(s *state)) error {
	head, ok := eventlog.KnownHead(ctx, project)
	if !ok {
		h, err := b.store.Head(ctx, string(project))
		if err != nil {
			return fmt.Errorf("read policies of %s: read the head: %w", project, err)
		}
		head = h.Seq
	}
	if snap, ok := b.log.Snapshot(project); ok && snap.Seq >= head {
		fn(snap.Value.(*state))
		return nil
	}
	h := b.log.Lock(project)
	defer h.Unlock()
	s, err := h.CatchUpTo(ctx, b.store, head)
	if err != nil {
		return fmt.Errorf("read policies of %s: %w", project, err)
	}
	fn(s)
	return nil
}

// along returns the state of the project whose log h holds, under h's lock, as far as
// h's catch-ups took it: for a call of another part of the Book's [eventlog.Log] that
// holds the project's lock (the operation ledger's), which must not lock it again.
func (b *Book) along(h eventlog.Holding) *state { return eventlog.Along(h, b.log).State() }

// Publish publishes req as the next version of its kind in project, for a member
// : the document is parsed strictly first, and a refusal names file:line.
// Publishing the text in force again is refused, so a version always changes something.
func (b *Book) Publish(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.PublishPolicyRequest) (contract.PolicyVersion, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.PolicyVersion{}, err
	}
	name := req.File
	if name == "" {
		name = "policy.toml"
	}
	if len(name) > 200 || !utf8.ValidString(name) || strings.ContainsAny(name, "\n\r") {
		return contract.PolicyVersion{}, contract.Errorf(contract.CodeInvalidArgument, "the file name is not one line of at most 200 bytes; send the name of the file the policy came from.")
	}
	d, err := policydoc.Parse(name, []byte(req.Text))
	if err != nil {
		return contract.PolicyVersion{}, err
	}
	now := b.nowUTC()
	var out contract.PolicyVersion
	err = b.log.Write(ctx, project, func(tx store.Tx, s *state) error {
		// Under the head lock nothing else appends, so the version read here is the
		// next one when this transaction commits.
		cur := s.latest(d.Kind)
		digest := contract.Sum([]byte(req.Text)).String()
		if digest == cur.Digest {
			return contract.Errorf(contract.CodeAlreadyExists, "the %s policy in force (version %d) is this text already; change the file before publishing it.", d.Kind, cur.Version)
		}
		out = contract.PolicyVersion{Kind: d.Kind, Version: cur.Version + 1, Digest: digest, PublishedBy: c.Principal(),
			PublishedAt: &now, File: name, Text: req.Text}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.PolicyPublishedData{PolicyVersion: out})
	})
	if err != nil {
		return contract.PolicyVersion{}, eventlog.RefuseWrite(err, fmt.Sprintf("publish %s policy", d.Kind), "project "+string(project))
	}
	// Named after the event is written: the log records the principal, not a name.
	if out.Publisher, err = b.publisher(ctx, out.PublishedBy, map[contract.Principal]string{}); err != nil {
		return contract.PolicyVersion{}, err
	}
	return out, nil
}

// List returns every version of every kind of project, for a member: kinds in the order
// of [contract.PolicyKinds], versions oldest first, without their text.
func (b *Book) List(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.PolicyVersion, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	var out []contract.PolicyVersion
	err := b.read(ctx, project, func(s *state) {
		for _, k := range contract.PolicyKinds {
			out = append(out, builtin(k))
			out = append(out, s.versions[k]...)
		}
	})
	if err != nil {
		return nil, err
	}
	names := map[contract.Principal]string{}
	for i := range out {
		out[i].Text = ""
		if out[i].Publisher, err = b.publisher(ctx, out[i].PublishedBy, names); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// publisher returns the name of the member by (a delegate's "member/delegate" as it
// stands), "" for none, reading each member once into names.
func (b *Book) publisher(ctx context.Context, by contract.Principal, names map[contract.Principal]string) (string, error) {
	if by.Kind() != contract.PrincipalMember {
		return "", nil
	}
	if n, ok := names[by]; ok {
		return n, nil
	}
	n := by.ID()
	if !strings.Contains(n, "/") { // a delegate's principal already names its member
		m, err := b.store.Member(ctx, n)
		switch {
		case errors.Is(err, store.ErrNotFound):
			n = ""
		case err != nil:
			return "", fmt.Errorf("read publisher %s: %w", by, err)
		default:
			n = m.Name
		}
	}
	names[by] = n
	return n, nil
}

// Show returns version n of kind in project with its text, for a member; n == 0 is the
// version in force.
func (b *Book) Show(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.PolicyKind, n int64) (contract.PolicyVersion, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.PolicyVersion{}, err
	}
	var v contract.PolicyVersion
	ok := false
	err := b.read(ctx, project, func(s *state) {
		if n == 0 {
			v, ok = s.latest(kind), true
			return
		}
		v, ok = s.version(kind, n)
	})
	if err != nil {
		return contract.PolicyVersion{}, err
	}
	if !ok {
		return contract.PolicyVersion{}, contract.Errorf(contract.CodeNotFound, "project %q has no %s policy version %d; list them with docket policy list.", project, kind, n)
	}
	if v.Publisher, err = b.publisher(ctx, v.PublishedBy, map[contract.Principal]string{}); err != nil {
		return contract.PolicyVersion{}, err
	}
	return v, nil
}

// Diff returns the line difference between versions from and to of kind, for a member.
func (b *Book) Diff(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.PolicyKind, from, to int64) (contract.PolicyDiff, error) {
	a, err := b.Show(ctx, c, project, kind, from)
	if err != nil {
		return contract.PolicyDiff{}, err
	}
	z, err := b.Show(ctx, c, project, kind, to)
	if err != nil {
		return contract.PolicyDiff{}, err
	}
	return contract.PolicyDiff{Kind: kind, From: a.Version, To: z.Version, Diff: lineDiff(a.Text, z.Text)}, nil
}

// InForce returns kind's version in force in project and its document: what a decision
// or a policy-governed act records and obeys.
func (b *Book) InForce(ctx context.Context, project contract.ProjectID, kind contract.PolicyKind) (contract.PolicyVersion, policydoc.Document, error) {
	var v contract.PolicyVersion
	if err := b.read(ctx, project, func(s *state) { v = s.latest(kind) }); err != nil {
		return contract.PolicyVersion{}, policydoc.Document{}, err
	}
	return document(v)
}

// InForceAlong is [Book.InForce] for a call holding the project's log through another
// part (h): kind's version in force as far as h's State applied the log.
func (b *Book) InForceAlong(h eventlog.Holding, kind contract.PolicyKind) (contract.PolicyVersion, policydoc.Document, error) {
	return document(b.along(h).latest(kind))
}

// document returns v with its document.
func document(v contract.PolicyVersion) (contract.PolicyVersion, policydoc.Document, error) {
	kind := v.Kind
	if v.Builtin {
		return v, policydoc.Builtin(kind), nil
	}
	d, err := policydoc.Parse(v.File, []byte(v.Text))
	if err != nil {
		return contract.PolicyVersion{}, policydoc.Document{}, fmt.Errorf("policy %s version %d in the log does not parse: %w", kind, v.Version, err)
	}
	return v, d, nil
}
