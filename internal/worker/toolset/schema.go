package toolset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// Limits on a schema read from an MCP server: it is outside input.
const (
	MaxSchemaBytes     = 64 << 10 // the JSON of one input or output schema
	MaxSchemaParams    = 64       // properties of one input schema
	maxDescriptionRune = 500      // a param's description is cut to this many characters
)

// Mapping is what an MCP tool's input schema maps to: the params of its manifest entry,
// and the optional properties left out, each with why. A required property that cannot
// be mapped refuses the whole tool instead: the tool could not be called without it.
type Mapping struct {
	Params  map[string]worker.Param `json:"params"`
	Skipped []Skipped               `json:"skipped,omitempty"`
}

// Skipped is an optional property of an input schema that is not a param, and why.
type Skipped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ParamsFromSchema maps a JSON Schema of a tool's input (as an MCP server lists it) to
// manifest params: each property of the top-level object whose type is string, integer,
// number or boolean (alone or with "null"), or an enum of strings, becomes a param of
// that type, required as the schema's "required" says, with its description. A property
// whose name is not a param name (lower-case letters, digits and '_', starting with a
// letter; not "source"), or whose value is an array, an object, a union or a reference, is
// left out when optional and refuses the tool, with tool_schema, when required. Keywords
// that only narrow a value (pattern, minimum, format…) are not kept: the server still
// checks them.
func ParamsFromSchema(schema []byte) (Mapping, error) {
	m := Mapping{Params: map[string]worker.Param{}}
	if len(schema) > MaxSchemaBytes {
		return m, contract.Errorf(contract.CodeToolSchema, "the input schema is over %d bytes; a tool that takes so much cannot be offered as one governed call.", MaxSchemaBytes)
	}
	trimmed := bytes.TrimSpace(schema)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return m, nil // no schema: the tool takes no arguments
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return m, contract.Errorf(contract.CodeToolSchema, "the input schema is not a JSON object; an MCP tool's inputSchema must be one.")
	}
	if t, ok := top["type"]; ok {
		var typ string
		if json.Unmarshal(t, &typ) != nil || typ != "object" {
			return m, contract.Errorf(contract.CodeToolSchema, "the input schema's type is %.40s, not \"object\"; an MCP tool's arguments are an object.", string(t))
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "not", "if"} {
		if _, ok := top[k]; ok {
			return m, contract.Errorf(contract.CodeToolSchema, "the input schema combines schemas with %q; only an object of named scalar properties maps to params.", k)
		}
	}
	var required []string
	if r, ok := top["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			return m, contract.Errorf(contract.CodeToolSchema, "the input schema's \"required\" is not a list of names.")
		}
	}
	var props map[string]json.RawMessage
	if p, ok := top["properties"]; ok && string(bytes.TrimSpace(p)) != "null" {
		if err := json.Unmarshal(p, &props); err != nil {
			return m, contract.Errorf(contract.CodeToolSchema, "the input schema's \"properties\" is not an object.")
		}
	}
	if len(props) > MaxSchemaParams {
		return m, contract.Errorf(contract.CodeToolSchema, "the input schema has %d properties, more than %d; a tool that takes so many cannot be offered as one governed call.", len(props), MaxSchemaParams)
	}
	for _, name := range required {
		if _, ok := props[name]; !ok {
			return m, contract.Errorf(contract.CodeToolSchema, "the input schema requires %.64q, which is not among its properties.", name)
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		req := slices.Contains(required, name)
		p, why := mapProperty(name, props[name])
		if why != "" {
			if req {
				return Mapping{Params: map[string]worker.Param{}}, contract.Errorf(contract.CodeToolSchema, "the tool requires %.64q, and %s; it cannot be offered as a governed call.", name, why)
			}
			m.Skipped = append(m.Skipped, Skipped{Name: name, Reason: why})
			continue
		}
		p.Required = req
		m.Params[name] = p
	}
	return m, nil
}

// mapProperty maps one property, or says why it cannot be mapped.
func mapProperty(name string, raw json.RawMessage) (worker.Param, string) {
	switch {
	case name == worker.ArgSource:
		return worker.Param{}, `"source" is reserved for naming the Source`
	case !isParamName(name):
		return worker.Param{}, "its name is not a param name (lower-case letters, digits and '_', starting with a letter)"
	}
	var prop map[string]json.RawMessage
	if err := json.Unmarshal(raw, &prop); err != nil {
		return worker.Param{}, "its schema is not an object"
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "not", "if"} {
		if _, ok := prop[k]; ok {
			return worker.Param{}, fmt.Sprintf("its schema uses %q, which maps to no single type", k)
		}
	}
	var p worker.Param
	if d, ok := prop["description"]; ok {
		var s string
		if json.Unmarshal(d, &s) == nil {
			p.Description = cut(s, maxDescriptionRune)
		}
	}
	typ, why := scalarType(prop)
	if why != "" {
		return worker.Param{}, why
	}
	p.Type = typ
	return p, ""
}

// scalarType is the param type of a property's schema, or why it has none.
func scalarType(prop map[string]json.RawMessage) (string, string) {
	t, ok := prop["type"]
	if !ok {
		if e, ok := prop["enum"]; ok {
			var vals []string
			if json.Unmarshal(e, &vals) == nil && len(vals) > 0 {
				return worker.ParamString, ""
			}
			return "", "its enum is not a list of strings"
		}
		return "", "its schema states no type"
	}
	var types []string
	var one string
	if json.Unmarshal(t, &one) == nil {
		types = []string{one}
	} else if json.Unmarshal(t, &types) != nil {
		return "", "its type is neither a name nor a list of names"
	}
	types = slices.DeleteFunc(types, func(s string) bool { return s == "null" })
	if len(types) != 1 {
		return "", fmt.Sprintf("its type %s is not one scalar type", strings.Join(types, " or "))
	}
	switch types[0] {
	case "string":
		return worker.ParamString, ""
	case "integer":
		return worker.ParamInteger, ""
	case "number":
		return worker.ParamNumber, ""
	case "boolean":
		return worker.ParamBoolean, ""
	case "array", "object":
		return "", fmt.Sprintf("it takes an %s, and a param is one string, integer, number or boolean", types[0])
	}
	return "", fmt.Sprintf("its type %.20q is not a JSON Schema type", types[0])
}

// ReturnsFromSchema is the returns of a tool whose output schema declares structured rows:
// the property names of {"rows": [{…}]}'s items, or of the object itself; sorted. It is
// nil when the schema declares no properties, or cannot be read: no mapping is offered
// then, which refuses nothing.
func ReturnsFromSchema(schema []byte) []string {
	if len(schema) == 0 || len(schema) > MaxSchemaBytes {
		return nil
	}
	props := properties(schema)
	if rows, ok := props["rows"]; ok && len(props) == 1 {
		var arr map[string]json.RawMessage
		if json.Unmarshal(rows, &arr) == nil {
			if items, ok := arr["items"]; ok {
				props = properties(items)
			}
		}
	}
	if len(props) == 0 {
		return nil
	}
	out := make([]string, 0, len(props))
	for name := range props {
		if utf8.ValidString(name) && name != "" && len(name) <= 128 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// properties returns the "properties" of an object schema, or nil.
func properties(schema []byte) map[string]json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(top["properties"], &props) != nil {
		return nil
	}
	return props
}

// isParamName reports whether s is a manifest param name.
func isParamName(s string) bool {
	return isPredicate(s) && len(s) <= 64
}

// cut returns s cut to at most n characters, on a character boundary.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
