package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// OpKind names an ApplyBatch operation.
type OpKind string

// Operations of ApplyBatch.
const (
	OpAssertFact      OpKind = "assert_fact"      // atom: a ground fact
	OpAddAxiom        OpKind = "add_axiom"        // rule: a rule in JSON head/body form
	OpDeclareGoal     OpKind = "declare_goal"     // atom: a goal, a pattern that may hold later
	OpRetractNode     OpKind = "retract_node"     // nodeId: a fact, rule or goal to remove
	OpReviseFact      OpKind = "revise_fact"      // nodeId + atom: replace a fact
	OpDeriveAggregate OpKind = "derive_aggregate" // rule + aggregate: an aggregate rule
)

var opKinds = []OpKind{OpAssertFact, OpAddAxiom, OpDeclareGoal, OpRetractNode, OpReviseFact, OpDeriveAggregate}

// Aggregate names the aggregated argument of a derive_aggregate rule: the head argument
// Into receives Function (count, sum, min or max) over the body variable Of, grouped by
// the head's other variables.
type Aggregate struct {
	Function string `json:"function"`
	Of       string `json:"of"`
	Into     string `json:"into"`
}

// Operation is one ApplyBatch operation. Which fields it takes depends on Op; see the
// OpKind constants. NodeID is optional when creating a node (the Board fills it
// deterministically) and required for retract_node and revise_fact. CaseID makes the new
// node local to an exploration Case.
type Operation struct {
	Op        OpKind     `json:"op"`
	NodeID    string     `json:"nodeId,omitempty"`
	CaseID    CaseID     `json:"caseId,omitempty"`
	Atom      *Atom      `json:"atom,omitempty"`
	Rule      *Rule      `json:"rule,omitempty"`
	Aggregate *Aggregate `json:"aggregate,omitempty"`
}

// Batch is the input of ApplyBatch: operations applied atomically, all or none.
type Batch struct {
	Operations []Operation `json:"operations"`
}

// Bounds of a Batch. They keep one call small enough to validate, apply and undo quickly.
const (
	MaxBatchBytes  = 1 << 20 // bytes of one encoded batch
	MaxBatchOps    = 256     // operations in one batch
	MaxAtomArgs    = 64      // arguments of one atom
	MaxRuleBody    = 16      // literals in one rule body
	MaxStringBytes = 4096    // bytes of one string value
	MaxNameBytes   = 128     // bytes of a predicate or argument name
	MaxNodeIDBytes = 128     // bytes of a node id
)

// hostMetadata are fields only the host sets. A model that sends one is
// refused by name, so that it learns the field is not its to send.
var hostMetadata = []string{
	"_meta", "requestId", "request_id", "admission", "audience", "agentId", "agent_id",
	"focusedRoots", "boardRevision", "affectedCases", "principal", "createdBy", "tier",
	"operationId", "ordinal", "idempotencyKey",
}

// DecodeBatch decodes and checks the shape of an ApplyBatch request strictly: unknown
// fields, host metadata fields, trailing data and anything over the bounds above are
// refused with a code and a teaching sentence. It checks shape only; the Board checks
// meaning (node ids, Cases, rule safety).
func DecodeBatch(data []byte) (Batch, error) {
	if len(data) > MaxBatchBytes {
		return Batch{}, Errorf(CodeBatchTooLarge, "the batch is %d bytes, over the %d-byte bound; split it into several batches", len(data), MaxBatchBytes)
	}
	if err := checkStrict(data, reflect.TypeFor[Batch]()); err != nil {
		return Batch{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Batch
	if err := dec.Decode(&b); err != nil {
		return Batch{}, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Batch{}, Errorf(CodeInvalidArgument, "the batch has data after its closing brace; send exactly one JSON object")
	}
	if err := b.Validate(); err != nil {
		return Batch{}, err
	}
	return b, nil
}

func decodeError(err error) error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	msg := err.Error()
	if i := strings.Index(msg, "unknown field "); i >= 0 {
		name := strings.Trim(msg[i+len("unknown field "):], `"`)
		if slices.Contains(hostMetadata, name) {
			return &Error{Code: CodeHostMetadata, Err: err, Teaching: "the field " + quoteShort(name) +
				" is host metadata that only Docket sets; remove it from the call"}
		}
		return &Error{Code: CodeUnknownField, Err: err, Teaching: "the field " + quoteShort(name) +
			" is not part of ApplyBatch; use only op, nodeId, caseId, atom, rule and aggregate in an operation"}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		return &Error{Code: CodeInvalidArgument, Err: err, Teaching: "the field " + quoteShort(typ.Field) +
			" has the wrong JSON type; see the ApplyBatch schema"}
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &Error{Code: CodeInvalidArgument, Err: err, Teaching: "the batch is not valid JSON; send one object {\"operations\": [...]}"}
	}
	return &Error{Code: CodeInvalidArgument, Err: err, Teaching: "the batch could not be read; send one object {\"operations\": [...]}"}
}

func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + s + `"`
}

// Validate checks the shape of every operation. The error is an *OpError naming the
// first failing operation, wrapping an *Error.
func (b Batch) Validate() error {
	if len(b.Operations) == 0 {
		return Errorf(CodeInvalidArgument, "the batch has no operations; send at least one in \"operations\"")
	}
	if len(b.Operations) > MaxBatchOps {
		return Errorf(CodeBatchTooLarge, "the batch has %d operations, over the bound of %d; split it into several batches", len(b.Operations), MaxBatchOps)
	}
	for i, op := range b.Operations {
		if err := op.Validate(); err != nil {
			return NewOpError(i, op.Op, err)
		}
	}
	return nil
}

