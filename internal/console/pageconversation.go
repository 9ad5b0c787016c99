package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
)

// Bounds of a conversation as the pages show it: it reads like a conversation, each
// tool call's arguments as a small table and each answer as a sentence, and any long
// JSON behind a closed disclosure (docs/console.md, "An Agent's page").
const (
	// maxInlineJSON is the most characters of JSON a page shows outside a disclosure in
	// one stretch of text: a longer run goes behind "the raw text".
	maxInlineJSON = 200
	// maxArgShown is the most characters of one argument's value in a call's table.
	maxArgShown = 160
	// maxArgRows is the most arguments a call's table lists; the rest are in its raw JSON.
	maxArgRows = 12
	// maxPlainShown is the most characters of a tool answer that is not JSON shown
	// outside its disclosure.
	maxPlainShown = 300
	// maxResultFields is the most fields of an answer's result its summary names, and
	// maxFieldShown the most characters of each one's value: a summary line, not a dump.
	maxResultFields = 6
	maxFieldShown   = 60
)

// argRow is one argument of a tool call, or one field of an answer's result: its name
// and its value, a string as it is and anything else as compact JSON, cut to fit.
type argRow struct{ Name, Value string }

// callTurn is one tool call as a page shows it: its arguments as a table (the JSON
// behind a disclosure), its answer summarised, and the Operation it became as the strip
// shows it now.
type callTurn struct {
	ID, Name string
	Args     []argRow
	More     int    // arguments left out of Args
	Raw      string // the arguments, indented
	Result   *resultTurn
	Op       *opView
}

// resultTurn is one tool answer summarised: accepted or refused with its code, what its
// result says, the strip of Operations it carried and how it sent the View; Raw holds
// it whole (or cut at the page's bound), for its disclosure.
type resultTurn struct {
	CallID   string
	IsError  bool
	Known    bool // the answer is the gateway's object (docs/mcp.md, "Result shape")
	Accepted bool
	Code     string
	Teaching string
	Fields   []argRow // the result's fields, "changes" said as Board facts changed
	Strip    []stripItem
	View     string // how the answer sent the View; "" when it sent none
	Text     string // an answer that is not JSON, or the runtime's note on it, cut
	Raw      string
	Size     int // bytes of the answer as the model was shown it
}

// stripItem is one entry of the strip of Operations an answer carried.
type stripItem struct{ Label, State string }

// newCallTurn prepares call for a page.
func newCallTurn(c callView) callTurn {
	t := callTurn{ID: c.ID, Name: c.Name, Raw: indentJSON(c.Arguments)}
	t.Args, t.More = argRows(c.Arguments)
	return t
}

// argRows lists the members of a JSON object in their order, at most maxArgRows, and
// how many were left out. Arguments that are not an object are one row named "value".
func argRows(raw json.RawMessage) ([]argRow, int) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if len(bytes.TrimSpace(raw)) == 0 {
			return nil, 0
		}
		return []argRow{{"value", shownValue(raw)}}, 0
	}
	var rows []argRow
	more := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if len(rows) == maxArgRows {
			more++
			continue
		}
		rows = append(rows, argRow{key, shownValue(v)})
	}
	return rows, more
}

// shownValue is a JSON value as a table cell shows it: a string as it is, anything else
// compact, cut at maxArgShown characters.
func shownValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return cut(s, maxArgShown)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return cut(string(v), maxArgShown)
	}
	return cut(buf.String(), maxArgShown)
}

// newResultTurn summarises r, whose Content is the answer as the model was shown it;
// maxRaw bounds the raw text kept for the disclosure, 0 for no bound.
func newResultTurn(r resultView, maxRaw int) *resultTurn {
	t := &resultTurn{CallID: r.CallID, IsError: r.IsError, Size: len(r.Content)}
	t.Raw = r.Content
	var tr struct {
		contract.ToolResult
		View json.RawMessage `json:"view"` // read for its presence alone
	}
	if dec := json.NewDecoder(strings.NewReader(r.Content)); dec.Decode(&tr) == nil && !dec.More() {
		t.Known, t.Accepted = true, tr.Accepted
		t.Code, t.Teaching = string(tr.ErrorCode), tr.Teaching
		t.Fields = resultFields(tr.Result)
		for _, e := range tr.Operations {
			t.Strip = append(t.Strip, stripItem{Label: e.Label, State: string(e.State)})
		}
		switch {
		case len(tr.View) > 0 && string(tr.View) != "null":
			t.View = "the View in full"
		case tr.ViewDelta != nil:
			t.View = "what changed in the View"
		case tr.ViewUnchanged != (contract.Digest{}):
			t.View = "the View unchanged"
		}
		t.Raw = indentJSON(json.RawMessage(r.Content))
	} else {
		t.Text = plainAnswer(r.Content)
	}
	if maxRaw > 0 && len(t.Raw) > maxRaw {
		t.Raw = t.Raw[:utf8Cut(t.Raw, maxRaw)] + "…"
	}
	return t
}

