package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Error codes of strict JSON: input that two JSON readers would read differently.
const (
	CodeDuplicateKey   Code = "duplicate_key"    // an object names one key twice
	CodeCaseVariantKey Code = "case_variant_key" // two keys, or a key and a field, that differ only in letter case
	CodeNullField      Code = "null_field"       // null where the field takes a string, number, boolean or object
	CodeInvalidUTF8    Code = "invalid_utf8"     // bytes that are not UTF-8, or an escaped lone surrogate
)

// MaxJSONDepth bounds how deeply strict JSON nests.
const MaxJSONDepth = 512

// CheckJSON refuses JSON text that two readers could read differently: anything but
// exactly one JSON value, invalid UTF-8 or an escaped lone surrogate (Go reads either as
// U+FFFD), a key named twice in one object (Go keeps the last, other readers the first),
// two keys of one object that differ only in letter case (Go matches fields by either),
// and a number no float64 holds. Every refusal is an *Error with a code and a teaching
// sentence that names where.
func CheckJSON(b []byte) error {
	_, err := (&strictParser{b: b, check: true}).parse()
	return err
}

// DecodeStrict decodes exactly one JSON value from b into v, and refuses what [CheckJSON]
// refuses, an unknown field, a key that matches a field only when letter case is ignored
// ({"ACTION": …} for "action"), and null for a field that cannot be absent (a string,
// number, boolean or struct: Go leaves it unchanged where other readers see null). Null
// stays allowed where Go reads it as absent: pointers, slices, maps, interfaces and
// json.RawMessage.
func DecodeStrict(b []byte, v any) error {
	if d, ok := v.(treeDecoder); ok {
		n, err := parseStrict(b)
		if err != nil {
			return err
		}
		return d.decodeTree(b, n)
	}
	return decodeStrict(b, v)
}

// treeDecoder is a wire type that decodes itself strictly from text DecodeStrict has
// already parsed, so the text is parsed once: through encoding/json its UnmarshalJSON
// would parse it again (every hop body and served row was once parsed two or three
// times: benchmarks/README.md). decodeTree must refuse exactly what DecodeStrict(b, v) without it
// would, with the same error.
type treeDecoder interface {
	decodeTree(b []byte, n *jnode) error
}

// decodeStrict is DecodeStrict without the single-parse path of a [treeDecoder].
func decodeStrict(b []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		if err := CheckJSON(b); err != nil {
			return err
		}
		return decodeJSON(b, v)
	}
	n, err := parseStrict(b)
	if err != nil {
		return err
	}
	return decodeChecked(b, n, v)
}

// decodeChecked decodes b, one JSON value that parsed into n, into v, a pointer, as
// DecodeStrict does after its parse: n is checked against v's type, then decoded.
func decodeChecked(b []byte, n *jnode, v any) error { return decodeNodeText(b, n, b, v) }

// decodeNode is decodeChecked of n, a value inside b, the text it was parsed from.
func decodeNode(b []byte, n *jnode, v any) error {
	return decodeNodeText(b, n, b[n.start:n.end], v)
}

// decodeNodeText decodes n, parsed from b, into v: n is checked against v's type, then
// decoded from the tree, or, in a shape the tree decode leaves to encoding/json, from
// text, n's own text.
func decodeNodeText(b []byte, n *jnode, text []byte, v any) error {
	t := reflect.TypeOf(v).Elem()
	if err := walkType(n, t, ""); err != nil {
		return err
	}
	if decodeFromTree(b, n, v) {
		return nil
	}
	if err := decodeJSON(text, v); err != nil {
		return explainDecode(text, n, t, err)
	}
	return nil
}

// DecodeError is encoding/json's refusal of text that is strict JSON, said as a person
// fixes it: the entry, the line and the fix — `unknown field "adaptor" (did you mean
// "adapter"?) at "tools.acme.calc@1", line 4; its fields are …` — rather than Go's types.
// It carries no code: the caller's (manifest_invalid, vault_invalid, invalid_argument, …)
// says which input it is; Err is encoding/json's own error. It quotes keys and field
// names, never a value.
type DecodeError struct {
	Line int    // the line of the text the refusal is about, from 1
	Text string // the refusal, the line included
	Err  error
}