// Validate checks that op has the fields its kind takes and no others, and that they are
// within bounds.
func (op Operation) Validate() error {
	if !slices.Contains(opKinds, op.Op) {
		return Errorf(CodeInvalidArgument, "the op %s is unknown; use assert_fact, add_axiom, declare_goal, retract_node, revise_fact or derive_aggregate", quoteShort(string(op.Op)))
	}
	need := map[OpKind]string{ // fields, in a fixed order: n nodeId, a atom, r rule, g aggregate
		OpAssertFact: "a", OpAddAxiom: "r", OpDeclareGoal: "a", OpRetractNode: "n",
		OpReviseFact: "na", OpDeriveAggregate: "rg",
	}[op.Op]
	optional := map[OpKind]string{OpAssertFact: "n", OpAddAxiom: "n", OpDeclareGoal: "n", OpDeriveAggregate: "n"}[op.Op]
	has := map[byte]bool{'n': op.NodeID != "", 'a': op.Atom != nil, 'r': op.Rule != nil, 'g': op.Aggregate != nil}
	names := map[byte]string{'n': "nodeId", 'a': "atom", 'r': "rule", 'g': "aggregate"}
	for _, f := range []byte("narg") {
		want := strings.IndexByte(need, f) >= 0
		if want && !has[f] {
			return Errorf(CodeInvalidArgument, "%s needs %q; add it", op.Op, names[f])
		}
		if has[f] && !want && strings.IndexByte(optional, f) < 0 {
			return Errorf(CodeInvalidArgument, "%s takes no %q; remove it", op.Op, names[f])
		}
	}
	if op.CaseID != "" && (op.Op == OpRetractNode || op.Op == OpReviseFact) {
		return Errorf(CodeInvalidArgument, "%s takes no \"caseId\": the node keeps the Case it was created in; remove it", op.Op)
	}
	if op.NodeID != "" && !ValidNodeID(op.NodeID) {
		return Errorf(CodeInvalidArgument, "the nodeId %s is not valid; use 1 to %d letters, digits, '-', '_', '.', ':', '/' or '#'", quoteShort(op.NodeID), MaxNodeIDBytes)
	}
	if op.Atom != nil {
		if err := checkAtom(op.Atom.Predicate, op.Atom.Args); err != nil {
			return err
		}
	}
	if op.Rule != nil {
		if err := checkAtom(op.Rule.Head.Predicate, op.Rule.Head.Args); err != nil {
			return err
		}
		if len(op.Rule.Body) == 0 {
			return Errorf(CodeInvalidArgument, "the rule for %s has an empty body; assert a fact instead, or add body literals", op.Rule.Head.Predicate)
		}
		if len(op.Rule.Body) > MaxRuleBody {
			return Errorf(CodeBatchTooLarge, "the rule for %s has %d body literals, over the bound of %d; split it into smaller rules", op.Rule.Head.Predicate, len(op.Rule.Body), MaxRuleBody)
		}
		for _, l := range op.Rule.Body {
			if err := checkAtom(l.Predicate, l.Args); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkAtom(pred string, args Args) error {
	if pred == "" || len(pred) > MaxNameBytes {
		return Errorf(CodeInvalidArgument, "an atom has no predicate or one over %d bytes; name it with lower-case letters, digits and _", MaxNameBytes)
	}
	if len(args) > MaxAtomArgs {
		return Errorf(CodeBatchTooLarge, "%s has %d arguments, over the bound of %d", quoteShort(pred), len(args), MaxAtomArgs)
	}
	for name, v := range args {
		if len(name) > MaxNameBytes {
			return Errorf(CodeInvalidArgument, "an argument name of %s is over %d bytes; shorten it", quoteShort(pred), MaxNameBytes)
		}
		if v.IsZero() {
			return Errorf(CodeInvalidArgument, "argument %s of %s has no value; give a string, number or boolean", quoteShort(name), quoteShort(pred))
		}
		if len(v.Str()) > MaxStringBytes {
			return Errorf(CodeBatchTooLarge, "argument %s of %s is %d bytes, over the bound of %d; keep large content in an artifact and refer to it", quoteShort(name), quoteShort(pred), len(v.Str()), MaxStringBytes)
		}
	}
	return nil
}

// ValidNodeID reports whether s may name a node: 1 to [MaxNodeIDBytes] letters, digits,
// and '-', '_', '.', ':', '/' or '#' (the characters of capability rule ids).
func ValidNodeID(s string) bool {
	if s == "" || len(s) > MaxNodeIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:/#", c) >= 0) {
			return false
		}
	}
	return true
}

// OpError is the refusal of one operation of a batch: its index (from 0), its kind, and
// the cause, an *Error whose code and teaching the caller reports. Build it with
// [NewOpError].
type OpError struct {
	Index int
	Op    OpKind
	Err   error
}

// NewOpError returns the refusal of operation i: err's code, with a teaching sentence
// that starts by naming the operation, so that the caller knows which one to fix.
func NewOpError(i int, op OpKind, err error) *OpError {
	code, teaching := CodeInvalidArgument, err.Error()
	if e, ok := errors.AsType[*Error](err); ok {
		code, teaching = e.Code, e.Teaching
	}
	prefix := "operation " + strconv.Itoa(i) + " (" + string(op) + "): "
	return &OpError{Index: i, Op: op, Err: &Error{Code: code, Teaching: prefix + teaching, Err: err}}
}

// Error returns the cause's text, whose teaching already names the operation.
func (e *OpError) Error() string { return e.Err.Error() }

// Unwrap returns the cause, so that [CodeOf] and errors.As reach the *Error.
func (e *OpError) Unwrap() error { return e.Err }
