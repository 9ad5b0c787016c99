package board

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Config configures a Board. The zero value of every field but Declarations is usable.
type Config struct {
	// Declarations are the installed capability releases. Their rules land at tier
	// verified, created by capability:<release>.
	Declarations []Declarations

	// AllowAgentRules lets agents add rules outside exploration Cases. Default false: an
	// agent's add_axiom outside an exploration Case is refused with case_local_forbidden,
	// and the View's position.rules says so.
	AllowAgentRules bool

	// Limits are the engine's safety caps; zero fields take the engine's defaults.
	Limits engine.Limits
}

// Board is a project's Board: capability rules, the nodes principals created, the Cases
// and the Actions. Every mutation is all-or-nothing: an error leaves the
// Board as it was. A Board is not safe for concurrent use; the authority serializes calls.
type Board struct {
	cfg Config
	eng *engine.Engine

	caseTypes   map[string]caseType
	caseTypeSeq []string // declaration order
	actions     map[string]Action
	actionSeq   []string
	actionRel   map[string]string // Action name → the release that declared it
	heads       []string          // predicates capability rules derive, sorted; the View shows them

	nodes  map[string]*node // base nodes: facts, rules and goals, capability rules included
	recent []string         // node ids in creation order; ids of deleted nodes are skipped
	seq    uint64           // Seq of the newest node

	cases   map[contract.CaseID]*contract.Case
	caseSeq []contract.CaseID
	open    map[string]contract.CaseID // caseType + key digest → the open Case

	// tentative, when set, records what the changes made since it began replaced
	// ([Board.Tentative]).
	tentative *Tentative
}

// caseType is a CaseType with the release that declared it.
type caseType struct {
	CaseType
	release, digest string
}

// node is one base node: its record and the engine form of its content.
type node struct {
	rec  contract.Node
	atom engine.Atom // fact, goal (a pattern)
	// rule is a rule node's rule, nil for the others: a Board holds far more facts than
	// rules, and a rule held in place grew every fact's node by its size (a node took
	// 288 bytes, 192 with the pointer). A growing Board's live heap is mostly its
	// facts, and every GC cycle marks all of it.
	rule *engine.Rule
}

// builtinExploration is the exploration Case Type every Board has unless a release
// declares its own: keyed by a topic, with no opening and no acceptance, so it can be
// closed only with a reason.
var builtinExploration = CaseType{
	Name:        ExplorationCaseType,
	Title:       "Exploration",
	Description: "Case-local facts, rules and goals that vanish at close.",
	KeyArgs:     []string{"topic"},
	Exploration: true,
}

// New returns a Board holding the rules, Case Types and Actions of decls.
func New(decls ...Declarations) (*Board, error) {
	return NewConfig(Config{Declarations: decls})
}

// NewConfig returns a Board configured by cfg. It refuses duplicate Case Types or Actions
// across releases, and capability rules the engine refuses, with capability_invalid.
func NewConfig(cfg Config) (*Board, error) {
	b := &Board{
		cfg:       cfg,
		eng:       engine.New(cfg.Limits),
		caseTypes: map[string]caseType{},
		actions:   map[string]Action{},
		actionRel: map[string]string{},
		nodes:     map[string]*node{},
		cases:     map[contract.CaseID]*contract.Case{},
		open:      map[string]contract.CaseID{},
	}
	b.eng.SetDeltas(false) // the Board reads the engine, never its Deltas
	var rules []engine.Rule
	heads := map[string]bool{}
	for _, d := range cfg.Declarations {
		by := contract.NewPrincipal(contract.PrincipalCapability, d.Release)
		for _, ct := range d.CaseTypes {
			if _, dup := b.caseTypes[ct.Name]; dup {
				return nil, contract.Errorf(contract.CodeCapabilityInvalid, "the Case Type %q is declared twice (again by %s); rename one", ct.Name, d.Release)
			}
			if ct.Name == ExplorationCaseType {
				ct.Exploration = true
			}
			b.caseTypes[ct.Name] = caseType{CaseType: ct, release: d.Release, digest: d.Digest}
			b.caseTypeSeq = append(b.caseTypeSeq, ct.Name)
		}
		for _, a := range d.Actions {
			if _, dup := b.actions[a.Name]; dup {
				return nil, contract.Errorf(contract.CodeCapabilityInvalid, "the Action %q is declared twice (again by %s); rename one", a.Name, d.Release)
			}
			b.actions[a.Name] = a
			b.actionRel[a.Name] = d.Release
			b.actionSeq = append(b.actionSeq, a.Name)
		}
		for _, r := range d.Rules {
			r.Tier = contract.TierVerified
			if r.ID == "" {
				r.ID = "cap-" + digest(d.Release, r.String()).Hex()[:16]
			}
			if _, dup := b.nodes[r.ID]; dup {
				return nil, contract.Errorf(contract.CodeCapabilityInvalid, "the rule id %q is used twice (again by %s); give each rule its own id", r.ID, d.Release)
			}
			heads[r.Head.Pred] = true
			rules = append(rules, r)
			b.addNode(&node{rule: &r, rec: contract.Node{
				NodeID: r.ID, Kind: contract.NodeRule, CreatedBy: by, Tier: contract.TierVerified,
				Rule: wireRule(r), Aggregate: wireAggregate(r),
			}})
		}
	}
	if _, ok := b.caseTypes[ExplorationCaseType]; !ok {
		b.caseTypes[ExplorationCaseType] = caseType{CaseType: builtinExploration, release: "builtin"}
		b.caseTypeSeq = append(b.caseTypeSeq, ExplorationCaseType)
	}
	b.heads = slices.Sorted(maps.Keys(heads))
	if len(rules) > 0 {
		if _, err := b.eng.AddRules(rules...); err != nil {
			return nil, &contract.Error{Code: contract.CodeCapabilityInvalid, Err: err,
				Teaching: "the installed capability rules are refused by the engine (" + teachingOf(err) + "); fix the capability and install it again"}
		}
	}
	return b, nil
}