func (e *DecodeError) Error() string { return e.Text }
func (e *DecodeError) Unwrap() error { return e.Err }

// explainDecode turns encoding/json's err, decoding b (parsed into n) into a t, into a
// *DecodeError when it can place it, else returns it as it is.
func explainDecode(b []byte, n *jnode, t reflect.Type, err error) error {
	if _, isUnknown := strings.CutPrefix(err.Error(), "json: unknown field "); isUnknown {
		if u, ok := findUnknown(n, t, ""); ok {
			text := "unknown field " + quoteShort(u.key)
			if near, ok := Nearest(u.key, u.fields); ok {
				text += fmt.Sprintf(" (did you mean %s?)", quoteShort(near))
			}
			line := lineOf(b, u.at)
			text += fmt.Sprintf(" at %s, line %d; its fields are %s", where(u.path), line, strings.Join(u.fields, ", "))
			return &DecodeError{Line: line, Text: text, Err: err}
		}
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		what := "the value"
		if te.Field != "" {
			what = "the value of " + quoteShort(te.Field)
		}
		line := lineOf(b, int(te.Offset))
		return &DecodeError{Line: line, Err: err,
			Text: fmt.Sprintf("%s, line %d, is a %s, but it takes a %s; write it as one", what, line, jsonWord(te.Value), typeWord(te.Type))}
	}
	return err
}

// unknownKey is the first key of an object that its Go type has no field for.
type unknownKey struct {
	key, path string
	at        int      // offset of the key
	fields    []string // the fields the object takes, sorted
}

// findUnknown finds the first key of n, in text order, that t has no field for, walking as
// walkType does.
func findUnknown(n *jnode, t reflect.Type, path string) (unknownKey, bool) {
	if n == nil || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return unknownKey{}, false
	}
	switch t.Kind() {
	case reflect.Pointer:
		return findUnknown(n, t.Elem(), path)
	case reflect.Slice, reflect.Array:
		if n.kind == '[' {
			for i, k := range n.kids() {
				if u, ok := findUnknown(k, t.Elem(), path+"["+strconv.Itoa(i)+"]"); ok {
					return u, true
				}
			}
		}
	case reflect.Map:
		if n.kind == '{' {
			for i, k := range n.kids() {
				if u, ok := findUnknown(k, t.Elem(), join(path, n.keys()[i])); ok {
					return u, true
				}
			}
		}
	case reflect.Struct:
		if n.kind != '{' {
			return unknownKey{}, false
		}
		fs := jsonFields(t)
		for i, key := range n.keys() {
			ft, ok := fs[key]
			if !ok {
				names := slices.Sorted(maps.Keys(fs))
				return unknownKey{key: key, path: path, at: n.keyAt()[i], fields: names}, true
			}
			if u, ok := findUnknown(n.kids()[i], ft, join(path, key)); ok {
				return u, true
			}
		}
	}
	return unknownKey{}, false
}

// jsonWord names a JSON value's kind as encoding/json reports it ("string", "number", …).
func jsonWord(v string) string {
	switch {
	case v == "bool":
		return "boolean"
	case v == "array":
		return "list"
	case v == "object":
		return "JSON object"
	case strings.HasPrefix(v, "number"):
		return "number"
	}
	return v
}

// typeWord names what a Go type takes, in JSON's words.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice:
		return "list"
	case reflect.Map:
		return "JSON object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	}
	return kindWord(t)
}

// checkStrict is DecodeStrict's check of b before decoding into a t.
func checkStrict(b []byte, t reflect.Type) error {
	n, err := parseStrict(b)
	if err != nil {
		return err
	}
	return walkType(n, t, "")
}

