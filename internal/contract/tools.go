package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
)

// The six tools of the MCP gateway. There are no others.
const (
	ToolOpenCase     = "OpenCase"
	ToolApplyBatch   = "ApplyBatch"
	ToolApplyAction  = "ApplyAction"
	ToolCloseCase    = "CloseCase"
	ToolQueryBoard   = "QueryBoard"
	ToolReadArtifact = "ReadArtifact"
)

// OpenCaseInput is the input of OpenCase.
type OpenCaseInput struct {
	CaseType    string `json:"caseType" doc:"an installed Case Type, as listed in view.caseTypes"`
	BusinessKey Args   `json:"businessKey,omitempty" doc:"the Case Type's key arguments (view.caseTypes[].keyArgs)"`
}

// ApplyBatchInput is the input of ApplyBatch: the [Batch] itself.
type ApplyBatchInput = Batch

// ApplyActionInput is the input of ApplyAction.
type ApplyActionInput struct {
	CaseID CaseID `json:"caseId,omitempty" doc:"the Case the Action works in; omit for a Case-free Action"`
	Action string `json:"action" doc:"an Action listed in view.actions"`
	Params Args   `json:"params,omitempty" doc:"the Action's parameters; never those listed as bound"`
}

// CloseCaseInput is the input of CloseCase.
type CloseCaseInput struct {
	CaseID      CaseID      `json:"caseId" doc:"the Case to close"`
	Disposition Disposition `json:"disposition" doc:"completed, cancelled, failed, abandoned or superseded" enum:"completed,cancelled,failed,abandoned,superseded"`
	Reason      string      `json:"reason,omitempty" doc:"why; required for every disposition but completed"`
}

// QueryBoardInput is the input of QueryBoard. With no pattern it returns the View alone.
type QueryBoardInput struct {
	Pattern *Atom    `json:"pattern,omitempty" doc:"facts to match; \"?x\" arguments are variables"`
	Focus   []CaseID `json:"focus,omitempty" doc:"Cases to focus in the View, the first one primary"`
	Limit   int      `json:"limit,omitempty" doc:"at most this many matches (default and maximum 50)"`
	// FullView asks for the View in full even when it did not change: a client whose
	// context lost the View it was last sent (viewUnchanged) gets it back.
	FullView bool `json:"fullView,omitempty" doc:"send the View in full even if it is unchanged, when you no longer have it"`
}

// ReadArtifactInput is the input of ReadArtifact.
type ReadArtifactInput struct {
	Ref    string `json:"ref" doc:"an artifact reference art_… from an earlier result"`
	Offset int64  `json:"offset,omitempty" doc:"byte offset to start from"`
	Limit  int    `json:"limit,omitempty" doc:"bytes to read (default and maximum 16384)"`
}

// MaxArtifactFragment is the most bytes one ReadArtifact returns.
const MaxArtifactFragment = 16 << 10

// MaxToolInputBytes bounds the arguments of one tool call.
const MaxToolInputBytes = MaxBatchBytes

// ToolSpec describes one tool: its name, what it does, its input type and whether it
// writes (every tool but QueryBoard and ReadArtifact becomes an Operation).
type ToolSpec struct {
	Name        string
	Description string
	Write       bool
	input       reflect.Type
}

// InputSchema returns the JSON Schema of the tool's input, generated from its Go type.
func (s ToolSpec) InputSchema() map[string]any { return schemaOf(s.input) }

// Tools returns the six tools, in the order they are listed to a client.
func Tools() []ToolSpec {
	return []ToolSpec{
		{ToolOpenCase, "Open a Case of an installed Case Type for a business key. The result focuses the new Case.", true, reflect.TypeFor[OpenCaseInput]()},
		{ToolApplyBatch, "Apply Board operations atomically (assert_fact, add_axiom, declare_goal, retract_node, revise_fact, derive_aggregate): all land or none.", true, reflect.TypeFor[ApplyBatchInput]()},
		{ToolApplyAction, "Apply an Action the View lists as ready. Bound parameters are filled by the Board; do not pass them.", true, reflect.TypeFor[ApplyActionInput]()},
		{ToolCloseCase, "Close a Case. completed succeeds only when its acceptance is derived and certified.", true, reflect.TypeFor[CloseCaseInput]()},
		{ToolQueryBoard, "Read the Board: facts matching a pattern and the View. Never changes anything.", false, reflect.TypeFor[QueryBoardInput]()},
		{ToolReadArtifact, "Read a bounded fragment of an artifact (art_…) an earlier result referred to.", false, reflect.TypeFor[ReadArtifactInput]()},
	}
}

// Tool returns the spec of the tool named name.
func Tool(name string) (ToolSpec, bool) {
	for _, s := range Tools() {
		if s.Name == name {
			return s, true
		}
	}
	return ToolSpec{}, false
}

