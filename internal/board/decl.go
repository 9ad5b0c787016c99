package board

import (
	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Declarations is what one capability release contributes to a Board. The
// capability package parses and validates it; the Board only consumes it.
type Declarations struct {
	Release   string // the release that declared these, "id@version"
	Digest    string // the release digest, "sha256:…"
	Rules     []engine.Rule
	CaseTypes []CaseType
	Actions   []Action
	Sources   []SourceRequirement
}

// ExplorationCaseType is the one Case Type that permits Case-local predicates, rules,
// Actions and goals; they vanish when the Case closes.
const ExplorationCaseType = "exploration"

// CaseType is the contract of a kind of Case.
type CaseType struct {
	Name        string
	Title       string
	Description string

	// KeyPredicate and KeyArgs name the business key: a Case's subject is identified by the
	// values of KeyArgs, e.g. calculation_input's job_id.
	KeyPredicate string
	KeyArgs      []string

	// Opening must already hold for the business key, at OpeningFloor or stronger, before
	// the Case opens.
	Opening      string
	OpeningFloor contract.Tier

	// Acceptance must be derived (never merely asserted) for the business key, at Floor
	// (minimumGroundingFloor) or stronger, for the Case's root to be certified.
	Acceptance string
	Floor      contract.Tier

	// OncePerCase names the terminal Actions that may succeed at most once in a Case.
	OncePerCase []string

	Exploration bool // the exploration Case Type

	// DirectActions lets the direct Actions of locked Tools run in Cases of this type;
	// they always run in exploration Cases (docs/workers.md, "Direct Actions").
	DirectActions bool
}

// ParamType is the type of an Action parameter.
type ParamType string

// Parameter types; they match the scalar kinds of engine.Value.
const (
	ParamString ParamType = "string"
	ParamInt    ParamType = "integer"
	ParamFloat  ParamType = "number"
	ParamBool   ParamType = "boolean"
)

// Param is one declared parameter of an Action. Preconditions and effects refer to a
// parameter as the variable of the same name (?job_id in text).
type Param struct {
	Name        string
	Type        ParamType
	Description string
	Optional    bool
}

// Binding fills a parameter from a variable bound by the Action's preconditions, that is
// by trusted premises on the Board. The model must not pass a bound parameter.
type Binding struct {
	Param string
	Var   string
}

// Effect is an atom an Action produces on success; a Consume effect instead removes the
// matching fact (a negated effect in the capability file).
type Effect struct {
	Atom    engine.Atom
	Consume bool
}

// ExecutionKind says what an executed Action does to the world.
type ExecutionKind string

// Execution kinds.
const (
	KindRead  ExecutionKind = "read"
	KindWrite ExecutionKind = "write"
	KindRun   ExecutionKind = "run"
)

// Return maps the rows a Tool returns to facts: each row becomes Predicate with Args taken
// from the row's columns ("$column") or constants.
type Return struct {
	Predicate string
	Args      map[string]string
}

// Execution is the Tool an Action runs on a Worker. An Action without one is Board-only:
// its effects apply in the batch.
type Execution struct {
	Tool        string // "vendor.name@N"
	SourceTypes []string
	// Source is the name of the package's Source the Tool runs against: the one its
	// execution names, else the only Source of its SourceTypes the package declares; ""
	// for a Source-free Tool or when the package declares several of those types.
	Source  string
	Kind    ExecutionKind
	Returns []Return
}

// Approval values besides a delegation class name.
const (
	ApprovalNone   = "none"
	ApprovalPerson = "person"
)

// Action is something an agent may do, declared by a capability.
type Action struct {
	Name          string
	Description   string
	Params        []Param
	Preconditions []engine.Literal
	Bindings      []Binding
	Effects       []Effect
	Execution     *Execution
	Approval      string // ApprovalNone, ApprovalPerson, or a delegation class

	// Direct marks the direct Action of a locked Tool, declared by the built-in release
	// of direct Actions rather than by a capability: it runs only in an exploration Case
	// or a Case whose Case Type opts in ([CaseType.DirectActions]).
	Direct bool
}

// SourceRequirement is a Source a capability needs: a type, the predicates it may attest
// (Words) and the tier its facts take.
type SourceRequirement struct {
	Name  string
	Type  string // file, http, db or mcp
	Words []string
	Tier  contract.Tier
}
