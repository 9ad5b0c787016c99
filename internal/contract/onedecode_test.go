package contract

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// row is a served work row that decodes.
const row = `{"id":"w-1","project":"demo","invocation":"op-1","action":"load","args":{"path":"a.json"},` +
	`"target":{"source":"","sourceType":"","sourceDigest":""},"toolSpec":{"tool":"t@1","digest":"sha256:aa","kind":"read"},"grant":"eyJ9.AAAA"}`

// refusedNoCode stands for a refusal with no code of its own (encoding/json's, which the
// hop server wraps in work_body).
const refusedNoCode Code = "(no code)"

// oneParseCases are /work bodies and served rows with the code DecodeStrict gives them
// ("" decodes). The strict refusals are the ones the single parse must keep.
var oneParseCases = []struct {
	name, body string
	row        bool // a served row, not a /work body
	want       Code
}{
	{"poll", `{"operation":{"kind":"Poll","workerId":"wkr-1","tools":[]}}`, false, ""},
	{"poll spaced", " {\n \"operation\" : { \"kind\" : \"Poll\" , \"workerId\":\"wkr-1\"}\t} ", false, ""},
	{"claim", `{"operation":{"kind":"Claim","id":"w-1","workerId":"wkr-1","workerGeneration":7,"grant":"a.b"}}`, false, ""},
	{"renew", `{"operation":{"kind":"RenewLease","workerId":"wkr-1","workerGeneration":7}}`, false, ""},
	{"release", `{"operation":{"kind":"ReleaseLease","workerId":"wkr-1","workerGeneration":7}}`, false, ""},
	{"kind last", `{"operation":{"workerId":"wkr-1","kind":"Poll"}}`, false, ""},
	{"duplicate key in the operation", `{"operation":{"kind":"Poll","workerId":"wkr-1","workerId":"wkr-2"}}`, false, CodeDuplicateKey},
	{"duplicate kind", `{"operation":{"kind":"Poll","kind":"Claim","workerId":"wkr-1"}}`, false, CodeDuplicateKey},
	{"duplicate operation", `{"operation":{"kind":"Poll","workerId":"wkr-1"},"operation":{"kind":"Claim"}}`, false, CodeDuplicateKey},
	{"case-variant kind", `{"operation":{"kind":"Poll","KIND":"Claim","workerId":"wkr-1"}}`, false, CodeCaseVariantKey},
	{"case-variant kind alone", `{"operation":{"Kind":"Poll","workerId":"wkr-1"}}`, false, CodeCaseVariantKey},
	{"case-variant field alone", `{"operation":{"kind":"Poll","WorkerId":"wkr-1"}}`, false, CodeCaseVariantKey},
	{"case-variant operation", `{"Operation":{"kind":"Poll","workerId":"wkr-1"}}`, false, CodeCaseVariantKey},
	{"case-variant operation pair", `{"operation":{"kind":"Poll"},"OPERATION":{"kind":"Poll"}}`, false, CodeCaseVariantKey},
	{"duplicate key deep", `{"operation":{"kind":"Report","workerId":"wkr-1","workerGeneration":1,"reports":[{"id":"w-1","id":"w-2"}]}}`, false, CodeDuplicateKey},
	{"null for a string", `{"operation":{"kind":"Poll","workerId":null}}`, false, CodeNullField},
	{"null operation", `{"operation":null}`, false, CodeWorkBody},
	{"kind not a string", `{"operation":{"kind":1}}`, false, CodeWorkBody},
	{"unknown kind", `{"operation":{"kind":"Run"}}`, false, CodeWorkBody},
	{"unknown field", `{"operation":{"kind":"Poll","workerId":"wkr-1","admin":true}}`, false, CodeWorkBody},
	{"unknown top-level field", `{"operation":{"kind":"Poll","workerId":"wkr-1"},"admin":true}`, false, refusedNoCode},
	{"no operation", `{}`, false, ""}, // the server refuses it as an unknown kind,
	{"not an object", `[1]`, false, refusedNoCode},
	{"trailing data", `{"operation":{"kind":"Poll"}}{}`, false, CodeInvalidArgument},
	{"invalid UTF-8", "{\"operation\":{\"kind\":\"Poll\",\"workerId\":\"\xff\"}}", false, CodeInvalidUTF8},
	{"row", row, true, ""},
	{"row duplicate key", strings.Replace(row, `"id":"w-1"`, `"id":"w-1","id":"w-2"`, 1), true, CodeDuplicateKey},
	{"row case-variant key", strings.Replace(row, `"id":"w-1"`, `"id":"w-1","ID":"w-2"`, 1), true, CodeCaseVariantKey},
	{"row case-variant field alone", strings.Replace(row, `"grant"`, `"Grant"`, 1), true, CodeWorkRow},
	{"row unknown field", strings.Replace(row, `"id":"w-1"`, `"id":"w-1","admin":true`, 1), true, CodeWorkRow},
	{"row without grant", strings.Replace(row, `,"grant":"eyJ9.AAAA"`, ``, 1), true, CodeWorkRow},
	{"row null", `null`, true, CodeWorkRow},
}

