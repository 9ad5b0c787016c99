package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// treeCases are texts of the types [decodeFromTree] knows, each with the type it is
// decoded into and whether the tree takes it (its plain shape) or declines it for
// encoding/json.
var treeCases = []struct {
	name, text string
	into       func() any
	tree       bool
}{
	{"claim", `{"kind":"Claim","id":"w-1","workerId":"wkr-1","workerGeneration":7,"grant":"a.b"}`, newClaim, true},
	{"claim escapes", `{"kind":"Claim","id":"w\u002d1 \"q\" \\ é \ud83d\ude00","workerId":"wkr-1","workerGeneration":-7,"grant":"a.b"}`, newClaim, true},
	{"claim fields missing", `{"kind":"Claim"}`, newClaim, true},
	{"claim empty", `{}`, newClaim, true},
	{"claim fraction", `{"kind":"Claim","workerGeneration":7.0}`, newClaim, false},
	{"claim exponent", `{"kind":"Claim","workerGeneration":7e0}`, newClaim, false},
	{"claim past int64", `{"kind":"Claim","workerGeneration":9223372036854775808}`, newClaim, false},
	{"claim generation a string", `{"kind":"Claim","workerGeneration":"7"}`, newClaim, false},
	{"claim id a number", `{"kind":"Claim","id":1}`, newClaim, false},
	{"claim id a boolean", `{"kind":"Claim","id":true}`, newClaim, false},
	{"claim id an object", `{"kind":"Claim","id":{}}`, newClaim, false},
	{"claim null", `{"kind":"Claim","id":null}`, newClaim, false},
	{"claim unknown field", `{"kind":"Claim","admin":true}`, newClaim, false},
	{"claim not an object", `["Claim"]`, newClaim, false},
	{"claim a string", `"Claim"`, newClaim, false},
	{"renew", `{"kind":"RenewLease","workerId":"wkr-1","workerGeneration":7}`, newLease, true},
	{"renew generation a boolean", `{"kind":"RenewLease","workerId":"wkr-1","workerGeneration":false}`, newLease, false},
	{"renew grant", `{"kind":"RenewLease","workerId":"wkr-1","grant":"a.b"}`, newLease, false},
	{"report ok", `{"kind":"Report","id":"w-1","ok":true,"result":{"rows":[{"job_id":"calc-001","quantity":2,"ratio":0.5,"big":1e3,"flag":false}]},"workerId":"wkr-1","workerGeneration":7,"grant":"a.b"}`, newReport, true},
	{"report no rows", `{"kind":"Report","id":"w-1","ok":true,"result":{"rows":[]},"grant":"a.b"}`, newReport, true},
	{"report empty row", `{"kind":"Report","id":"w-1","ok":true,"result":{"rows":[{}]},"grant":"a.b"}`, newReport, true},
	{"report empty result", `{"kind":"Report","id":"w-1","ok":true,"result":{}}`, newReport, true},
	{"report rows null", `{"kind":"Report","result":{"rows":null}}`, newReport, false},
	{"report result null", `{"kind":"Report","result":null}`, newReport, false},
	{"report result a list", `{"kind":"Report","result":[]}`, newReport, false},
	{"report result unknown key", `{"kind":"Report","result":{"rows":[],"more":1}}`, newReport, false},
	{"report row a list", `{"kind":"Report","result":{"rows":[[1]]}}`, newReport, false},
	{"report cell null", `{"kind":"Report","result":{"rows":[{"a":null}]}}`, newReport, false},
	{"report cell an object", `{"kind":"Report","result":{"rows":[{"a":{}}]}}`, newReport, false},
	{"report cell past 2^53", `{"kind":"Report","result":{"rows":[{"a":9007199254740993}]}}`, newReport, false},
	{"report cell a huge float", `{"kind":"Report","result":{"rows":[{"a":1e308}]}}`, newReport, true},
	{"report unknown", `{"kind":"Report","id":"w-1","ok":false,"effectUnknown":true,"errorCode":"tool_timeout","reason":"ran past its limit","workerId":"wkr-1","workerGeneration":7,"grant":"a.b"}`, newReport, true},
	{"report ok a string", `{"kind":"Report","ok":"true"}`, newReport, false},
	{"report ok null", `{"kind":"Report","ok":null}`, newReport, false},
	{"report facts", `{"kind":"Report","facts":[{"predicate":"p","args":{"a":1}}]}`, newReport, false},
	{"grant", `{"action":"load","adapterDigest":"sha256:bb","connection":"con_1","expiresAt":"2026-11-30T03:01:00Z","generation":7,"invocation":"op-1","issuedAt":"2026-11-30T03:00:00Z","project":"demo","requestDigest":"sha256:dd","source":"calc","sourceDigest":"sha256:cc","tool":"t@1","toolDigest":"sha256:aa","workerId":"wkr-1"}`, newGrant, true},
	{"grant path check", `{"pathCheck":"path","issuedAt":"2026-11-30T03:00:00.5+01:00"}`, newGrant, true},
	{"grant time not RFC 3339", `{"issuedAt":"yesterday"}`, newGrant, false},
	{"grant time a number", `{"issuedAt":1}`, newGrant, false},
	{"grant time null", `{"issuedAt":null}`, newGrant, false},
	{"grant unknown field", `{"project":"demo","admin":true}`, newGrant, false},
}

func newClaim() any  { return new(claimBody) }
func newLease() any  { return new(leaseBody) }
func newReport() any { return new(reportBody) }
func newGrant() any  { return new(Grant) }