// decodeJSON decodes b, already checked, into v, refusing unknown fields.
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// jnode is one parsed JSON value. A parse makes one per value, so it is kept small: an
// object's or a list's members are apart ([jmembers]), and one field holds a string's
// value or a number's or boolean's text (a node of 136 bytes, three slices and two
// strings, was most of what a parse allocated: benchmarks/README.md).
type jnode struct {
	kind  byte // '{', '[', '"', 'n' (null), 'b' (boolean) or '0' (number)
	start int  // offset of the value in the text
	end   int  // offset just past the value
	m     *jmembers
	str   string  // a string's value; a number's or boolean's text
	num   float64 // a number's value
}

// jmembers are the members of an object (keys, keyAt and kids) or a list (kids); nil
// for an empty one and for any other value.
type jmembers struct {
	keys  []string
	keyAt []int // offset of each key in the text, for refusals that name its line
	kids  []*jnode
}

// keys are an object's keys, in order; nil for any other value.
func (n *jnode) keys() []string {
	if n.m == nil {
		return nil
	}
	return n.m.keys
}

// keyAt are the offsets of an object's keys in the text; nil for any other value.
func (n *jnode) keyAt() []int {
	if n.m == nil {
		return nil
	}
	return n.m.keyAt
}

// kids are an object's values, in the order of its keys, or a list's; nil for any
// other value.
func (n *jnode) kids() []*jnode {
	if n.m == nil {
		return nil
	}
	return n.m.kids
}

// members returns the members of a container, carved from the parse's chunks.
func (p *strictParser) members(keys []string, kids []*jnode, at []int) *jmembers {
	if len(p.memberChunk) == cap(p.memberChunk) {
		p.memberChunk = make([]jmembers, 0, memberChunk)
	}
	m := jmembers{kids: carve(&p.kidChunk, kids)}
	if keys != nil {
		m.keys, m.keyAt = carve(&p.keyChunk, keys), carve(&p.atChunk, at)
	}
	p.memberChunk = append(p.memberChunk, m)
	return &p.memberChunk[len(p.memberChunk)-1]
}

// memberChunk is how many containers' members a parse allocates at once after its
// first chunk.
const memberChunk = 8

type strictParser struct {
	b       []byte
	i       int
	skip    string // a path whose value is only checked for syntax
	lenient int    // > 0 inside that value
	// check is set when the parse only checks the text: it refuses what a parse that
	// builds the tree refuses, but builds none (CheckJSON, CheckRPC: every MCP request).
	check   bool
	scratch jnode // every node of a check
	// path is the path of the value being parsed, built as the parser descends and
	// made a string only for a refusal: every tool call is parsed strictly, and a
	// string per key and list entry was most of what the parse allocated.
	path jpath
	// An object's keys and values, and a list's values, are gathered on these stacks
	// while it is parsed, then carved from chunks shared by the whole parse, as the
	// nodes are: a few allocations a parse rather than several per value.
	keyStack    []string
	atStack     []int
	kidStack    []*jnode
	keyChunk    []string
	atChunk     []int
	kidChunk    []*jnode
	nodeChunk   []jnode
	memberChunk []jmembers
	// The stacks and the path start in these, allocated with the parser: a wire
	// object's keys and path fit.
	keyBuf  [16]string
	atBuf   [16]int
	kidBuf  [16]*jnode
	pathBuf [64]byte
}

// node returns a new node, from the parse's current chunk of them.
func (p *strictParser) node() *jnode {
	if p.check {
		p.scratch = jnode{}
		return &p.scratch
	}
	if len(p.nodeChunk) == cap(p.nodeChunk) {
		p.nodeChunk = make([]jnode, 0, nodeChunk)
	}
	p.nodeChunk = append(p.nodeChunk, jnode{})
	return &p.nodeChunk[len(p.nodeChunk)-1]
}

// nodeChunk is how many nodes a parse allocates at once: a tool call's arguments have
// tens of values, and a chunk wastes at most its size less one.
const nodeChunk = 16

