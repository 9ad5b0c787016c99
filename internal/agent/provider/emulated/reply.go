package emulated

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// Reply is a parsed emulated reply: a tool call (Tool and Arguments) or a final answer.
type Reply struct {
	Tool      string
	Arguments json.RawMessage // a JSON object; {} when the model sent none
	Final     string
}

// ParseReply reads a model's reply strictly: after surrounding whitespace, and one
// surrounding ``` or ```json fence (which models add even when told not to), it must be
// exactly one JSON object with either "tool" (one of tools) and an optional "arguments"
// object, or "final" with a non-empty string. Anything else is refused with a
// *contract.Error of code [contract.CodeModelReply] whose teaching sentence is fed back to
// the model.
func ParseReply(text string, tools []agent.ToolDef) (Reply, error) {
	body := unfence(strings.TrimSpace(text))
	if body == "" {
		return Reply{}, refuse(`the reply is empty; send {"tool": "NAME", "arguments": {...}} or {"final": "..."}`)
	}
	if body[0] != '{' {
		return Reply{}, refuse(`the reply does not start with a JSON object; send only the object, with no text before it`)
	}
	var raw struct {
		Tool      *string         `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Final     *string         `json:"final"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return Reply{}, refuse(`the object has a key other than "tool", "arguments" and "final"; use only those`)
		}
		return Reply{}, refuse(`the reply is not one valid JSON object (` + clip(err.Error()) + `); check quotes, commas and braces`)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Reply{}, refuse(`there is text after the JSON object; send one object and nothing after it`)
	}
	switch {
	case raw.Tool != nil && raw.Final != nil:
		return Reply{}, refuse(`the object has both "tool" and "final"; send one: a tool call or the final answer`)
	case raw.Final != nil:
		if raw.Arguments != nil {
			return Reply{}, refuse(`a final answer takes no "arguments"; send {"final": "..."}`)
		}
		if strings.TrimSpace(*raw.Final) == "" {
			return Reply{}, refuse(`"final" is empty; put your answer in it`)
		}
		return Reply{Final: *raw.Final}, nil
	case raw.Tool != nil:
		if !slices.ContainsFunc(tools, func(t agent.ToolDef) bool { return t.Name == *raw.Tool }) {
			return Reply{}, refuse(`"` + clip(*raw.Tool) + `" is not a tool; use one of ` + toolNames(tools))
		}
		args := bytes.TrimSpace(raw.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		if !agent.IsObject(args) {
			return Reply{}, refuse(`"arguments" is not a JSON object; send {"tool": "` + *raw.Tool + `", "arguments": {...}}`)
		}
		return Reply{Tool: *raw.Tool, Arguments: json.RawMessage(args)}, nil
	}
	return Reply{}, refuse(`the object has neither "tool" nor "final"; send {"tool": "NAME", "arguments": {...}} or {"final": "..."}`)
}

// unfence removes one surrounding Markdown code fence, if the whole body is fenced.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	inner := s[3 : len(s)-3]
	nl := strings.IndexByte(inner, '\n')
	if nl < 0 {
		return s
	}
	if lang := strings.TrimSpace(inner[:nl]); lang != "" && lang != "json" {
		return s
	}
	return strings.TrimSpace(inner[nl+1:])
}

func refuse(teaching string) error {
	return contract.Errorf(contract.CodeModelReply, "%s", teaching)
}

func toolNames(tools []agent.ToolDef) string {
	if len(tools) == 0 {
		return `none: no tools are offered, so reply {"final": "..."}`
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func clip(s string) string {
	const n = 80
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