// addNode records n as the newest node.
func (b *Board) addNode(n *node) {
	if n.rec.Seq == 0 {
		b.seq++
		n.rec.Seq = b.seq
	} else {
		b.seq = max(b.seq, n.rec.Seq)
	}
	b.nodes[n.rec.NodeID] = n
	b.recent = append(b.recent, n.rec.NodeID)
}

// dropNode forgets the node id. The stale entry in recent is compacted once stale
// entries are the majority, so that recent stays proportional to the live nodes.
func (b *Board) dropNode(id string) {
	delete(b.nodes, id)
	// Not while a tentative record is open: its Undo cuts recent back to its length then.
	if b.tentative == nil && len(b.recent) > 64 && len(b.recent) > 2*len(b.nodes) {
		live := b.recent[:0]
		seen := map[string]bool{}
		for _, r := range b.recent {
			if n, ok := b.nodes[r]; ok && !seen[r] && n.rec.NodeID == r {
				seen[r] = true
				live = append(live, r)
			}
		}
		b.recent = live
	}
}

// Nodes returns the nodes the authority persists — facts, rules and goals created by
// principals, not capability rules — in creation (Seq) order, as the changes reported
// them (a goal's Holds is left out: it is live state, not a persisted field).
func (b *Board) Nodes() []contract.Node {
	var out []contract.Node
	for _, n := range b.nodes {
		if n.rec.CreatedBy.Kind() == contract.PrincipalCapability {
			continue
		}
		out = append(out, n.rec)
	}
	slices.SortFunc(out, func(x, y contract.Node) int { return cmp.Compare(x.Seq, y.Seq) })
	return out
}

// Node returns the node with id: a base node, or a derived fact the engine holds.
func (b *Board) Node(id string) (contract.Node, bool) {
	if n, ok := b.nodes[id]; ok {
		return b.record(n), true
	}
	if e, ok := b.eng.Lookup(id); ok {
		return b.entryNode(e), true
	}
	return contract.Node{}, false
}

// record returns n's record as it stands now: a goal says whether it holds.
func (b *Board) record(n *node) contract.Node {
	r := n.rec
	if r.Kind == contract.NodeGoal && r.Atom != nil {
		holds := false
		for range b.eng.Match(n.atom) {
			holds = true
			break
		}
		r.Holds = &holds
	}
	return r
}

// entryNode returns the record of a fact the engine holds: the base node when someone
// asserted it, else a derived node with the premises of its best derivation.
func (b *Board) entryNode(e engine.Entry) contract.Node {
	if n, ok := b.nodes[e.ID]; ok && n.rec.Kind == contract.NodeFact {
		return n.rec
	}
	rec := contract.Node{NodeID: e.ID, Kind: contract.NodeDerived, Tier: e.Tier, Atom: ptr(wireAtom(e.Atom))}
	if d, err := b.eng.Explain(e.ID); err == nil && !d.Base {
		for _, p := range d.Premises {
			rec.Premises = append(rec.Premises, p.ID)
		}
		if n, ok := b.nodes[d.Rule]; ok {
			rec.CreatedBy = n.rec.CreatedBy
		}
	}
	return rec
}

func ptr[T any](v T) *T { return &v }

// digest returns the sha256 of parts, each followed by a NUL byte, so that no two part
// lists share a digest by concatenation.
func digest(parts ...string) contract.Digest {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return contract.SumOf(h)
}

// teachingOf returns the teaching sentence of err's *contract.Error, or its text.
func teachingOf(err error) string {
	if e, ok := asContractError(err); ok {
		return e.Teaching
	}
	return err.Error()
}

// refuse wraps err so that it carries a code: an engine refusal keeps its own, anything
// else becomes invalid_argument with context.
func refuse(err error, context string) error {
	if _, ok := asContractError(err); ok {
		return err
	}
	return &contract.Error{Code: contract.CodeInvalidArgument, Err: err, Teaching: fmt.Sprintf("%s: %v", context, err)}
}