// carve copies src into chunk, starting a new chunk when it has no room, and returns
// the copy, whose capacity ends where it does: an append to it never writes into
// another node's.
func carve[T any](chunk *[]T, src []T) []T {
	if cap(*chunk)-len(*chunk) < len(src) {
		*chunk = make([]T, 0, max(64, len(src)))
	}
	start := len(*chunk)
	*chunk = append(*chunk, src...)
	return (*chunk)[start:len(*chunk):len(*chunk)]
}

// jpath is a path into a JSON value as refusals name it ("operations[2].atom"), kept
// in one buffer that grows as a walk descends and is cut back as it returns.
type jpath struct{ b []byte }

// key descends into key of an object; it returns what pop takes to return.
func (p *jpath) key(k string) int {
	n := len(p.b)
	if n > 0 {
		p.b = append(p.b, '.')
	}
	p.b = append(p.b, k...)
	return n
}

// index descends into entry i of a list; it returns what pop takes to return.
func (p *jpath) index(i int) int {
	n := len(p.b)
	p.b = append(p.b, '[')
	p.b = strconv.AppendInt(p.b, int64(i), 10)
	p.b = append(p.b, ']')
	return n
}

func (p *jpath) pop(n int)        { p.b = p.b[:n] }
func (p *jpath) String() string   { return string(p.b) }
func (p *jpath) is(s string) bool { return string(p.b) == s }

// CheckRPC checks an MCP JSON-RPC message as [CheckJSON] does, except params.arguments,
// which only has to be JSON: the tool's own decoder refuses what is wrong in it with a
// tool result that teaches the model, rather than a transport error that ends the
// client's session.
func CheckRPC(b []byte) error {
	_, err := (&strictParser{b: b, skip: "params.arguments", check: true}).parse()
	return err
}

func parseStrict(b []byte) (*jnode, error) {
	p := &strictParser{b: b}
	p.sizeChunks()
	return p.parse()
}

// sizeChunks sizes the parse's first chunks to what b can hold, counted cheaply: every
// value but the first follows a ':' (an object's) or, in a list, a '[' or a ','; every
// key is followed by a ':'. Characters inside strings count too, so this is a bound,
// capped by firstChunk so that a text of colons in strings costs no more than the
// chunks it replaces. A served row, its target or its grant then takes one chunk of
// each, where chunks of the default sizes were most of what a parse allocated.
func (p *strictParser) sizeChunks() {
	keys := bytes.Count(p.b, []byte{':'})
	values := 1 + keys
	if bytes.IndexByte(p.b, '[') >= 0 {
		values += bytes.Count(p.b, []byte{'['}) + bytes.Count(p.b, []byte{','})
	}
	p.nodeChunk = make([]jnode, 0, min(values, firstChunk))
	if keys > 0 {
		p.keyChunk = make([]string, 0, min(keys, firstChunk))
		p.atChunk = make([]int, 0, min(keys, firstChunk))
	}
	if values > 1 {
		p.kidChunk = make([]*jnode, 0, min(values-1, firstChunk))
		containers := bytes.Count(p.b, []byte{'{'}) + bytes.Count(p.b, []byte{'['})
		p.memberChunk = make([]jmembers, 0, min(containers, firstChunk))
	}
	p.path.b = p.pathBuf[:0]
	p.keyStack, p.atStack, p.kidStack = p.keyBuf[:0], p.atBuf[:0], p.kidBuf[:0]
}

// firstChunk bounds the first chunks of a parse.
const firstChunk = 256

