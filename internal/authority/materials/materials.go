// Package materials keeps what the authority knows of materials, the files a person
// hands an Agent: their name, size, media type and sha256, whether their content may go
// to the Agent's model provider, and which of the Agent's Operations read them. It is a
// projection of material.added, material.disclosure_set and the Operations of
// docket.material.read@1, caught up before each use. It never holds a material's bytes
// (docs/materials.md).
package materials

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// ReadTool is the built-in Tool whose settled Operations count as reads.
const ReadTool = "docket.material.read@1"

// MaxMediaType bounds a media type's length.
const MaxMediaType = 255

type key struct {
	agent  contract.AgentID
	sha256 string
}

type opKey struct {
	agent   string
	ordinal int64
}

// Keeper keeps the materials of every project: each project's [state], read and written
// through one [eventlog.Driver] (docs/architecture.md, "The project state and its
// driver"). It is safe for concurrent use.
type Keeper struct {
	store store.Store // from eventlog.Remember
	now   func() time.Time
	// log holds each project's state, as a part of a project [eventlog.Log] that other
	// parts may join (the authority's, with the operation ledger): its lock is then the
	// project's one lock. It is taken after the Board's (in [Keeper.Add]), as an
	// admission takes the ledger's, and never inside a store transaction
	// (docs/architecture.md, "The lock order").
	log *eventlog.Driver[*state]
}

// state is one project's materials and the reads of them not settled yet: a pure
// [eventlog.State], stepped only by [state.Apply].
type state struct {
	names     map[contract.AgentID]string
	materials map[key]*contract.Material
	reading   map[opKey]*pending // Operations of the read Tool not settled yet
}

// pending is a read not settled yet: the material it reads and the decision on it so far.
type pending struct {
	sha256 string
	read   contract.MaterialRead
}

// newState returns the state of an empty log.
func newState() *state {
	return &state{names: map[contract.AgentID]string{}, materials: map[key]*contract.Material{}, reading: map[opKey]*pending{}}
}

// New returns the Keeper over st, on a project log of its own; now is the clock. A Keeper reads what it wrote from the
// memory of st's commits ([eventlog.Remember]; a no-op on the authority's store, which is
// one already).
func New(st store.Store, now func() time.Time) *Keeper {
	return Join(eventlog.NewLog(eventlog.Remember(st, nil)), now)
}

// Join returns the Keeper as a part of l ([eventlog.Join]): its state of a project is
// under the one lock of the project's log and caught up by its one cursor, beside the
// other parts that joined l.
func Join(l *eventlog.Log, now func() time.Time) *Keeper {
	return &Keeper{store: l.Store(), now: now, log: eventlog.Join(l, newState)}
}

// Apply steps s by e.
func (s *state) Apply(e store.Event) error {
	switch e.Type {
	case event.AgentCreated:
		var a event.AgentCreatedData
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		s.names[a.ID] = a.Name
	case event.MaterialAdded:
		var d event.MaterialAddedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		m := &contract.Material{Agent: d.Agent, AgentName: s.names[d.Agent], MaterialAdd: d.MaterialAdd, Basis: d.Basis,
			AddedBy: contract.Principal(e.Actor), AddedAt: e.At}
		if old := s.materials[key{d.Agent, d.SHA256}]; old != nil {
			m.Disclosed, m.DisclosureBy, m.DisclosureAt, m.Reads = old.Disclosed, old.DisclosureBy, old.DisclosureAt, old.Reads
		}
		s.materials[key{d.Agent, d.SHA256}] = m
	case event.MaterialDisclosureSet:
		var d event.MaterialDisclosureSetData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if m := s.materials[key{d.Agent, d.Material}]; m != nil {
			m.Disclosed, m.DisclosureBy, m.DisclosureAt = d.Allowed, contract.Principal(e.Actor), e.At
		}
	case event.OpAdmitted, event.OpChanged:
		if !s.mayRead(e) {
			return nil
		}
		var d event.Operation
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		k := opKey{d.Agent, d.Ordinal}
		if d.Execution != nil && d.Execution.Tool == ReadTool && s.reading[k] == nil {
			s.reading[k] = &pending{sha256: d.Execution.Args["material"].Str()}
		}
		p := s.reading[k]
		if p == nil {
			return nil
		}
		if d.Decision != "" {
			p.read.Request = contract.RequestID(d.Decision)
		}
		if !d.State.Settled() {
			return nil
		}
		delete(s.reading, k)
		if m := s.materials[key{contract.AgentID(d.Agent), p.sha256}]; m != nil && d.State == contract.OpDone {
			r := p.read
			r.Agent, r.Ordinal, r.At = contract.AgentID(d.Agent), d.Ordinal, e.At
			m.Reads = append(m.Reads, r)
		}
	case event.RequestChanged:
		// The approval of a read's Request names who let it run.
		if !s.mayRead(e) {
			return nil
		}
		var d event.RequestChangedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if d.RequestedBy.Kind() != contract.PrincipalAgent || d.State != contract.RequestApproved {
			return nil
		}
		k := opKey{d.RequestedBy.ID(), d.Ordinal}
		p := s.reading[k]
		if p == nil && d.Vector.Tool == ReadTool {
			// The approval may come before the Operation is queued with its Execution.
			p = &pending{sha256: d.Vector.Args["material"].Str()}
			s.reading[k] = p
		}
		if p != nil {
			p.read.Request, p.read.ApprovedBy = d.ID, d.DecidedBy
			if d.DecidedAt != nil {
				p.read.ApprovedAt = *d.DecidedAt
			}
		}
	}
	return nil
}

