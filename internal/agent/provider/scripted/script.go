// Package scripted provides an agent.Provider that runs no inference: a test double that
// replays a script of tool calls, whose arguments may refer to the results of earlier calls.
package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/docketrun/docket/internal/contract"
)

// Banner is in everything this package prints or describes: a scripted run must never
// pass for a model's work.
const Banner = "scripted model (no inference)"

// Script is a list of turns, one per model turn of a conversation, in order.
//
// In JSON:
//
//	{"turns": [
//	  {"say": "opening the case", "calls": [
//	    {"as": "open", "tool": "OpenCase", "arguments": {"caseType": "calc"}}]},
//	  {"calls": [
//	    {"tool": "QueryBoard", "arguments": {"caseId": {"$ref": "open.result.caseId"}}}]},
//	  {"final": "done"}]}
//
// In TOML, the same as [[turns]] tables with [[turns.calls]] beneath them; a reference is
// written arguments = { caseId = { "$ref" = "open.result.caseId" } }.
//
// A reference is an object whose only key is "$ref". It is replaced, whole, by the value
// found in the result of the call labelled with the path's first segment ("as"), read as
// JSON, following the remaining dot-separated segments: object keys, or array indices.
// The result is what the model was shown for that call (the tool result's text, which is
// the JSON of its structuredContent), so "open.result.root" reads structuredContent.result.root.
// A reference may only name a call of an earlier turn.
//
// A script lists only the model's own turns. When a call comes back waiting (for a
// person's decision, or still running at the hold bound), the provider ends the turn
// itself, saying what it waits on, and plays the next turn of the script once the
// outcome is shown: a script never needs a turn that waits (docs/workbench.md, Wakes).
type Script struct {
	Turns []Turn `json:"turns" toml:"turns"`
}

// Turn is one model turn: tool calls (with optional words before them) or a final answer.
type Turn struct {
	Say   string `json:"say,omitempty" toml:"say"`     // text before the calls
	Calls []Call `json:"calls,omitempty" toml:"calls"` // the tool calls of this turn
	Final string `json:"final,omitempty" toml:"final"` // the final answer; a turn has calls or a final answer
}

// Call is one scripted tool call.
type Call struct {
	As        string          `json:"as,omitempty"` // label for references; [a-z][a-z0-9_]*, unique in the script
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"` // a JSON object; {} when omitted
}

var labelPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) })

// Load reads a script file; a .toml name is read as TOML, anything else as JSON.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &contract.Error{Code: contract.CodeScriptInvalid, Teaching: fmt.Sprintf("the script %s cannot be read; pass an existing file", path), Err: err}
	}
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return ParseTOML(data)
	}
	return ParseJSON(data)
}

// ParseJSON reads a script in JSON strictly: unknown keys are refused.
func ParseJSON(data []byte) (*Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, &contract.Error{Code: contract.CodeScriptInvalid, Teaching: fmt.Sprintf("the script is not valid JSON of the script shape (%v); see the scripted package doc", err), Err: err}
	}
	if dec.More() {
		return nil, contract.Errorf(contract.CodeScriptInvalid, "the script has data after its JSON object; keep one object")
	}
	return &s, s.Validate()
}

// tomlScript is the TOML shape; arguments arrive as tables and are re-encoded as JSON.
type tomlScript struct {
	Turns []struct {
		Say   string `toml:"say"`
		Final string `toml:"final"`
		Calls []struct {
			As        string         `toml:"as"`
			Tool      string         `toml:"tool"`
			Arguments map[string]any `toml:"arguments"`
		} `toml:"calls"`
	} `toml:"turns"`
}

// ParseTOML reads a script in TOML strictly: unknown keys are refused.
func ParseTOML(data []byte) (*Script, error) {
	var ts tomlScript
	md, err := toml.Decode(string(data), &ts)
	if err != nil {
		return nil, &contract.Error{Code: contract.CodeScriptInvalid, Teaching: fmt.Sprintf("the script is not valid TOML (%v); see the scripted package doc", err), Err: err}
	}
	var keys []string
	for _, k := range md.Undecoded() {
		// Keys inside arguments land in a map and count as decoded, whatever toml says.
		if len(k) > 3 && k[0] == "turns" && k[1] == "calls" && k[2] == "arguments" {
			continue
		}
		keys = append(keys, k.String())
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return nil, contract.Errorf(contract.CodeScriptInvalid, "the script has unknown keys %s; turns take say, calls and final, calls take as, tool and arguments", strings.Join(keys, ", "))
	}
	var s Script
	for _, tt := range ts.Turns {
		t := Turn{Say: tt.Say, Final: tt.Final}
		for _, tc := range tt.Calls {
			c := Call{As: tc.As, Tool: tc.Tool}
			if tc.Arguments != nil {
				raw, err := json.Marshal(tc.Arguments)
				if err != nil {
					return nil, &contract.Error{Code: contract.CodeScriptInvalid, Teaching: fmt.Sprintf("the arguments of %s cannot be written as JSON; use strings, numbers, booleans, arrays and tables", tc.Tool), Err: err}
				}
				c.Arguments = raw
			}
			t.Calls = append(t.Calls, c)
		}
		s.Turns = append(s.Turns, t)
	}
	return &s, s.Validate()
}

