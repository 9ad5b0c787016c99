package contract_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// decodeCase is one testdata/decode file: a batch, "-- want --", then "ok" or the code
// DecodeBatch must refuse it with.
type decodeCase struct {
	name  string
	input []byte
	want  string
}

func decodeCases(t testing.TB) []decodeCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "decode", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no decode cases in testdata/decode: %v", err)
	}
	var out []decodeCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in, want, ok := bytes.Cut(data, []byte("\n-- want --\n"))
		if !ok {
			t.Fatalf("%s has no \"-- want --\" separator", f)
		}
		out = append(out, decodeCase{name: strings.TrimSuffix(filepath.Base(f), ".txt"), input: in, want: strings.TrimSpace(string(want))})
	}
	return out
}

func TestDecodeBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contract.DecodeBatch(tc.input)
			got := "ok"
			if err != nil {
				got = string(contract.CodeOf(err))
				if e, ok := errors.AsType[*contract.Error](err); !ok || e.Teaching == "" {
					t.Errorf("DecodeBatch(%s) = %v, want a *contract.Error with a teaching sentence", tc.name, err)
				}
			}
			if got != tc.want {
				t.Errorf("DecodeBatch(%s) = %q (%v), want %q", tc.input, got, err, tc.want)
			}
		})
	}
}

func TestDecodeBatch_HostMetadataNamed(t *testing.T) {
	t.Parallel()
	_, err := contract.DecodeBatch([]byte(`{"operations":[{"op":"retract_node","nodeId":"a","agentId":"x"}]}`))
	if !strings.Contains(err.Error(), `"agentId"`) {
		t.Errorf("DecodeBatch refusal = %v, want it to name \"agentId\"", err)
	}
}

func TestDecodeBatch_Bounds(t *testing.T) {
	t.Parallel()
	ops := strings.Repeat(`{"op":"retract_node","nodeId":"a"},`, contract.MaxBatchOps)
	tests := []struct {
		name  string
		input string
		want  contract.Code
	}{
		{"too many ops", `{"operations":[` + ops + `{"op":"retract_node","nodeId":"a"}]}`, contract.CodeBatchTooLarge},
		{"too many bytes", `{"operations":[{"op":"retract_node","nodeId":"` + strings.Repeat("a", contract.MaxBatchBytes) + `"}]}`, contract.CodeBatchTooLarge},
		{"string too long", `{"operations":[{"op":"assert_fact","atom":{"predicate":"p","args":{"s":"` + strings.Repeat("x", contract.MaxStringBytes+1) + `"}}}]}`, contract.CodeBatchTooLarge},
		{"op index in teaching", `{"operations":[{"op":"retract_node","nodeId":"a"},{"op":"assert_fact"}]}`, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := contract.DecodeBatch([]byte(tt.input))
			if got := contract.CodeOf(err); got != tt.want {
				t.Fatalf("DecodeBatch = %v, want code %s", err, tt.want)
			}
		})
	}
	_, err := contract.DecodeBatch([]byte(`{"operations":[{"op":"retract_node","nodeId":"a"},{"op":"assert_fact"}]}`))
	var opErr *contract.OpError
	if !errors.As(err, &opErr) || opErr.Index != 1 || !strings.HasPrefix(err.Error(), "invalid_argument: operation 1 (assert_fact)") {
		t.Errorf("DecodeBatch = %v, want an OpError for operation 1 whose teaching names it", err)
	}
}

func TestValue_JSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want contract.Value
		code contract.Code
	}{
		{"integer", `42`, mustInt(t, 42), ""},
		{"negative integer", `-7`, mustInt(t, -7), ""},
		{"float with point", `42.0`, mustFloat(t, 42), ""},
		{"float with exponent", `4e2`, mustFloat(t, 400), ""},
		{"string", `"42"`, contract.StringValue("42"), ""},
		{"variable string", `"?x"`, contract.VarValue("x"), ""},
		{"bool", `true`, contract.BoolValue(true), ""},
		{"max exact", `9007199254740991`, mustInt(t, contract.MaxExactInt), ""},
		{"past max exact", `9007199254740992`, contract.Value{}, contract.CodeIntegerRange},
		{"float overflow", `1e999`, contract.Value{}, contract.CodeInvalidArgument},
		{"null", `null`, contract.Value{}, contract.CodeInvalidArgument},
		{"list", `[1]`, contract.Value{}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got contract.Value
			err := got.UnmarshalJSON([]byte(tt.in))
			if contract.CodeOf(err) != tt.code {
				t.Fatalf("UnmarshalJSON(%s) = %v, want code %q", tt.in, err, tt.code)
			}
			if got != tt.want {
				t.Errorf("UnmarshalJSON(%s) = %v, want %v", tt.in, got, tt.want)
			}
			if tt.code != "" {
				return
			}
			back, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var again contract.Value
			if err := again.UnmarshalJSON(back); err != nil || again != got {
				t.Errorf("round trip of %s gave %s → %v (%v)", tt.in, back, again, err)
			}
		})
	}
}

// FuzzDecodeBatch checks that DecodeBatch never panics, refuses only with a code and a
// teaching sentence, and that what it accepts encodes and decodes to the same batch.
func FuzzDecodeBatch(f *testing.F) {
	for _, tc := range decodeCases(f) {
		f.Add(tc.input)
	}
	if golden, err := os.ReadFile(filepath.Join("testdata", "batch.json")); err == nil {
		f.Add(golden)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := contract.DecodeBatch(data)
		if err != nil {
			e, ok := errors.AsType[*contract.Error](err)
			if !ok || e.Code == "" || e.Teaching == "" {
				t.Fatalf("DecodeBatch refused without a code and teaching: %v", err)
			}
			return
		}
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshal accepted batch: %v", err)
		}
		if len(enc) > contract.MaxBatchBytes {
			return // escaping grew it past the bound; the bound refusal is tested above
		}
		again, err := contract.DecodeBatch(enc)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", enc, err)
		}
		if diff := cmp.Diff(b, again, valueEqual); diff != "" {
			t.Fatalf("round trip changed the batch (-first +second):\n%s", diff)
		}
	})
}

// TestValue_StringAsMarshal: a string Value is written exactly as json.Marshal writes the
// string (the plain ones without its encoder, in one allocation), escapes and all.
func TestValue_StringAsMarshal(t *testing.T) {
	for _, s := range []string{"", "item", "calc-001", "a b/c:d", "~!@#$%^*()_+=-{}[]|;',.?`",
		`quote"`, `back\slash`, "<tag>", "a&b", "tab\t", "nl\n", "\x00", "\x7f", "é", "日本", "\u2028", "\xff", "ok\xc3"} {
		got, err := contract.StringValue(s).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("StringValue(%q) writes %s, json.Marshal %s", s, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = contract.StringValue("calc-001").MarshalJSON() }); n > 1 {
		t.Errorf("a plain string Value allocates %v times to write, want 1", n)
	}
}