func (p *strictParser) parse() (*jnode, error) {
	b := p.b
	p.space()
	if p.i == len(b) {
		return nil, Errorf(CodeInvalidArgument, "the body is empty; send one JSON value")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(b) {
		return nil, Errorf(CodeInvalidArgument, "there is data after the JSON value at %s; send exactly one JSON value", lineCol(b, p.i))
	}
	return n, nil
}

func (p *strictParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *strictParser) syntax(what string) error {
	if p.i >= len(p.b) {
		return Errorf(CodeInvalidArgument, "the JSON ends early (%s); send one complete JSON value", what)
	}
	return Errorf(CodeInvalidArgument, "the JSON is malformed at %s (%s); send valid JSON", lineCol(p.b, p.i), what)
}

// lineCol names offset i of b as a person finds it in an editor: "line 3, column 14"
// (columns count runes), never a byte offset.
func lineCol(b []byte, i int) string {
	i = max(0, min(i, len(b)))
	line := 1 + bytes.Count(b[:i], []byte("\n"))
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	return fmt.Sprintf("line %d, column %d", line, 1+utf8.RuneCount(b[start:i]))
}

// lineOf is the line of offset i of b, from 1.
func lineOf(b []byte, i int) int {
	return 1 + bytes.Count(b[:max(0, min(i, len(b)))], []byte("\n"))
}

func (p *strictParser) value(depth int) (*jnode, error) {
	n, err := p.valueAt(depth)
	if n != nil {
		n.end = p.i
	}
	return n, err
}

func (p *strictParser) valueAt(depth int) (*jnode, error) {
	if depth > MaxJSONDepth {
		return nil, Errorf(CodeInvalidArgument, "the JSON nests deeper than %d levels at %s; flatten it", MaxJSONDepth, where(p.path.String()))
	}
	if p.i >= len(p.b) {
		return nil, p.syntax("a value is missing")
	}
	if p.skip != "" && p.path.is(p.skip) {
		p.lenient++
		defer func() { p.lenient-- }()
	}
	n := p.node()
	n.start = p.i
	switch c := p.b[p.i]; {
	case c == '{':
		return n, p.object(n, depth)
	case c == '[':
		n.kind = '['
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return n, nil
		}
		base := len(p.kidStack)
		for {
			p.space()
			at := p.path.index(len(p.kidStack) - base)
			kid, err := p.value(depth + 1)
			p.path.pop(at)
			if err != nil {
				return nil, err
			}
			p.kidStack = append(p.kidStack, kid)
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				if !p.check {
					n.m = p.members(nil, p.kidStack[base:], nil)
				}
				p.kidStack = p.kidStack[:base]
				return n, nil
			}
			return nil, p.syntax("expected , or ] in a list")
		}
	case c == '"':
		n.kind = '"'
		s, err := p.string(!p.check)
		n.str = s
		return n, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
				p.i += len(lit)
				n.kind, n.str = 'b', lit
				if lit == "null" {
					n.kind = 'n'
				}
				return n, nil
			}
		}
		return nil, p.syntax("expected true, false or null")
	case c == '-' || c >= '0' && c <= '9':
		return n, p.number(n)
	}
	return nil, p.syntax("expected a value")
}

func (p *strictParser) object(n *jnode, depth int) error {
	n.kind = '{'
	p.i++
	// An object's keys are compared with those before them: one by one while there are
	// few (tool arguments have a handful), through maps built once there are more.
	var exact map[string]bool
	var folded map[string]string
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil
	}
	base, kidBase := len(p.keyStack), len(p.kidStack)
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return p.syntax("expected a key in double quotes")
		}
		keyStart := p.i
		key, err := p.string(true)
		if err != nil {
			return err
		}
		if p.lenient == 0 {
			keys := p.keyStack[base:]
			if exact == nil && len(keys) >= smallObject {
				exact, folded = make(map[string]bool, 2*smallObject), make(map[string]string, 2*smallObject)
				for _, k := range keys {
					exact[k], folded[foldKey(k)] = true, k
				}
			}
			dup, other, variant := false, "", false
			if exact != nil {
				dup = exact[key]
				f := foldKey(key)
				other, variant = folded[f]
				exact[key], folded[f] = true, key
			} else {
				dup, other, variant = sameKeys(keys, key)
			}
			if dup {
				return Errorf(CodeDuplicateKey, "the key %s appears twice at %s; readers disagree on which one counts, so send each key once", quoteShort(key), where(p.path.String()))
			}
			if variant {
				return Errorf(CodeCaseVariantKey, "the keys %s and %s at %s differ only in letter case; readers disagree on whether they are one key, so send one, spelled exactly", quoteShort(other), quoteShort(key), where(p.path.String()))
			}
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.syntax("expected : after a key")
		}
		p.i++
		p.space()
		at := p.path.key(key)
		kid, err := p.value(depth + 1)
		p.path.pop(at)
		if err != nil {
			return err
		}
		p.keyStack, p.kidStack, p.atStack = append(p.keyStack, key), append(p.kidStack, kid), append(p.atStack, keyStart)
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			if !p.check {
				n.m = p.members(p.keyStack[base:], p.kidStack[kidBase:], p.atStack[base:])
			}
			p.keyStack, p.kidStack, p.atStack = p.keyStack[:base], p.kidStack[:kidBase], p.atStack[:base]
			return nil
		}
		return p.syntax("expected , or } in an object")
	}
}