// Validate checks what can be checked before a run: every turn has calls or a final
// answer, never both; labels are well formed and unique; arguments are objects; and
// every reference names a call of an earlier turn.
func (s *Script) Validate() error {
	if len(s.Turns) == 0 {
		return contract.Errorf(contract.CodeScriptInvalid, "the script has no turns; add at least one")
	}
	labels := map[string]int{} // label -> turn
	for ti, t := range s.Turns {
		switch {
		case len(t.Calls) == 0 && t.Final == "":
			return contract.Errorf(contract.CodeScriptInvalid, "turn %d has neither calls nor a final answer; give it one", ti+1)
		case len(t.Calls) > 0 && t.Final != "":
			return contract.Errorf(contract.CodeScriptInvalid, "turn %d has calls and a final answer; a turn ends the run or calls tools, so split it", ti+1)
		}
		for ci, c := range t.Calls {
			where := fmt.Sprintf("turn %d call %d", ti+1, ci+1)
			if c.Tool == "" {
				return contract.Errorf(contract.CodeScriptInvalid, "%s names no tool; set tool", where)
			}
			if len(c.Arguments) > 0 {
				v, err := decode(c.Arguments)
				if _, ok := v.(map[string]any); err != nil || !ok {
					return contract.Errorf(contract.CodeScriptInvalid, "%s has arguments that are not an object; write them as an object, {} when there are none", where)
				}
				if err := checkRefs(v, where, labels); err != nil {
					return err
				}
			}
		}
		// Labels become visible to later turns only, since a turn's calls are answered together.
		for ci, c := range t.Calls {
			if c.As == "" {
				continue
			}
			if !labelPattern().MatchString(c.As) {
				return contract.Errorf(contract.CodeScriptInvalid, "turn %d call %d has label %q; labels are lower case letters, digits and _, starting with a letter", ti+1, ci+1, c.As)
			}
			if _, dup := labels[c.As]; dup {
				return contract.Errorf(contract.CodeScriptInvalid, "label %q is used twice; give each call its own label", c.As)
			}
			labels[c.As] = ti
		}
	}
	return nil
}

// checkRefs finds every reference in v and checks that its label is already defined.
func checkRefs(v any, where string, labels map[string]int) error {
	switch v := v.(type) {
	case map[string]any:
		if ref, isRef, err := refOf(v); isRef {
			if err != nil {
				return contract.Errorf(contract.CodeScriptInvalid, "%s: %s", where, err)
			}
			label, _, _ := strings.Cut(ref, ".")
			if _, ok := labels[label]; !ok {
				return contract.Errorf(contract.CodeScriptInvalid, "%s refers to %q, which no call of an earlier turn is labelled; label that call with \"as\": %q", where, ref, label)
			}
			return nil
		}
		for _, e := range v {
			if err := checkRefs(e, where, labels); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkRefs(e, where, labels); err != nil {
				return err
			}
		}
	}
	return nil
}

// refOf reports whether m is a reference ({"$ref": "label.path"}), and checks its shape.
func refOf(m map[string]any) (ref string, isRef bool, err error) {
	raw, ok := m["$ref"]
	if !ok {
		return "", false, nil
	}
	ref, ok = raw.(string)
	if !ok || len(m) != 1 {
		return "", true, fmt.Errorf(`a reference is an object with one key, "$ref", whose value is a string like "open.result.root"`)
	}
	for _, seg := range strings.Split(ref, ".") {
		if seg == "" {
			return "", true, fmt.Errorf("reference %q has an empty segment; write label.field.field", ref)
		}
	}
	return ref, true, nil
}

// decode reads JSON with numbers kept exact.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}
