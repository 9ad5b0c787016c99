package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// upperText is a string that reads itself from text: encoding/json's, not the tree's.
type upperText string

func (u *upperText) UnmarshalText(b []byte) error {
	*u = upperText(strings.ToUpper(string(b)))
	return nil
}

type treeInner struct {
	S string  `json:"s"`
	N int64   `json:"n,omitempty"`
	P *string `json:"p"`
}

type treeEmbedded struct {
	E string `json:"e"`
}

// treeAll has a field of every shape the tree decode knows and of several it leaves to
// encoding/json.
type treeAll struct {
	Str    string                `json:"str"`
	Code   Code                  `json:"code"`
	Bool   bool                  `json:"bool"`
	I      int                   `json:"i"`
	I8     int8                  `json:"i8"`
	I64    int64                 `json:"i64"`
	U8     uint8                 `json:"u8"`
	U      uint                  `json:"u"`
	F      float64               `json:"f"`
	F32    float32               `json:"f32"`  // left to encoding/json
	Any    any                   `json:"any"`  // left to encoding/json
	Arr    [2]int                `json:"arr"`  // left to encoding/json
	Text   upperText             `json:"text"` // left to encoding/json
	Num    json.Number           `json:"num"`  // left to encoding/json
	Quoted int                   `json:"q,omitempty"`
	Ptr    *int64                `json:"ptr"`
	PtrPtr **treeInner           `json:"pp"`
	Raw    json.RawMessage       `json:"raw"`
	When   time.Time             `json:"when"`
	Value  Value                 `json:"value"`
	Args   Args                  `json:"args"`
	List   []treeInner           `json:"list"`
	Bytes  []byte                `json:"bytes"`
	Strs   []string              `json:"strs"`
	Map    map[string]int        `json:"map"`
	MapP   map[string]*treeInner `json:"mapP"`
	MapC   map[Code][]string     `json:"mapC"`
	Inner  treeInner             `json:"inner"`
	InnerP *treeInner            `json:"innerP"`
	Lease  *Lease                `json:"lease"`
	Row    *WorkRow              `json:"row"`
	NoTag  string
	//lint:ignore U1000 an unexported field, which no key reaches: the test is that "hidden" stays unknown
	hidden string
	Skip   string `json:"-"`
	treeEmbedded
}

// treeQuoted has a ",string" field: left to encoding/json.
type treeQuoted struct {
	N int `json:"n,string"`
}

// treeTwice names one key twice, once embedded: left to encoding/json.
type treeTwice struct {
	E string `json:"e"`
	treeEmbedded
}

// treeEmbeddedPtr embeds a pointer: left to encoding/json.
type treeEmbeddedPtr struct {
	*treeEmbedded
	X string `json:"x"`
}

// treeDecodeTypes are the types the differential tests decode into: every wire type
// the worker and the hop decode on their hot paths, and those above.
func treeDecodeTypes() []func() any {
	type answer struct { // the worker's reading of a /work answer (internal/worker.DecodeAnswer)
		Accepted bool              `json:"accepted"`
		Code     Code              `json:"errorCode,omitempty"`
		Teaching string            `json:"teaching,omitempty"`
		Lease    *Lease            `json:"lease,omitempty"`
		Work     []json.RawMessage `json:"work,omitempty"`
	}
	type plainRow WorkRow
	return []func() any{
		func() any { return new(treeAll) },
		func() any { return new(answer) },
		func() any { return new(WorkAnswer) },
		func() any { return new(plainRow) },
		func() any { return new(WorkTarget) },
		func() any { return new(WorkToolSpec) },
		func() any { return new(Args) },
		func() any { return new(Grant) },
		func() any { return new(PollRequest) },
		func() any { return new(ReportRequest) },
		func() any {
			return new(struct {
				Kind string `json:"kind"`
				ClaimRequest
			})
		},
		func() any { return new(treeQuoted) },
		func() any { return new(treeTwice) },
		func() any { return new(treeEmbeddedPtr) },
		func() any { return new([]Atom) },
		func() any { return new(map[string]any) },
		func() any { return new(string) },
		func() any { return new(*int) },
	}
}

// prefill is JSON decoded into a value before the text under test, so the decode meets
// slices, maps and pointers already set, as encoding/json does.
const prefill = `{"str":"old","ptr":5,"pp":{"s":"old","n":1},"list":[{"s":"a"}],"map":{"a":1},` +
	`"mapP":{"x":{"s":"x"}},"innerP":{"s":"old","n":2},"args":{"k":"v"},"lease":{"workerId":"w"}}`

// decodeViaJSON is the decode before the tree: the check, then encoding/json.
func decodeViaJSON(b []byte, v any) error {
	n, err := parseStrict(b)
	if err != nil {
		return err
	}
	t := reflect.TypeOf(v).Elem()
	if err := walkType(n, t, ""); err != nil {
		return err
	}
	if err := decodeJSON(b, v); err != nil {
		return explainDecode(b, n, t, err)
	}
	return nil
}