// smallObject is the number of keys up to which object compares a key with those
// before it one by one.
const smallObject = 16

// sameKeys reports whether keys holds key (dup), or else one that differs from it only
// in letter case (other), as foldKey compares them.
func sameKeys(keys []string, key string) (dup bool, other string, variant bool) {
	if slices.Contains(keys, key) {
		return true, "", false
	}
	var f string
	for _, k := range keys {
		if asciiFold(k, key) {
			return false, k, true
		}
		if isASCII(k) && isASCII(key) {
			continue
		}
		if f == "" {
			f = foldKey(key)
		}
		if foldKey(k) == f {
			return false, k, true
		}
	}
	return false, "", false
}

// asciiFold reports whether a and b, both ASCII, are one under foldKey: equal but for
// the case of their letters.
func asciiFold(a, b string) bool {
	if len(a) != len(b) || !isASCII(a) || !isASCII(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// string parses a string; its value is returned when keep is set (a check's values are
// only checked).
func (p *strictParser) string(keep bool) (string, error) {
	// Most strings are printable ASCII without escapes: they are their own bytes.
	for j := p.i + 1; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			var s string
			if keep {
				s = string(p.b[p.i+1 : j])
			}
			p.i = j + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	p.i++ // the opening quote
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return "", p.syntax("a string is not closed")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), nil
		case c < 0x20:
			return "", p.syntax("a control character inside a string; escape it")
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", p.syntax("an escape is cut short")
			}
			e := p.b[p.i+1]
			if r, ok := unescape(e); ok {
				sb.WriteByte(r)
				p.i += 2
				continue
			}
			if e != 'u' {
				return "", p.syntax("an unknown escape")
			}
			r, ok := p.hex4(p.i + 2)
			if !ok {
				return "", p.syntax("a \\u escape needs four hex digits")
			}
			p.i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if r < 0xDC00 && p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					r2, ok = p.hex4(p.i + 2)
				}
				dec := utf16.DecodeRune(r, r2)
				if (!ok || dec == unicode.ReplacementChar) && p.lenient == 0 {
					return "", Errorf(CodeInvalidUTF8, "a string at %s escapes a lone UTF-16 surrogate (\\u%04x); readers turn it into different text, so send the character itself or a valid pair", where(p.path.String()), r)
				}
				if ok && dec != unicode.ReplacementChar {
					p.i += 6
				}
				r = dec
			}
			sb.WriteRune(r)
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size <= 1 && p.lenient == 0 {
				return "", Errorf(CodeInvalidUTF8, "a string at %s holds bytes that are not UTF-8 (%s); readers turn them into different text, so send UTF-8", where(p.path.String()), lineCol(p.b, p.i))
			}
			sb.Write(p.b[p.i : p.i+size])
			p.i += size
		}
	}
}

// unescape is the byte a one-letter JSON escape \e stands for.
func unescape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

func (p *strictParser) hex4(at int) (rune, bool) {
	if at+4 > len(p.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[at:at+4]), 16, 32)
	return rune(v), err == nil && !bytes.ContainsAny(p.b[at:at+4], "+-_xX")
}

