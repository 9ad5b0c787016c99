package event

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// sameAsUnmarshal fails t unless got and gotErr are what json.Unmarshal of b into a zero
// T gives.
func sameAsUnmarshal[T any](t *testing.T, b []byte, got T, gotErr error) {
	t.Helper()
	var want T
	wantErr := json.Unmarshal(b, &want)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("decode of %q: error %v, json.Unmarshal's %v", b, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decode of %q:\n got %#v\nwant %#v (json.Unmarshal's)", b, got, want)
	}
}

// flatSeeds are the payloads of typ's golden files, as the log holds them, and a few
// shapes the fast path must leave to json.Unmarshal.
func flatSeeds(t *testing.F, typ string, extra ...string) {
	files, err := filepath.Glob(filepath.Join("testdata", typ+"*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files of %s: %v", typ, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Add(b)
	}
	for _, s := range append(extra, `{}`, `null`, ` { } `, `[]`, `{"agent":null}`, `{"agent":"a","agent":"b"}`,
		`{"Agent":"a"}`, `{"agent":"a\u00e9"}`, "{\"agent\":\"a\xff\"}", `{"ordinal":1.5}`, `{"ordinal":"1"}`,
		`{"ordinal":-0}`, `{"ordinal":99999999999999999999}`, `{"judged":1}`, `{"work":"w",}`, `{"x":{"y":[1,{"z":"}"}]}}`) {
		t.Add([]byte(s))
	}
}

func FuzzDecodeOperation(f *testing.F) {
	flatSeeds(f, "operation.", `{"agent":"a","ordinal":2,"input":{"a": [1, 2]},"result":null}`,
		`{"execution":{"action":"x","args":{"path":"a"}},"execution":{"tool":"t"}}`, `{"execution":null}`, `{"execution":{"args":7}}`,
		` {"agent" : "a" , "ordinal" : 3 , "result" : [ 1 ] } `,
		`{"execution":{"sourceTypes":[],"bound":["a","b"],"args":{"a":1,"b":true,"c":"x","a":2.5}}}`,
		`{"execution":{"sourceTypes":null}}`, `{"execution":{"args":{"a":null}}}`, `{"execution":{"args":{"a":[1]}}}`,
		`{"execution":{"sourceTypes":[ "a" , "b" ]}}`, `{"execution":{"kind":"read","kind":"write"}}`, `{"execution":{"args":{}}}`)
	b, err := json.Marshal(Operation{Agent: "agt_1", Ordinal: 7, Tool: "ApplyAction", Label: "ApplyAction <load> & more", Input: json.RawMessage(`{"action":"load"}`),
		State: contract.OpDone, Stage: contract.StageAtWorker, Decision: "approve", Reason: "ok", ReasonCode: "c", ErrorCode: "e",
		Result: json.RawMessage(`{"rows":[{"a":"b"}]}`), Execution: &contract.ExecutionRequest{Action: "load", Tool: "t.x@1", Args: contract.Args{"path": contract.StringValue("a")}},
		RetryOf: 3, Attempt: 2, TraceParent: "00-abc-def-01"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeOperation(b)
		sameAsUnmarshal(t, b, got, err)
	})
}

func FuzzDecodeWorkClaimed(f *testing.F) {
	flatSeeds(f, "work.claimed", `{"source":null}`, `{"source":{"tier":"nope"}}`, `{"workerGeneration":1e3}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeWorkClaimed(b)
		sameAsUnmarshal(t, b, got, err)
	})
}

func FuzzDecodeWorkReported(f *testing.F) {
	flatSeeds(f, "work.reported", `{"judged":false,"judged":true}`, `{"judged":"true"}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeWorkReported(b)
		sameAsUnmarshal(t, b, got, err)
	})
}

// TestDecodeOperation_FastPath checks that what the authority writes (json.Marshal of
// its payloads) is decoded without json.Unmarshal of the whole payload, and that a
// payload the fast path does not take still decodes as json.Unmarshal decodes it.
func TestDecodeOperation_FastPath(t *testing.T) {
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		b    string
		fast bool
	}{
		{"an admission as written", mustMarshal(t, Operation{Agent: "agt_1", Ordinal: 1, Tool: "ApplyAction", Label: "ApplyAction load",
			Input: json.RawMessage(`{"action":"load"}`), State: contract.OpRunning, Stage: contract.StageNotDispatched,
			Execution: &contract.ExecutionRequest{Action: "load", Tool: "t.x@1", Kind: "read", Args: contract.Args{"path": contract.StringValue("a")}}}), true},
		{"a settlement as written", mustMarshal(t, Operation{Agent: "agt_1", Ordinal: 1, State: contract.OpDone, Result: json.RawMessage(`{"ok":true}`)}), true},
		{"spaces between the members", ` { "agent" : "a" , "ordinal" : 1 } `, true},
		{"an escape in a string", `{"agent":"a\"b"}`, false},
		{"a null", `{"result":null}`, false},
		{"a key in other letter case", `{"AGENT":"a"}`, false},
		{"a key twice", `{"agent":"a","agent":"b"}`, false},
		{"an unknown key", `{"agent":"a","at":"` + at.Format(time.RFC3339) + `"}`, false},
		{"a number not whole", `{"ordinal":1.0}`, false},
		{"invalid text", `{"agent":"a"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Operation
			if fast := json.Valid([]byte(tt.b)) && readFlat([]byte(tt.b), &d, operationFields[:]); fast != tt.fast {
				t.Fatalf("fast path took %q: %v, want %v", tt.b, fast, tt.fast)
			}
			got, err := DecodeOperation([]byte(tt.b))
			sameAsUnmarshal(t, []byte(tt.b), got, err)
		})
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// BenchmarkDecodeOperation decodes an admission and a settlement as the authority writes
// them, with the fast path (fast) and with json.Unmarshal alone (unmarshal).
func BenchmarkDecodeOperation(b *testing.B) {
	payloads := [][]byte{
		[]byte(`{"agent":"agt_9501f16295023c16","ordinal":12,"tool":"ApplyAction","label":"ApplyAction load","input":{"action":"load","params":{"path":"data/input.json"}},"state":"running","stage":"not_dispatched","execution":{"action":"load","tool":"test.files@1","kind":"read","sourceTypes":["file"],"approval":"none","args":{"path":"data/input.json"}}}`),
		[]byte(`{"agent":"agt_9501f16295023c16","ordinal":12,"state":"done","stage":"at_worker","result":{"rows":[{"job_id":"calc-001","quantity":2,"shipping_cents":3000,"unit_price_cents":129900}]}}`),
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range payloads {
				if _, err := DecodeOperation(p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range payloads {
				var d Operation
				if err := json.Unmarshal(p, &d); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
