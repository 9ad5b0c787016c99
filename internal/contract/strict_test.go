package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	type inner struct {
		N int `json:"n"`
	}
	type target struct {
		Action string            `json:"action"`
		Limit  int               `json:"limit,omitempty"`
		Ptr    *inner            `json:"ptr,omitempty"`
		List   []int             `json:"list,omitempty"`
		Map    map[string]string `json:"map,omitempty"`
		Any    any               `json:"any,omitempty"`
		Raw    json.RawMessage   `json:"raw,omitempty"`
		Inner  inner             `json:"inner,omitzero"`
	}
	tests := []struct {
		name string
		in   string
		code Code // "" when accepted
	}{
		{"plain", `{"action":"read_text","limit":3}`, ""},
		{"the issue's case-variant keys", `{"action":"read_text","ACTION":"write_text"}`, CodeCaseVariantKey},
		{"a case-variant field alone", `{"ACTION":"write_text"}`, CodeCaseVariantKey},
		{"a key that only looks like a field", "{\"actıon\":\"x\"}", "go"}, // dotless ı does not fold to i
		{"the Kelvin sign folds to k", "{\"action\":\"x\",\"inner\":{\"n\":1},\"map\":{\"k\":\"a\",\"\u212A\":\"b\"}}", CodeCaseVariantKey},
		{"a duplicate key", `{"action":"a","action":"b"}`, CodeDuplicateKey},
		{"a duplicate key spelled with an escape", `{"action":"a","\u0061ction":"b"}`, CodeDuplicateKey},
		{"a duplicate key deep down", `{"action":"a","any":{"x":[{"y":1,"y":2}]}}`, CodeDuplicateKey},
		{"case-variant map keys", `{"action":"a","map":{"k":"1","K":"2"}}`, CodeCaseVariantKey},
		{"null for a number", `{"action":"a","limit":null}`, CodeNullField},
		{"null for a string", `{"action":null}`, CodeNullField},
		{"null for a struct", `{"action":"a","inner":null}`, CodeNullField},
		{"null in a list of numbers", `{"action":"a","list":[1,null]}`, CodeNullField},
		{"null for a pointer, list, map, any and raw", `{"action":"a","ptr":null,"list":null,"map":null,"any":null,"raw":null}`, ""},
		{"null inside any", `{"action":"a","any":{"x":null}}`, ""},
		{"invalid UTF-8", "{\"action\":\"a\xff\"}", CodeInvalidUTF8},
		{"invalid UTF-8 in a key", "{\"act\xc3ion\":\"a\"}", CodeInvalidUTF8},
		{"an overlong encoding", "{\"action\":\"\xc0\xaf\"}", CodeInvalidUTF8},
		{"an encoded surrogate", "{\"action\":\"\xed\xa0\x80\"}", CodeInvalidUTF8},
		{"a lone high surrogate", `{"action":"\ud800"}`, CodeInvalidUTF8},
		{"a lone low surrogate", `{"action":"\udc00x"}`, CodeInvalidUTF8},
		{"a reversed pair", `{"action":"\udc00\ud800"}`, CodeInvalidUTF8},
		{"a valid pair", `{"action":"\ud83d\ude00"}`, ""},
		{"a number out of range", `{"action":"a","any":1e400}`, CodeInvalidArgument},
		{"trailing data", `{"action":"a"} {}`, CodeInvalidArgument},
		{"empty", ``, CodeInvalidArgument},
		{"an unknown field", `{"action":"a","other":1}`, "go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v target
			err := DecodeStrict([]byte(tt.in), &v)
			switch {
			case tt.code == "" && err != nil:
				t.Errorf("DecodeStrict(%s) = %v, want accepted", tt.in, err)
			case tt.code == "go" && (err == nil || CodeOf(err) != ""):
				t.Errorf("DecodeStrict(%s) = %v, want encoding/json's refusal", tt.in, err)
			case tt.code != "" && tt.code != "go":
				var e *Error
				if !errors.As(err, &e) || e.Code != tt.code || e.Teaching == "" {
					t.Errorf("DecodeStrict(%s) = %v, want %q with a teaching", tt.in, err, tt.code)
				}
			}
		})
	}
}

// TestCheckRPC: a JSON-RPC message is strict but for its tool arguments, which the
// tool's decoder reads strictly itself.
func TestCheckRPC(t *testing.T) {
	t.Parallel()
	if err := CheckRPC([]byte(`{"method":"tools/call","params":{"name":"X","arguments":{"a":1,"A":2,"s":"\ud800"}}}`)); err != nil {
		t.Errorf("arguments are left to the tool: %v", err)
	}
	if err := CheckRPC([]byte(`{"method":"tools/call","params":{"name":"X","NAME":"Y"}}`)); CodeOf(err) != CodeCaseVariantKey {
		t.Errorf("the envelope is strict: %v", err)
	}
}