func (p *strictParser) number(n *jnode) error {
	n.kind = '0'
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		s := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		return p.i - s
	}
	intStart := p.i
	if d := digits(); d == 0 || d > 1 && p.b[intStart] == '0' {
		return p.syntax("a number needs digits and no leading zero")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return p.syntax("a number needs digits after its point")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.syntax("a number needs digits in its exponent")
		}
	}
	n.str = string(p.b[start:p.i])
	f, err := strconv.ParseFloat(n.str, 64)
	if err != nil {
		return Errorf(CodeInvalidArgument, "the number at %s (%s) is out of range; send a smaller number, or a large one as a string", where(p.path.String()), lineCol(p.b, start))
	}
	n.num = f
	return nil
}

// foldKey folds a key the way encoding/json matches keys to fields: ASCII letters upper
// case, every other rune to the smallest rune of its fold set.
func foldKey(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		} else if r >= utf8.RuneSelf {
			for {
				r2 := unicode.SimpleFold(r)
				if r2 <= r {
					r = r2
					break
				}
				r = r2
			}
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(path string) string {
	if path == "" {
		return "the top level"
	}
	return quoteShort(path)
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// walkType checks n against the Go type it decodes into: keys match fields exactly, and
// null only where Go reads it as absent.
func walkType(n *jnode, t reflect.Type, path string) error {
	p := jpath{b: []byte(path)}
	return p.walkType(n, t)
}

// walkType is walkType of n at path p, the path made a string only for a refusal.
func (p *jpath) walkType(n *jnode, t reflect.Type) error {
	if treeTypeOf(t).readsOwn {
		return nil // the type reads its own JSON, null included, from text CheckJSON has passed
	}
	if n.kind == 'n' {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return nil
		}
		name := "the value"
		if len(p.b) > 0 {
			name = "the field " + quoteShort(p.String())
		}
		return Errorf(CodeNullField, "%s is null, but it takes a %s; omit it to leave it out, or give a value", name, kindWord(t))
	}
	if t.Kind() == reflect.Interface {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return p.walkType(n, t.Elem())
	case reflect.Slice, reflect.Array:
		if n.kind == '[' {
			for i, k := range n.kids() {
				at := p.index(i)
				err := p.walkType(k, t.Elem())
				p.pop(at)
				if err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if n.kind == '{' {
			for i, k := range n.kids() {
				at := p.key(n.keys()[i])
				err := p.walkType(k, t.Elem())
				p.pop(at)
				if err != nil {
					return err
				}
			}
		}
	case reflect.Struct:
		if n.kind != '{' {
			return nil // encoding/json refuses it with a type error
		}
		fs := jsonFields(t)
		for i, key := range n.keys() {
			ft, ok := fs[key]
			if !ok {
				for name := range fs {
					if strings.EqualFold(name, key) || foldKey(name) == foldKey(key) {
						return Errorf(CodeCaseVariantKey, "the key %s at %s is not the field %s: keys match exactly, and other readers see an unknown key; spell it %s", quoteShort(key), where(p.String()), quoteShort(name), name)
					}
				}
				continue // unknown: encoding/json refuses it by name
			}
			at := p.key(key)
			err := p.walkType(n.kids()[i], ft)
			p.pop(at)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields returns the JSON names of t's fields, those of embedded structs included, as
// encoding/json reads them. The map is kept per type and shared: callers only read it.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if fs, ok := fieldsOf.Load(t); ok {
		return fs.(map[string]reflect.Type)
	}
	fs := readFields(t)
	fieldsOf.Store(t, fs)
	return fs
}

// fieldsOf holds jsonFields' answers by type: the types of the wire, a fixed few.
var fieldsOf sync.Map

func readFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, taken := out[k]; !taken {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}

func kindWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct:
		return "JSON object"
	case reflect.Array:
		return "list"
	}
	return "number"
}