// readTool is [ReadTool] as an event's JSON holds it: the authority's encoder writes it
// unescaped.
var readTool = []byte(`"` + ReadTool + `"`)

// mayRead reports whether e, an Operation's or a Request's event, may concern a read of a
// material: while no read is pending, only one that names the read Tool. The operation
// ledger's events are most of a project's log, and the state steps by each under the
// project's one lock that claims and admissions hold (docs/architecture.md, "The project
// state and its driver"), so the others are passed over without being decoded.
func (s *state) mayRead(e store.Event) bool {
	return len(s.reading) > 0 || bytes.Contains(e.Data, readTool)
}

// read runs fn on project's state caught up with the log.
func (k *Keeper) read(ctx context.Context, project contract.ProjectID, fn func(s *state)) error {
	if err := k.log.Read(ctx, project, func(s *state) error { fn(s); return nil }); err != nil {
		return fmt.Errorf("read materials of %s: %w", project, err)
	}
	return nil
}

// mayRead lets a member of project, or the Agent itself, read agent's materials.
func mayRead(c identity.Caller, project contract.ProjectID, agent contract.AgentID) error {
	if c.Kind == contract.PrincipalAgent && c.ID == string(agent) && slices.Contains(c.Projects, project) {
		return nil
	}
	return c.RequireMember(project)
}

// List returns agent's materials (all of project's when agent is ""), newest first.
func (k *Keeper) List(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID) ([]contract.Material, error) {
	var err error
	if agent == "" {
		err = c.RequireMember(project)
	} else {
		err = mayRead(c, project, agent)
	}
	if err != nil {
		return nil, err
	}
	out := []contract.Material{}
	err = k.read(ctx, project, func(s *state) {
		for _, m := range s.materials {
			if agent == "" || m.Agent == agent {
				out = append(out, clone(m))
			}
		}
	})
	slices.SortFunc(out, func(a, b contract.Material) int {
		return cmp.Or(b.AddedAt.Compare(a.AddedAt), cmp.Compare(a.SHA256, b.SHA256), cmp.Compare(a.Agent, b.Agent))
	})
	return out, err
}

// Get returns agent's material sha256, for a member or the Agent; material_not_found
// when the Agent has none by that digest.
func (k *Keeper) Get(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, sha256 string) (contract.Material, error) {
	if err := mayRead(c, project, agent); err != nil {
		return contract.Material{}, err
	}
	var out *contract.Material
	err := k.read(ctx, project, func(s *state) {
		if m := s.materials[key{agent, sha256}]; m != nil {
			c := clone(m)
			out = &c
		}
	})
	if err != nil {
		return contract.Material{}, err
	}
	if out == nil {
		return contract.Material{}, contract.Errorf(contract.CodeMaterialNotFound, "Agent %s has no material %s; docket material list %s shows its materials.", agent, short(sha256), agent)
	}
	return *out, nil
}

// Add records the fact of a material added for agent, for a member acting itself, in the
// transaction of a write of the caller's (the authority's AddMaterial, which asserts the
// material's Board fact in the same one): write runs that write and calls in with its
// transaction, once per attempt. Add returns the material as the write left it.
//
// held is the caller's hold of project's log, taken before write opens its transaction
// (the Board write's, [eventlog.Along]): the materials' State is a part of that log and
// is read through it, never locked again, since its lock is the one the caller holds;
// taken inside the transaction instead, a lock would wait for a disclosure that holds it
// while that disclosure waits for the store, which that transaction holds
// (docs/architecture.md, "The lock order").
func (k *Keeper) Add(ctx context.Context, held eventlog.Holding, c identity.Caller, project contract.ProjectID, agent contract.AgentID, in contract.MaterialAdd, at time.Time,
	write func(in func(tx store.Tx) error) error) (contract.Material, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Material{}, err
	}
	if err := Validate(in); err != nil {
		return contract.Material{}, err
	}
	// The caller holds the project's lock through the Board write, so the materials'
	// State is read through that hold, never locked again (docs/architecture.md, "The
	// lock order").
	h := eventlog.Along(held, k.log)
	// The caller's transaction is not the driver's write sequence, so Add takes its steps
	// itself: lock the head in tx, catch the state up with what tx sees, decide, append.
	err := write(func(tx store.Tx) error {
		head, err := tx.LockHead(ctx, string(project))
		if err != nil {
			return err
		}
		s, err := h.CatchUpTo(ctx, tx, head.Seq)
		if err != nil {
			return fmt.Errorf("read materials of %s: %w", project, err)
		}
		if _, live := s.names[agent]; !live {
			return contract.Errorf(contract.CodeNotFound, "Agent %s is not live; add the material to a live Agent.", agent)
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), at, event.MaterialAddedData{Agent: agent, MaterialAdd: in, Basis: contract.MaterialAsserted})
	})
	if err != nil {
		return contract.Material{}, err
	}
	// The state applies the committed write from the memory of the commit, as after
	// [eventlog.Held.Update], without reading the head again.
	s, err := h.CatchUpTo(ctx, k.store, eventlog.Latest(k.store, project))
	if err != nil {
		return contract.Material{}, fmt.Errorf("read materials of %s: %w", project, err)
	}
	return clone(s.materials[key{agent, in.SHA256}]), nil
}