// TestDecodeStrict_OneParse checks that DecodeStrict, which parses a /work body or a
// served row once, refuses exactly what the decode that parsed it again refused, with
// the same error, and decodes the rest to the same value.
func TestDecodeStrict_OneParse(t *testing.T) {
	t.Parallel()
	for _, tt := range oneParseCases {
		t.Run(tt.name, func(t *testing.T) {
			err := sameAsTwoParses(t, []byte(tt.body), tt.row)
			got := CodeOf(err)
			if err != nil && got == "" {
				got = refusedNoCode
			}
			if got != tt.want {
				t.Fatalf("DecodeStrict(%s) = %v (code %q), want code %q", tt.body, err, got, tt.want)
			}
		})
	}
}

// FuzzDecodeStrict_OneParse compares the single-parse decode of /work bodies and served
// rows with the decode that parses them again, on any input.
func FuzzDecodeStrict_OneParse(f *testing.F) {
	for _, tt := range oneParseCases {
		f.Add([]byte(tt.body), tt.row)
	}
	ents, err := os.ReadDir(filepath.Join("testdata", "work"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", "work", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Fuzz(func(t *testing.T, b []byte, isRow bool) {
		sameAsTwoParses(t, b, isRow)
	})
}

// sameAsTwoParses decodes b as a /work body (or a served row) with DecodeStrict and with
// decodeStrict, which leaves the single parse out, fails t unless both give the same
// value and the same error, and returns DecodeStrict's error.
func sameAsTwoParses(t *testing.T, b []byte, isRow bool) error {
	t.Helper()
	var one, two any
	var errOne, errTwo error
	if isRow {
		// A served row is its own Unmarshaler, so the reference parses the text and then
		// hands the whole of it to UnmarshalJSON, which parses it again: encoding/json
		// would hand it the text without its leading white space, and a refusal would
		// name a line counted from there.
		var a, b2, b3 WorkRow
		errOne = DecodeStrict(b, &a)
		if _, errTwo = parseStrict(b); errTwo == nil {
			errTwo = b2.UnmarshalJSON(b)
		}
		one, two = a, b2
		if errRef := decodeStrict(b, &b3); (errRef == nil) != (errOne == nil) || CodeOf(errRef) != CodeOf(errOne) {
			t.Fatalf("%q: one parse = %v (code %q), encoding/json's = %v (code %q)", b, errOne, CodeOf(errOne), errRef, CodeOf(errRef))
		}
	} else {
		var a, b2 WorkBody
		errOne, errTwo = DecodeStrict(b, &a), decodeStrict(b, &b2)
		one, two = a, b2
	}
	if (errOne == nil) != (errTwo == nil) || errOne != nil && (errOne.Error() != errTwo.Error() || CodeOf(errOne) != CodeOf(errTwo)) {
		t.Fatalf("%q: one parse = %v (code %q), two parses = %v (code %q)", b, errOne, CodeOf(errOne), errTwo, CodeOf(errTwo))
	}
	if errOne == nil && !reflect.DeepEqual(one, two) {
		t.Fatalf("%q: one parse decodes %+v, two parses %+v", b, one, two)
	}
	return errOne
}

// BenchmarkDecodeStrict_Work decodes a Claim body and a served row with the single parse
// and with the decode that parses them again.
func BenchmarkDecodeStrict_Work(b *testing.B) {
	claim := []byte(`{"operation":{"kind":"Claim","id":"agt_0123456789abcdef.42","workerId":"wkr-1","workerGeneration":7,"grant":"` +
		strings.Repeat("A", 600) + `.` + strings.Repeat("B", 43) + `"}}`)
	for _, in := range []struct {
		name string
		text []byte
		into func() any
	}{{"body", claim, func() any { return new(WorkBody) }}, {"row", []byte(row), func() any { return new(WorkRow) }}} {
		for _, bb := range []struct {
			name   string
			decode func([]byte, any) error
		}{{"one-parse", DecodeStrict}, {"two-parses", decodeStrict}} {
			b.Run(in.name+"/"+bb.name, func(b *testing.B) {
				for b.Loop() {
					if err := bb.decode(in.text, in.into()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