// DecodeToolInput decodes the arguments of a call to tool strictly: an unknown tool, an
// unknown field, a host metadata field (refused by name), trailing data or input over
// [MaxToolInputBytes] is refused with a code and a teaching sentence. It returns a
// pointer to the tool's input type (for ApplyBatch, a *Batch already validated).
func DecodeToolInput(tool string, data []byte) (any, error) {
	spec, ok := Tool(tool)
	if !ok {
		return nil, Errorf(CodeNoSuchTool, "there is no tool %s; use OpenCase, ApplyBatch, ApplyAction, CloseCase, QueryBoard or ReadArtifact", quoteShort(tool))
	}
	if len(data) > MaxToolInputBytes {
		return nil, Errorf(CodeBatchTooLarge, "the arguments are %d bytes, over the %d-byte bound; send less in one call", len(data), MaxToolInputBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		data = []byte("{}")
	}
	if tool == ToolApplyBatch {
		b, err := DecodeBatch(data)
		if err != nil {
			return nil, err
		}
		return &b, nil
	}
	// The strict parse's tree serves the check of required fields too, so the
	// arguments are parsed twice (strictly, then decoded), not three times.
	n, err := parseStrict(data)
	if err != nil {
		return nil, err
	}
	if err := walkType(n, spec.input, ""); err != nil {
		return nil, err
	}
	v := reflect.New(spec.input)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return nil, toolDecodeError(tool, spec, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, Errorf(CodeInvalidArgument, "the arguments of %s have data after the closing brace; send exactly one JSON object", tool)
	}
	if err := checkRequired(tool, spec.input, n); err != nil {
		return nil, err
	}
	return v.Interface(), nil
}

func toolDecodeError(tool string, spec ToolSpec, err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "unknown field "); i >= 0 {
		name := strings.Trim(msg[i+len("unknown field "):], `"`)
		if slices.ContainsFunc(hostMetadata, func(h string) bool { return strings.EqualFold(h, name) }) {
			return &Error{Code: CodeHostMetadata, Err: err, Teaching: "the field " + quoteShort(name) +
				" is host metadata that only Docket sets; remove it from the call"}
		}
		return &Error{Code: CodeUnknownField, Err: err, Teaching: "the field " + quoteShort(name) +
			" is not part of " + tool + "; use only " + strings.Join(fieldNames(spec.input), ", ")}
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return &Error{Code: CodeInvalidArgument, Err: err, Teaching: "the field " + quoteShort(typ.Field) +
			" of " + tool + " has the wrong JSON type; see the tool's input schema"}
	}
	return &Error{Code: CodeInvalidArgument, Err: err, Teaching: "the arguments of " + tool + " are not one JSON object; see the tool's input schema"}
}

// checkRequired refuses input that lacks a field without omitempty; n is the arguments'
// strict parse, whose keys are unique.
func checkRequired(tool string, t reflect.Type, n *jnode) error {
	if n.kind != '{' {
		return Errorf(CodeInvalidArgument, "the arguments of %s are not one JSON object; see the tool's input schema", tool)
	}
	for i := range t.NumField() {
		// jsonField alone, not fields: a field's doc and enum tags are not read here.
		if name, required, ok := jsonField(t.Field(i)); ok && required && !slices.Contains(n.keys(), name) {
			return Errorf(CodeInvalidArgument, "%s needs the field %s", tool, quoteShort(name))
		}
	}
	return nil
}

// field is one JSON property of a struct type.
type field struct {
	name     string
	required bool
	doc      string
	enum     []string
	typ      reflect.Type
}

func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, required, ok := jsonField(f)
		if !ok {
			continue
		}
		fd := field{name: name, required: required, doc: f.Tag.Get("doc"), typ: f.Type}
		if e := f.Tag.Get("enum"); e != "" {
			fd.enum = strings.Split(e, ",")
		}
		out = append(out, fd)
	}
	return out
}

// jsonField is f's JSON property name and whether it is required (its json tag has no
// omitempty); ok is false for a field that is no JSON property.
func jsonField(f reflect.StructField) (name string, required, ok bool) {
	tag := f.Tag.Get("json")
	name, _, _ = strings.Cut(tag, ",")
	if !f.IsExported() || name == "-" {
		return "", false, false
	}
	if name == "" {
		name = f.Name
	}
	return name, !strings.Contains(tag, "omitempty"), true
}

func fieldNames(t reflect.Type) []string {
	var out []string
	for _, f := range fields(t) {
		out = append(out, f.name)
	}
	return out
}

var (
	valueType = reflect.TypeFor[Value]()
	argsType  = reflect.TypeFor[Args]()
)

// schemaOf returns the JSON Schema (draft 2020-12 subset) of t. Objects are closed
// (additionalProperties false), so a client that validates locally refuses what the
// gateway would refuse.
func schemaOf(t reflect.Type) map[string]any {
	switch {
	case t == valueType:
		return map[string]any{"type": []any{"string", "integer", "number", "boolean"}}
	case t == argsType:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(valueType)}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		required := []any{}
		for _, f := range fields(t) {
			s := schemaOf(f.typ)
			if f.doc != "" {
				s["description"] = f.doc
			}
			if f.enum != nil {
				var e []any
				for _, v := range f.enum {
					e = append(e, v)
				}
				s["enum"] = e
			}
			props[f.name] = s
			if f.required {
				required = append(required, f.name)
			}
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}
