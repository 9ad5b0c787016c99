package worker_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/google/go-cmp/cmp"
)

func TestRows(t *testing.T) {
	big, _ := contract.IntValue(contract.MaxExactInt)
	f, _ := contract.FloatValue(1.5)
	tests := []struct {
		name  string
		in    string
		lines bool
		want  []contract.Args
		ok    bool
	}{
		{"object", `{"a":"x","n":9007199254740991,"f":1.5,"b":true,"z":null}`, false,
			[]contract.Args{{"a": contract.StringValue("x"), "n": big, "f": f, "b": contract.BoolValue(true)}}, true},
		{"array", `[{"a":"x"},{"a":"y"}]`, false, []contract.Args{{"a": contract.StringValue("x")}, {"a": contract.StringValue("y")}}, true},
		{"lines", "{\"a\":\"x\"}\n\n{\"a\":\"y\"}\n", true, []contract.Args{{"a": contract.StringValue("x")}, {"a": contract.StringValue("y")}}, true},
		{"nested becomes JSON text", `{"o":{"k":[1,2]}}`, false, []contract.Args{{"o": contract.StringValue(`{"k":[1,2]}`)}}, true},
		{"too large an integer becomes text", `{"n":9007199254740993}`, false, []contract.Args{{"n": contract.StringValue("9007199254740993")}}, true},
		{"array of scalars", `[1,2]`, false, nil, false},
		{"scalar", `7`, false, nil, false},
		{"trailing", `{"a":1} x`, false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := worker.Rows([]byte(tt.in), tt.lines)
			if (err == nil) != tt.ok {
				t.Fatalf("Rows(%q) = %v, want ok %v", tt.in, err, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b contract.Value) bool { return a == b })); tt.ok && diff != "" {
				t.Errorf("Rows(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// FuzzRows checks that adapter output either becomes rows that survive the wire or is
// refused, and never panics.
func FuzzRows(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[{"a":"x"},{"b":[1]}]`, "{\"a\":1}\n{\"b\":2}", `{"n":1e400}`, `[`, `{"a":-0.0}`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, lines bool) {
		rows, err := worker.Rows([]byte(in), lines)
		if err != nil {
			return
		}
		for _, r := range rows {
			for k, v := range r {
				if v.IsZero() {
					t.Fatalf("Rows(%q) kept an empty value in column %q", in, k)
				}
				if _, err := v.MarshalJSON(); err != nil {
					t.Fatalf("Rows(%q) column %q does not marshal: %v", in, k, err)
				}
			}
		}
	})
}