// FuzzStrictDiff compares the strict reader with encoding/json. Whenever the strict
// reader accepts, encoding/json reads the same keys and values, finds no key twice (a
// reference check on its own tokens), and the text is UTF-8. Whenever encoding/json and
// the reference check find nothing two readers could read differently, the strict
// reader accepts.
func FuzzStrictDiff(f *testing.F) {
	for _, s := range []string{
		`{"action":"read_text","ACTION":"write_text"}`, `{"a":1,"a":2}`, `{"limit":null}`, `"\ud800"`,
		`[1,2.5,-0,1e3,true,false,null,"x"]`, `{"a":{"b":[{"c":"\u00e9"}]}}`, "\"\xff\"", `{"k":1,"\u212a":2}`,
		`{"\u0041":1,"a":2}`, `1e400`, `{"":0}`, `"\ud83d\ude00"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseStrict(data)
		// A check, which builds no tree, refuses exactly what the parse refuses.
		if cerr := CheckJSON(data); fmt.Sprint(cerr) != fmt.Sprint(err) || CodeOf(cerr) != CodeOf(err) {
			t.Fatalf("CheckJSON(%q) = %v, the parse %v", data, cerr, err)
		}
		_, rerr := (&strictParser{b: data, skip: "params.arguments"}).parse()
		if cerr := CheckRPC(data); fmt.Sprint(cerr) != fmt.Sprint(rerr) || CodeOf(cerr) != CodeOf(rerr) {
			t.Fatalf("CheckRPC(%q) = %v, the parse %v", data, cerr, rerr)
		}
		dupFree, refErr := referenceKeys(data)
		var ref any
		stdErr := json.Unmarshal(data, &ref)
		if err == nil {
			if stdErr != nil {
				t.Fatalf("strict accepts %q, encoding/json refuses: %v", data, stdErr)
			}
			if !utf8.Valid(data) {
				t.Fatalf("strict accepts %q, which is not UTF-8", data)
			}
			if refErr != nil || !dupFree {
				t.Fatalf("strict accepts %q, the reference finds keys that collide (%v)", data, refErr)
			}
			if got := n.value(); !reflect.DeepEqual(got, ref) {
				t.Fatalf("strict reads %q as %#v, encoding/json as %#v", data, got, ref)
			}
			var v any
			if err := DecodeStrict(data, &v); err != nil {
				t.Fatalf("CheckJSON accepts %q, DecodeStrict refuses: %v", data, err)
			}
			return
		}
		if CodeOf(err) == "" {
			t.Fatalf("strict refuses %q without a code: %v", data, err)
		}
		plain := !bytes.Contains(data, []byte(`\u`)) // escapes may hide a lone surrogate
		if stdErr == nil && refErr == nil && dupFree && utf8.Valid(data) && plain && depth(data) <= MaxJSONDepth {
			t.Fatalf("strict refuses %q (%v), though no two readers would disagree", data, err)
		}
	})
}

// value converts n to what encoding/json reads into an any.
func (n *jnode) value() any {
	switch n.kind {
	case '{':
		m := map[string]any{}
		for i, k := range n.keys() {
			m[k] = n.kids()[i].value()
		}
		return m
	case '[':
		l := []any{}
		for _, k := range n.kids() {
			l = append(l, k.value())
		}
		return l
	case '"':
		return n.str
	case 'b':
		return n.str == "true"
	case '0':
		return n.num
	}
	return nil
}

// referenceKeys walks encoding/json's tokens and reports whether no object names a key
// twice, exactly or folded as encoding/json folds keys onto fields.
func referenceKeys(data []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj    bool
		keyNow bool
		seen   []string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.keyNow {
			k, ok := tok.(string)
			if !ok {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:len(stack)-1]
					continue
				}
				return false, errors.New("a key that is not a string")
			}
			for _, s := range top.seen {
				if strings.EqualFold(s, k) {
					return false, nil
				}
			}
			top.seen = append(top.seen, k)
			top.keyNow = false
			continue
		}
		if top != nil && top.obj {
			top.keyNow = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keyNow: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'), json.Delim('}'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].keyNow = true
			}
		}
	}
}

func depth(data []byte) int {
	d, most := 0, 0
	for _, c := range data {
		switch c {
		case '{', '[':
			d++
			most = max(most, d)
		case '}', ']':
			d--
		}
	}
	return most
}

// TestDecodeToolInput_Allocs bounds what strictly checking and decoding a batch of ten
// facts allocates: every MCP request is checked and every tool call's arguments decoded
// strictly, and a string per key and list entry for the path a refusal might name, two
// maps per object and a node apiece once made the check allocate 444 times and the
// decode 670 (benchmarks/README.md, "ApplyBatch's answer"). A check builds no tree.
func TestDecodeToolInput_Allocs(t *testing.T) {
	var in []byte
	in = append(in, `{"operations":[`...)
	for j := range 10 {
		if j > 0 {
			in = append(in, ',')
		}
		in = append(in, `{"op":"assert_fact","atom":{"predicate":"item","args":{"n":"`+strconv.Itoa(1000+j)+`"}}}`...)
	}
	in = append(in, "]}"...)
	for _, tt := range []struct {
		name string
		f    func() error
		max  float64
	}{
		{"CheckJSON", func() error { return CheckJSON(in) }, 80},
		{"DecodeToolInput", func() error { _, err := DecodeToolInput(ToolApplyBatch, in); return err }, 260},
	} {
		if err := tt.f(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = tt.f() }); n > tt.max {
			t.Errorf("%s of a batch of ten facts allocates %v times, want at most %v", tt.name, n, tt.max)
		}
	}
}