// sameAsJSON decodes b into a new value of each type, and into one prefilled, with the
// tree and through encoding/json, and fails t unless both give the same value and the
// same error.
func sameAsJSON(t *testing.T, b []byte) {
	t.Helper()
	for _, mk := range treeDecodeTypes() {
		for _, pre := range []bool{false, true} {
			viaTree, viaJSON := mk(), mk()
			if pre {
				if json.Unmarshal([]byte(prefill), viaTree) != nil || json.Unmarshal([]byte(prefill), viaJSON) != nil {
					continue
				}
			}
			errTree := decodeStrict(b, viaTree)
			errJSON := decodeViaJSON(b, viaJSON)
			if (errTree == nil) != (errJSON == nil) || errTree != nil && (errTree.Error() != errJSON.Error() || CodeOf(errTree) != CodeOf(errJSON)) {
				t.Fatalf("%T (prefilled %v) from %q: with the tree = %v, through encoding/json = %v", viaTree, pre, b, errTree, errJSON)
			}
			if errTree == nil && !reflect.DeepEqual(viaTree, viaJSON) {
				t.Fatalf("%T (prefilled %v) from %q: with the tree = %+v, through encoding/json = %+v", viaTree, pre, b, viaTree, viaJSON)
			}
		}
	}
}

// treeCases are texts for the tree decode: wire texts, and ones that reach each shape.
var treeCases = []string{
	row,
	`{"str":"a\u00e9\n","code":"c","bool":true,"i":-3,"i8":127,"i64":9007199254740993,"u8":255,"u":0,"f":1.5e3}`,
	`{"i8":128}`, `{"u8":-1}`, `{"i":1.0}`, `{"i":1e2}`, `{"f":-0}`, `{"u":18446744073709551615}`, `{"i64":-9223372036854775809}`,
	`{"f32":1.5}`, `{"any":{"a":[1,"x",null]}}`, `{"arr":[1,2]}`, `{"text":"abc"}`, `{"num":12.5}`, `{"q":"1"}`,
	`{"ptr":null,"pp":null,"raw":null,"when":null,"list":null,"map":null,"innerP":null,"args":null}`,
	`{"ptr":7,"pp":{"s":"x","p":"y"},"innerP":{"n":3}}`,
	`{"raw":{"a": [1, 2] },"when":"2026-11-30T03:00:00Z","value":"v","args":{"a":1,"b":"x","c":true,"d":2.5}}`,
	`{"when":"yesterday"}`, `{"value":null}`, `{"value":{}}`, `{"args":{"a":null}}`, `{"args":{"a":9007199254740992}}`,
	`{"list":[],"strs":[],"map":{},"mapP":{},"mapC":{}}`,
	`{"list":[{"s":"a"},{"n":2}],"strs":["a","b"],"bytes":[1,2],"map":{"b":2},"mapP":{"y":{"s":"y"},"z":null},"mapC":{"k":["v"]}}`,
	`{"bytes":"AQI="}`, `{"strs":[1]}`, `{"map":{"a":"1"}}`, `{"inner":{"s":"a","x":1}}`, `{"inner":[]}`, `{"inner":"s"}`,
	`{"NoTag":"x","e":"embedded"}`, `{"notag":"x"}`, `{"hidden":"x"}`, `{"Skip":"x"}`, `{"-":"x"}`,
	`{"lease":{"workerId":"w","workerGeneration":3,"expiresAt":"2026-11-30T03:00:30Z","serverTime":"2026-11-30T03:00:00Z","heartbeatAfterMs":10}}`,
	`{"row":` + row + `}`, `{"row":{"id":"x"}}`,
	`{"accepted":true}`, `{"accepted":false,"errorCode":"worker_lease_expired","teaching":"t"}`,
	`{"accepted":true,"work":[` + row + `,{"id":1},null]}`,
	`{"kind":"Claim","id":"w-1","workerId":"wkr-1","workerGeneration":7,"grant":"a.b"}`,
	`{"e":"x"}`, `{"x":"y","e":"z"}`, `{"n":"12"}`,
	`[{"predicate":"p","args":{"a":1}},{"predicate":"q","args":{},"negated":true}]`,
	`"text"`, `null`, `12`, `[]`, `{}`,
}

// TestDecodeFromTree_SameAsJSON checks that DecodeStrict's decode from its parse gives
// the value and the refusal encoding/json gave, for the wire's texts and each shape.
func TestDecodeFromTree_SameAsJSON(t *testing.T) {
	t.Parallel()
	for _, c := range treeCases {
		sameAsJSON(t, []byte(c))
	}
	ents, err := os.ReadDir(filepath.Join("testdata", "work"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", "work", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sameAsJSON(t, b)
	}
}

// FuzzDecodeFromTree compares DecodeStrict's decode from its parse with encoding/json's
// decode, on any text, into each type.
func FuzzDecodeFromTree(f *testing.F) {
	for _, c := range treeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsJSON(t, b) })
}

