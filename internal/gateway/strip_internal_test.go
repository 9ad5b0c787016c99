package gateway

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// stripEntry is an entry of a strip with every field set.
func stripEntry() contract.OperationEntry {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	return contract.OperationEntry{Tool: "ApplyAction", Label: "fetch", State: contract.OpDone, At: at, Since: at.Add(time.Second),
		Stage: contract.StageAtWorker, Decision: "approve", Reason: "ok", ReasonCode: contract.CodeWorkRefused,
		Result: json.RawMessage(`{"n":1}`), Summary: "fetch done"}
}

// TestSameEntry shows that two entries of a strip are the same exactly when no field
// differs: each field of contract.OperationEntry changed alone (a field added later
// included, by reflection) makes them differ, and so does a time at the same instant in
// another location, which encodes otherwise.
func TestSameEntry(t *testing.T) {
	x := stripEntry()
	if y := stripEntry(); !sameEntry(x, y) {
		t.Fatalf("sameEntry of two equal entries = false, want true")
	}
	typ := reflect.TypeFor[contract.OperationEntry]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			y := stripEntry()
			v := reflect.ValueOf(&y).Elem().Field(i)
			switch v.Interface().(type) {
			case time.Time:
				v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Nanosecond)))
			case json.RawMessage:
				v.Set(reflect.ValueOf(json.RawMessage(`{"n":2}`)))
			default:
				if v.Kind() != reflect.String {
					t.Fatalf("OperationEntry.%s is a %s, which this test cannot change: make sameEntry compare it and teach the test", f.Name, v.Type())
				}
				v.SetString(v.String() + "x")
			}
			if sameEntry(x, y) {
				t.Errorf("sameEntry of entries differing in %s = true, want false", f.Name)
			}
		})
	}
	y := stripEntry()
	y.At = y.At.In(time.FixedZone("elsewhere", 3600))
	if sameEntry(x, y) {
		t.Errorf("sameEntry of entries whose At is one instant in two locations = true, want false")
	}
}

// TestEncodeStrip shows that a strip is encoded as json.Marshal encodes it, and that the
// last encoding is given again only for a strip of the same entries.
func TestEncodeStrip(t *testing.T) {
	ops := []contract.OperationEntry{stripEntry(), stripEntry()}
	ops[1].State = contract.OpRunning
	first, err := encodeStrip(ops, stripEncoding{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	if string(first.json) != string(want) || first.digest != contract.Sum(want) {
		t.Fatalf("encodeStrip = %s (%s), want %s", first.json, first.digest, want)
	}
	again, err := encodeStrip([]contract.OperationEntry{stripEntry(), ops[1]}, first)
	if err != nil {
		t.Fatal(err)
	}
	if &again.json[0] != &first.json[0] || again.digest != first.digest {
		t.Errorf("encodeStrip of the same entries encoded them again, want the last encoding")
	}
	empty, err := encodeStrip([]contract.OperationEntry{}, stripEncoding{})
	if err != nil {
		t.Fatal(err)
	}
	moved := []contract.OperationEntry{stripEntry(), stripEntry()}
	for _, c := range []struct {
		ops  []contract.OperationEntry
		last stripEncoding
	}{{moved, first}, {ops[:1], first}, {nil, first}, {nil, empty}} {
		got, err := encodeStrip(c.ops, c.last)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(c.ops)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.json) != string(want) || got.digest != contract.Sum(want) {
			t.Errorf("encodeStrip of another strip after %s = %s, want %s", c.last.json, got.json, want)
		}
	}
}