// resultFields lists the top-level fields of an answer's result, the Board facts a
// batch added (its "nodeIds") and an Action changed (its "changes") said as counts.
func resultFields(raw json.RawMessage) []argRow {
	if len(raw) == 0 {
		return nil
	}
	var ids struct {
		NodeIDs []string `json:"nodeIds"`
	}
	if json.Unmarshal(raw, &ids) != nil {
		ids.NodeIDs = nil // a result that is not an object has no node ids
	}
	rows, more := argRows(raw)
	out := make([]argRow, 0, len(rows))
	for _, r := range rows {
		if len(out) == maxResultFields {
			more++
			continue
		}
		r.Value = cut(r.Value, maxFieldShown)
		switch r.Name {
		case "changes":
			r.Name = "Board facts changed"
		case "nodeIds":
			if ids.NodeIDs != nil {
				r = argRow{"facts added", strconv.Itoa(len(ids.NodeIDs))}
			}
		}
		out = append(out, r)
	}
	if more > 0 {
		out = append(out, argRow{"and", strconv.Itoa(more) + " more fields in the raw answer"})
	}
	return out
}

// plainAnswer is what a page shows of an answer that is not one JSON object: the
// runtime's note when it cut the answer ("[docket: output cut: …]"), else the text when
// it carries little JSON, cut at maxPlainShown; "" leaves it to the disclosure.
func plainAnswer(s string) string {
	if i := strings.LastIndex(s, "\n[docket:"); i >= 0 {
		return cut(strings.TrimSpace(s[i:]), maxPlainShown)
	}
	if jsonChars(s) > maxInlineJSON {
		return ""
	}
	return cut(s, maxPlainShown)
}

// shownText is a message's text as a page shows it. When it holds more than
// maxInlineJSON characters of JSON, each outcome the runtime delivered as a line of JSON
// (with its call's id and state) is put in words, and if that is not enough every other
// line with JSON is named by its size. raw is the whole text, for a disclosure, when
// anything was left out; "" when nothing was.
func shownText(text string) (shown, raw string) {
	if jsonChars(text) <= maxInlineJSON {
		return text, ""
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if w, ok := outcomeLine(l); ok {
			lines[i] = w
		}
	}
	if shown = strings.Join(lines, "\n"); jsonChars(shown) <= maxInlineJSON {
		return shown, text
	}
	for i, l := range lines {
		if n := jsonChars(l); n > 0 {
			lines[i] = fmt.Sprintf("(%d characters of JSON; see the raw text)", n)
		}
	}
	if shown = strings.Join(lines, "\n"); jsonChars(shown) > maxInlineJSON { // JSON across lines
		shown = "(the text holds JSON; see the raw text)"
	}
	return shown, text
}

// outcomeLine says in words one outcome the runtime delivered to the model as a line of
// JSON (a strip entry with its call's id); ok is false for any other line.
func outcomeLine(l string) (string, bool) {
	var o struct {
		CallID string `json:"callId"`
		contract.OperationEntry
	}
	if !strings.HasPrefix(strings.TrimSpace(l), "{") || json.Unmarshal([]byte(l), &o) != nil || o.CallID == "" || o.State == "" {
		return "", false
	}
	s := "Outcome of " + o.CallID + ": " + o.Label + " " + string(o.State)
	if o.ReasonCode != "" {
		s += " (" + string(o.ReasonCode) + ")"
	}
	if o.Reason != "" {
		s += " — " + cut(o.Reason, maxArgShown)
	}
	return s, true
}

// jsonChars is how many characters of s are JSON: each run from a '{' or '[' that opens
// an object or array to the bracket that closes it, or to the end of s when none does (a
// cut answer), summed. The browser tests measure each element of a page the same way.
func jsonChars(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if (s[i] != '{' && s[i] != '[') || !opensJSON(s[i:]) {
			continue
		}
		end := closing(s, i)
		n += utf8.RuneCountInString(s[i:end])
		i = end - 1
	}
	return n
}

// opensJSON reports whether s, which starts with '{' or '[', starts a JSON object or
// array rather than prose in brackets: what follows the bracket is a key, a value or
// its close.
func opensJSON(s string) bool {
	rest := strings.TrimLeft(s[1:], " \t\r\n")
	if rest == "" {
		return false
	}
	c := rest[0]
	if s[0] == '{' {
		return c == '"' || c == '}'
	}
	return c == '"' || c == '{' || c == '[' || c == ']' || c == '-' || (c >= '0' && c <= '9') ||
		strings.HasPrefix(rest, "true") || strings.HasPrefix(rest, "false") || strings.HasPrefix(rest, "null")
}

// closing is the index just past the bracket that closes the one at s[i], skipping
// strings, or len(s) when none does.
func closing(s string, i int) int {
	depth, inString := 0, false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case inString && c == '\\':
			j++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// utf8Cut is the length of the longest prefix of s no longer than n bytes that ends on
// a character's boundary.
func utf8Cut(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