// TestDecodeFromTree_Takes checks which texts the tree decode takes (the wire's, so that
// they are read once) and which it leaves to encoding/json.
func TestDecodeFromTree_Takes(t *testing.T) {
	t.Parallel()
	answer, err := os.ReadFile(filepath.Join("testdata", "work", "answer_poll.json"))
	if err != nil {
		t.Fatal(err)
	}
	grant, err := os.ReadFile(filepath.Join("testdata", "work", "grant.json"))
	if err != nil {
		t.Fatal(err)
	}
	type plainRow WorkRow
	for _, tt := range []struct {
		name string
		text string
		into any
		want bool
	}{
		{"answer", string(answer), new(WorkAnswer), true},
		{"row", row, new(plainRow), true},
		{"target", `{"source":"calc","sourceType":"file","sourceDigest":"sha256:cc"}`, new(WorkTarget), true},
		{"tool spec", `{"tool":"t@1","digest":"sha256:aa","kind":"read"}`, new(WorkToolSpec), true},
		{"args", `{"path":"a.json","n":1,"f":1.5,"ok":true}`, new(Args), true},
		{"grant", string(grant), new(Grant), true},
		{"claim", `{"kind":"Claim","id":"w-1","workerId":"wkr-1","workerGeneration":7,"grant":"a.b"}`, new(struct {
			Kind string `json:"kind"`
			ClaimRequest
		}), true},
		{"unknown field", `{"tool":"t@1","admin":true}`, new(WorkToolSpec), false},
		{"type mismatch", `{"tool":1}`, new(WorkToolSpec), false},
		{"integer out of range", `{"workerGeneration":1e3}`, new(Lease), false},
		{"argument refused by Value", `{"a":null}`, new(Args), false},
		{"float32", `{"f32":1}`, new(treeAll), false},
		{"interface", `{"any":1}`, new(treeAll), false},
		{"string option", `{"n":"1"}`, new(treeQuoted), false},
		{"name twice", `{"e":"x"}`, new(treeTwice), false},
		{"embedded pointer", `{"x":"y"}`, new(treeEmbeddedPtr), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := parseStrict([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeFromTree([]byte(tt.text), n, tt.into); got != tt.want {
				t.Fatalf("decodeFromTree(%s) into %T = %v, want %v", tt.text, tt.into, got, tt.want)
			}
		})
	}
}

// scalarCases are texts for ScalarObject: rows of scalars, and texts it leaves to
// encoding/json.
var scalarCases = []string{
	`{"id":"calc-001","unit_price_cents":129900,"quantity":2,"ok":true,"none":null,"f":-1.5e-3,"big":123456789012345678901234567890}`,
	`{}`, ` { "a" : "\u00e9\n\"" } `, `{"a":{"b":1}}`, `{"a":[1]}`, `[{"a":1}]`, `"s"`, `null`, `1`,
	`{"a":1,"a":2}`, `{"a":1,"A":2}`, "{\"a\":\"\xff\"}", `{"a":1}{}`, `{"a":1e999}`, `{"a":"\ud800"}`,
}

// sameAsDecoder fails t unless ScalarObject, where it takes b (and it must when
// mustTake), reads what CheckJSON and then encoding/json's Decoder with UseNumber read.
func sameAsDecoder(t *testing.T, b []byte, mustTake bool) {
	t.Helper()
	got, ok := ScalarObject(b)
	if mustTake && !ok {
		t.Fatalf("ScalarObject(%s) declined, want it read", b)
	}
	if !ok {
		return
	}
	if err := CheckJSON(b); err != nil {
		t.Fatalf("ScalarObject(%s) = %v, but CheckJSON refuses it: %v", b, got, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var want map[string]any
	if err := dec.Decode(&want); err != nil || want == nil || dec.More() {
		t.Fatalf("ScalarObject(%s) = %v, but the Decoder reads %v, %v (more %v)", b, got, want, err, dec.More())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScalarObject(%s) = %#v, the Decoder %#v", b, got, want)
	}
}

// TestScalarObject checks that ScalarObject reads a row of scalars as encoding/json
// reads it, and leaves anything else.
func TestScalarObject(t *testing.T) {
	t.Parallel()
	for i, c := range scalarCases {
		sameAsDecoder(t, []byte(c), i < 3)
	}
	for _, c := range scalarCases[3:] {
		if _, ok := ScalarObject([]byte(c)); ok {
			t.Errorf("ScalarObject(%s) read it, want it left to encoding/json", c)
		}
	}
}

// FuzzScalarObject compares ScalarObject with CheckJSON and encoding/json on any text.
func FuzzScalarObject(f *testing.F) {
	for _, c := range scalarCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsDecoder(t, b, false) })
}