// FactPredicate is the Board fact each added material is, at project scope, asserted by
// the member who added it: material(agent, conversation, name, size, media_type, sha256).
// Its arguments are the file's metadata, never its bytes.
const FactPredicate = "material"

// Fact is the Board batch that asserts material in's fact for agent.
func Fact(agent contract.AgentID, in contract.MaterialAdd) (contract.Batch, error) {
	size, err := contract.IntValue(in.Size)
	if err != nil {
		return contract.Batch{}, contract.Errorf(contract.CodeMaterialInvalid, "the material's size %d cannot be a fact's argument; give its size in bytes.", in.Size)
	}
	return contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: FactPredicate, Args: contract.Args{
		"agent": contract.StringValue(string(agent)), "conversation": contract.StringValue(in.Conversation), "name": contract.StringValue(in.Name),
		"size": size, "media_type": contract.StringValue(in.MediaType), "sha256": contract.StringValue(in.SHA256)}}}}}, nil
}

// SetDisclosure sets whether agent's material sha256 may be sent to its model
// provider, for a member acting itself.
func (k *Keeper) SetDisclosure(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, sha256 string, allowed bool) (contract.Material, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Material{}, err
	}
	return k.act(ctx, project, agent, sha256, func(tx store.Tx, s *state, now time.Time) error {
		if s.materials[key{agent, sha256}] == nil {
			return contract.Errorf(contract.CodeMaterialNotFound, "Agent %s has no material %s; add it first (docket material add).", agent, short(sha256))
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.MaterialDisclosureSetData{Agent: agent, Material: sha256, Allowed: allowed})
	})
}

// act runs a member's act on agent's material sha256 in the write sequence of project's
// log ([eventlog.Held.Update]), and returns the material after it, under the same lock.
func (k *Keeper) act(ctx context.Context, project contract.ProjectID, agent contract.AgentID, sha256 string, decide func(tx store.Tx, s *state, now time.Time) error) (contract.Material, error) {
	h := k.log.Lock(project)
	defer h.Unlock()
	now := k.now().UTC().Round(0)
	if err := h.Update(ctx, func(tx store.Tx, s *state) error { return decide(tx, s, now) }); err != nil {
		return contract.Material{}, eventlog.RefuseWrite(err, "record a material of "+string(agent), "agent "+string(agent))
	}
	return clone(h.State().materials[key{agent, sha256}]), nil
}

// Validate checks a material's fact as sent from outside.
func Validate(in contract.MaterialAdd) error {
	bad := func(format string, args ...any) error {
		return contract.Errorf(contract.CodeMaterialInvalid, format, args...)
	}
	switch {
	case !validDigest(in.SHA256):
		return bad("the material's sha256 %q is not sha256: and 64 lowercase hex digits; docket material add computes it.", short(in.SHA256))
	case in.Size < 0:
		return bad("the material's size is negative; give its size in bytes.")
	case in.MediaType == "" || len(in.MediaType) > MaxMediaType || strings.ContainsAny(in.MediaType, " \t\r\n") || !strings.Contains(in.MediaType, "/"):
		return bad("the material's media type %q is not a type/subtype such as text/plain.", short(in.MediaType))
	case len(in.Conversation) > 128:
		return bad("the conversation id is over 128 bytes; name the conversation as docket task show prints it.")
	}
	return checkName(in.Name)
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(h) == 64 && strings.Trim(h, "0123456789abcdef") == ""
}

// checkName matches material.CheckName, which this package may not import: a label, not
// a path.
func checkName(name string) error {
	bad := func(why string) error {
		return contract.Errorf(contract.CodeMaterialInvalid, "the material's name %s; give the file a plain name such as report.txt.", why)
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > 255:
		return bad("is over 255 bytes")
	case name == "." || name == "..":
		return bad("is " + name)
	case strings.ContainsAny(name, `/\`):
		return bad("holds a path separator")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return bad("holds a control character or is not UTF-8")
		}
	}
	return nil
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func clone(m *contract.Material) contract.Material {
	if m == nil {
		return contract.Material{}
	}
	out := *m
	out.Reads = slices.Clone(m.Reads)
	return out
}
