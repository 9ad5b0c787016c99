package contract

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// servedCases are /work answers for ServedWork: rows that decode, rows refused in each
// way, parts refused in each way, and answers refused whole.
var servedCases = []string{
	`{"accepted":true}`,
	`{"accepted":false,"errorCode":"worker_lease_expired","teaching":"t"}`,
	`{"accepted":true,"work":null}`,
	`{"accepted":true,"work":[]}`,
	`{"accepted":true,"work":[` + row + `]}`,
	`{"accepted":true,"work":[` + row + `,` + row + `]}`,
	`{"accepted":true,"work":[` + row + `,{"id":1},null,[],"x",` + strings.Replace(row, `"id":"w-1"`, `"id":"w-1","admin":true`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `,"grant":"eyJ9.AAAA"`, ``, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `"grant"`, `"Grant"`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"path":"a.json"}`, `{"path":null}`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"path":"a.json"}`, `{"path":{"a":1}}`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"path":"a.json"}`, `[1]`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"path":"a.json"}`, `{"n":9007199254740993}`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"path":"a.json"}`, `{"n":1.5,"b":true,"s":"\u00e9"}`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `"source":""`, `"source":"","extra":1`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `"source":""`, `"source":null`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `"source":""`, `"Source":""`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"tool":"t@1","digest":"sha256:aa","kind":"read"}`, `"spec"`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `{"tool":"t@1","digest":"sha256:aa","kind":"read"}`, `{"tool":1}`, 1) + `]}`,
	`{"accepted":true,"work":[` + strings.Replace(row, `"id":"w-1"`, `"id":"w-1","id":"w-2"`, 1) + `]}`,
	`{"accepted":true,"work":{}}`,
	`{"accepted":true,"lease":{"workerId":"w","workerGeneration":3,"expiresAt":"2026-11-30T03:00:30Z","serverTime":"2026-11-30T03:00:00Z","heartbeatAfterMs":10}}`,
	`{"accepted":true,"lease":{"workerId":"w","expiresAt":"soon"}}`,
	`{"accepted":true,"admin":true}`,
	"\n{\"accepted\": true,\n \"work\": [\n" + row + "\n]}\n",
	`[]`, `null`, ``, `{"accepted":true}{}`,
}

// servedViaRows is a /work answer read as before ServedWork: the answer with its rows as
// text, then each row, then each row's parts, each decoded from its own bytes.
func servedViaRows(b []byte) (ServedWork, error) {
	var a servedAnswer
	if err := DecodeStrict(b, &a); err != nil {
		return ServedWork{}, err
	}
	w := ServedWork{Accepted: a.Accepted, Code: a.Code, Teaching: a.Teaching, Lease: a.Lease}
	if a.Work != nil {
		w.Rows = make([]ServedRow, len(a.Work))
	}
	for i, raw := range a.Work {
		s := ServedRow{Raw: raw}
		if s.Err = DecodeStrict(raw, &s.Row); s.Err == nil {
			s.Parts = s.Row.Parts()
		}
		w.Rows[i] = s
	}
	return w, nil
}

// sameAsRows fails t unless ServedWork decodes b as servedViaRows does: the same
// answer, rows, parts and refusals.
func sameAsRows(t *testing.T, b []byte) {
	t.Helper()
	var got ServedWork
	errGot := DecodeStrict(b, &got)
	want, errWant := servedViaRows(b)
	if errText(errGot) != errText(errWant) {
		t.Fatalf("%q: ServedWork = %s, row by row = %s", b, errText(errGot), errText(errWant))
	}
	if errGot != nil {
		return
	}
	if g, w := servedText(got), servedText(want); g != w {
		t.Fatalf("%q: ServedWork decodes\n%s\nrow by row\n%s", b, g, w)
	}
	if !reflect.DeepEqual(got.Lease, want.Lease) {
		t.Fatalf("%q: ServedWork's lease %+v, row by row %+v", b, got.Lease, want.Lease)
	}
	for i := range got.Rows {
		g, w := got.Rows[i], want.Rows[i]
		if !reflect.DeepEqual(g.Row, w.Row) || !reflect.DeepEqual(g.Parts.Target, w.Parts.Target) ||
			!reflect.DeepEqual(g.Parts.ToolSpec, w.Parts.ToolSpec) || !reflect.DeepEqual(g.Parts.Args, w.Parts.Args) {
			t.Fatalf("%q: row %d: ServedWork %+v, row by row %+v", b, i, g, w)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s (code %q)", err, CodeOf(err))
}

// servedText writes w's answer, rows and refusals as text.
func servedText(w ServedWork) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "accepted %v code %q teaching %q lease %v rows %v\n", w.Accepted, w.Code, w.Teaching, w.Lease != nil, w.Rows != nil)
	for i, r := range w.Rows {
		fmt.Fprintf(&sb, "%d: raw %s\n  err %s\n  target %s spec %s args %s\n", i, r.Raw, errText(r.Err),
			errText(r.Parts.TargetErr), errText(r.Parts.ToolSpecErr), errText(r.Parts.ArgsErr))
		row, _ := json.Marshal(r.Row)
		fmt.Fprintf(&sb, "  row %s args %v\n", row, r.Parts.Args)
	}
	return sb.String()
}

// TestServedWork_SameAsRowByRow checks that ServedWork, which decodes an answer's rows
// and their parts from one parse, decodes and refuses each as decoding it from its own
// bytes does.
func TestServedWork_SameAsRowByRow(t *testing.T) {
	t.Parallel()
	for _, c := range servedCases {
		sameAsRows(t, []byte(c))
	}
	b, err := os.ReadFile(filepath.Join("testdata", "work", "answer_poll.json"))
	if err != nil {
		t.Fatal(err)
	}
	sameAsRows(t, b)
}

// TestServedWork_OneParse checks that a served row and its parts are decoded from the
// answer's parse: the row's text is not parsed again.
func TestServedWork_OneParse(t *testing.T) {
	b := []byte(`{"accepted":true,"work":[` + row + `]}`)
	allocs := testing.AllocsPerRun(20, func() {
		var w ServedWork
		if err := DecodeStrict(b, &w); err != nil || w.Rows[0].Err != nil {
			t.Fatalf("DecodeStrict = %v, row %v", err, w.Rows[0].Err)
		}
	})
	viaRows := testing.AllocsPerRun(20, func() {
		if _, err := servedViaRows(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs >= viaRows*3/4 {
		t.Fatalf("ServedWork allocates %.0f times, decoding row by row %.0f: the row is parsed again", allocs, viaRows)
	}
}

// FuzzServedWork compares ServedWork with decoding an answer row by row, on any text.
func FuzzServedWork(f *testing.F) {
	for _, c := range servedCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsRows(t, b) })
}