// TestDecodeFromTree_SameAsJSON checks that decoding from the parse takes the plain
// shapes, declines the rest, and gives what encoding/json gives: the same value (and
// JSON, which a report's digest is taken over) or the same refusal.
func TestDecodeFromTree_SameAsJSON(t *testing.T) {
	t.Parallel()
	for _, tt := range treeCases {
		t.Run(tt.name, func(t *testing.T) {
			took := sameAsJSON(t, []byte(tt.text), tt.into)
			if took != tt.tree {
				t.Fatalf("decodeFromTree(%s) took it = %v, want %v", tt.text, took, tt.tree)
			}
			sameInBody(t, tt.text, tt.into)
		})
	}
}

// FuzzDecodeFromTree compares decoding from the parse with encoding/json on any text,
// into each type it knows.
func FuzzDecodeFromTree(f *testing.F) {
	for _, tt := range treeCases {
		f.Add([]byte(tt.text))
	}
	for _, name := range []string{"claim.json", "renew_lease.json", "release_lease.json", "report_ok.json", "report_unknown.json", "grant.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "work", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, into := range []func() any{newClaim, newLease, newReport, newGrant} {
			sameAsJSON(t, b, into)
			sameInBody(t, string(b), into)
		}
	})
}

// sameAsJSON decodes b into a new value of into's type through decodeChecked and through
// encoding/json after the same checks, fails t unless both give the same value and the
// same error, and reports whether decodeFromTree took b.
func sameAsJSON(t *testing.T, b []byte, into func() any) bool {
	t.Helper()
	n, err := parseStrict(b)
	if err != nil {
		return false // refused before either decode
	}
	one, two := into(), into()
	errOne := decodeChecked(b, n, one)
	errTwo := decodeCheckedJSON(b, n, two)
	if (errOne == nil) != (errTwo == nil) || errOne != nil && (errOne.Error() != errTwo.Error() || CodeOf(errOne) != CodeOf(errTwo)) {
		t.Fatalf("%q into %T: from the tree = %v, through encoding/json = %v", b, one, errOne, errTwo)
	}
	if errOne != nil {
		return false
	}
	if !reflect.DeepEqual(one, two) {
		t.Fatalf("%q into %T: from the tree %+v, through encoding/json %+v", b, one, one, two)
	}
	j1, err1 := json.Marshal(one)
	j2, err2 := json.Marshal(two)
	if (err1 == nil) != (err2 == nil) || string(j1) != string(j2) {
		t.Fatalf("%q into %T: encodes as %s (%v) from the tree, %s (%v) through encoding/json", b, one, j1, err1, j2, err2)
	}
	return decodeFromTree(n, into())
}

// sameInBody decodes text, a /work operation, as the operation of a /work body through
// DecodeStrict — decoded from its part of the body's parse, whose offsets are the
// body's — and fails t unless its request is the one encoding/json decodes from text.
func sameInBody(t *testing.T, text string, into func() any) {
	t.Helper()
	if _, ok := into().(*Grant); ok {
		return
	}
	n, err := parseStrict([]byte(text))
	if err != nil {
		return
	}
	want := into()
	if decodeCheckedJSON([]byte(text), n, want) != nil {
		return
	}
	body := "  {\n \"operation\" :  " + text + " }"
	var w WorkBody
	if err := DecodeStrict([]byte(body), &w); err != nil {
		if CodeOf(err) == CodeWorkBody {
			return // a kind the case does not name: refused as before
		}
		t.Fatalf("%s: %v", body, err)
	}
	var got any
	op := w.Operation
	switch want.(type) {
	case *claimBody:
		if op.Claim == nil {
			return // the text names another kind
		}
		got = &claimBody{Kind: op.Kind, ClaimRequest: *op.Claim}
	case *leaseBody:
		lr := op.RenewLease
		if lr == nil {
			lr = op.ReleaseLease
		}
		if lr == nil {
			return
		}
		got = &leaseBody{Kind: op.Kind, LeaseRequest: *lr}
	case *reportBody:
		if op.Report == nil {
			return
		}
		got = &reportBody{Kind: op.Kind, ReportRequest: *op.Report}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the body's operation decodes to %+v, encoding/json %+v", body, got, want)
	}
}

// decodeCheckedJSON is decodeChecked without decodeFromTree: encoding/json after the
// checks.
func decodeCheckedJSON(b []byte, n *jnode, v any) error {
	t := reflect.TypeOf(v).Elem()
	if err := walkType(n, t, ""); err != nil {
		return err
	}
	if err := decodeJSON(b, v); err != nil {
		return explainDecode(b, n, t, err)
	}
	return nil
}

// TestDecodeStrict_WorkBodyAllocs bounds what decoding a Claim body and a Report body
// allocates: the parse and the value, not encoding/json's second, reflective pass
// (the parse takes 28 of a Claim body's 34 and 35 of a Report's 46; through encoding/json
// they took 47 and 73).
func TestDecodeStrict_WorkBodyAllocs(t *testing.T) {
	grant := strings.Repeat("A", 600) + "." + strings.Repeat("B", 43)
	for _, tt := range []struct {
		name, body string
		most       float64
	}{
		{"claim", `{"operation":{"kind":"Claim","id":"agt_0123456789abcdef.42","workerId":"wkr-1","workerGeneration":7,"grant":"` + grant + `"}}`, 36},
		{"report", `{"operation":{"kind":"Report","id":"agt_0123456789abcdef.42","ok":true,"result":{"rows":[{"path":"data/input.json","size":90}]},"workerId":"wkr-1","workerGeneration":7,"grant":"` + grant + `"}}`, 50},
	} {
		body := []byte(tt.body)
		got := testing.AllocsPerRun(100, func() {
			var w WorkBody
			if err := DecodeStrict(body, &w); err != nil {
				t.Fatal(err)
			}
		})
		if got > tt.most {
			t.Errorf("decoding a %s body allocates %.0f times, want at most %.0f", tt.name, got, tt.most)
		}
	}
}
