package engine_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// evalBuiltin runs one built-in through Query with constant inputs and returns its result
// (zero for a guard that holds), whether it held, and the error code.
func evalBuiltin(t *testing.T, name string, kv ...any) (engine.Value, bool, contract.Code) {
	t.Helper()
	e := engine.New(engine.Limits{})
	a := at(name, kv...)
	rows, err := e.Query([]engine.Literal{pos(a)})
	if err != nil {
		return engine.Value{}, false, contract.CodeOf(err)
	}
	if len(rows) == 0 {
		return engine.Value{}, false, ""
	}
	return rows[0].Bindings["R"], true, ""
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	i := func(n int64) engine.Value { v, _ := engine.Int(n); return v }
	f := func(x float64) engine.Value { v, _ := engine.Float(x); return v }
	s := engine.String
	tests := []struct {
		name string
		pred string
		kv   []any
		want engine.Value // zero for a guard
		held bool
		code contract.Code
	}{
		{"eq strict int vs string", "eq", []any{"left", 1, "right", "1"}, engine.Value{}, false, ""},
		{"eq strict int vs float", "eq", []any{"left", 1, "right", 1.0}, engine.Value{}, false, ""},
		{"eq equal", "eq", []any{"left", "x", "right", "x"}, engine.Value{}, true, ""},
		{"neq", "neq", []any{"left", 1, "right", 2}, engine.Value{}, true, ""},
		{"lt int float by value", "lt", []any{"left", 1, "right", 1.5}, engine.Value{}, true, ""},
		{"lt strings", "lt", []any{"left", "a", "right", "b"}, engine.Value{}, true, ""},
		{"lt mixed sorts is false", "lt", []any{"left", 1, "right", "2"}, engine.Value{}, false, ""},
		{"gte equal", "gte", []any{"left", 2, "right", 2}, engine.Value{}, true, ""},
		{"between inside", "between", []any{"value", 2, "low", 1, "high", 3}, engine.Value{}, true, ""},
		{"between outside", "between", []any{"value", 4, "low", 1, "high", 3}, engine.Value{}, false, ""},
		{"contains", "contains", []any{"left", "docket", "right", "ck"}, engine.Value{}, true, ""},
		{"contains non-string", "contains", []any{"left", 12, "right", 1}, engine.Value{}, false, ""},
		{"add ints", "add", []any{"left", 2, "right", 3, "result", "R"}, i(5), true, ""},
		{"add mixed gives float", "add", []any{"left", 2, "right", 0.5, "result", "R"}, f(2.5), true, ""},
		{"add overflow refused", "add", []any{"left", engine.MaxExactInt, "right", 1, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"sub", "sub", []any{"left", 2, "right", 5, "result", "R"}, i(-3), true, ""},
		{"mul overflow refused", "mul", []any{"left", 1 << 30, "right", 1 << 30, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"mul exact", "mul", []any{"left", 1250, "right", 2, "result", "R"}, i(2500), true, ""},
		{"div exact", "div", []any{"left", 6, "right", 3, "result", "R"}, i(2), true, ""},
		{"div inexact refused", "div", []any{"left", 7, "right", 2, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"div float", "div", []any{"left", 7, "right", 2.0, "result", "R"}, f(3.5), true, ""},
		{"div by zero refused", "div", []any{"left", 7, "right", 0, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"idiv truncates", "idiv", []any{"left", -7, "right", 2, "result", "R"}, i(-3), true, ""},
		{"imod sign of dividend", "imod", []any{"left", -7, "right", 2, "result", "R"}, i(-1), true, ""},
		{"idiv float refused", "idiv", []any{"left", 7.0, "right", 2, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"mod float", "mod", []any{"left", 7.5, "right", 2, "result", "R"}, f(1.5), true, ""},
		{"pow int", "pow", []any{"left", 2, "right", 10, "result", "R"}, i(1024), true, ""},
		{"pow overflow refused", "pow", []any{"left", 2, "right", 60, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"pow negative exponent is float", "pow", []any{"left", 2, "right", -1, "result", "R"}, f(0.5), true, ""},
		{"min keeps kind", "min", []any{"left", 1, "right", 1.5, "result", "R"}, i(1), true, ""},
		{"max strings", "max", []any{"left", "a", "right", "b", "result", "R"}, s("b"), true, ""},
		{"max mixed refused", "max", []any{"left", "a", "right", 1, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"concat", "concat", []any{"left", "job-", "right", 7, "result", "R"}, s("job-7"), true, ""},
		{"neg", "neg", []any{"value", 3, "result", "R"}, i(-3), true, ""},
		{"abs float", "abs", []any{"value", -2.5, "result", "R"}, f(2.5), true, ""},
		{"sign", "sign", []any{"value", -0.1, "result", "R"}, i(-1), true, ""},
		{"sqrt", "sqrt", []any{"value", 9, "result", "R"}, f(3), true, ""},
		{"sqrt negative refused", "sqrt", []any{"value", -1, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"string operand refused", "add", []any{"left", "1", "right", 1, "result", "R"}, engine.Value{}, false, contract.CodeArithmetic},
		{"bound result checks", "add", []any{"left", 1, "right", 1, "result", 3}, engine.Value{}, false, ""},
		{"wrong arguments", "add", []any{"left", 1, "right", 1, "out", "R"}, engine.Value{}, false, contract.CodeUnknownBuiltin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, held, code := evalBuiltin(t, tt.pred, tt.kv...)
			if code != tt.code || held != tt.held || got != tt.want {
				t.Errorf("%s%v = %v, %v, %q; want %v, %v, %q", tt.pred, tt.kv, got, held, code, tt.want, tt.held, tt.code)
			}
		})
	}
}

func TestInt_Range(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   int64
		code contract.Code
	}{
		{"max", engine.MaxExactInt, ""},
		{"min", -engine.MaxExactInt, ""},
		{"above", engine.MaxExactInt + 1, contract.CodeIntegerRange},
		{"below", -engine.MaxExactInt - 1, contract.CodeIntegerRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.Int(tt.in)
			if got := contract.CodeOf(err); got != tt.code {
				t.Errorf("Int(%d) code = %q, want %q", tt.in, got, tt.code)
			}
		})
	}
	if _, err := engine.Float(math.NaN()); contract.CodeOf(err) != contract.CodeInvalidArgument {
		t.Errorf("Float(NaN) = %v, want invalid_argument", err)
	}
}

func TestQuery_BuiltinsRunWhenBound(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAssert(t, e, fact("c1", attested, at("calculation_input", "job_id", "calc-001", "unit_price_cents", 1250, "quantity", 2, "shipping_cents", 500)))
	// The producers come before the literal that binds their inputs.
	rows, err := e.Query([]engine.Literal{
		pos(at("add", "left", "S", "right", "H", "result", "T")),
		pos(at("mul", "left", "U", "right", "Q", "result", "S")),
		pos(at("calculation_input", "job_id", "J", "unit_price_cents", "U", "quantity", "Q", "shipping_cents", "H")),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("Query = %d rows, want 1", len(rows))
	}
	got := map[string]string{}
	for k, v := range rows[0].Bindings {
		got[k] = v.String()
	}
	want := map[string]string{"J": `"calc-001"`, "U": "1250", "Q": "2", "H": "500", "S": "2500", "T": "3000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c1"}, rows[0].Premises); diff != "" || rows[0].Tier != attested {
		t.Errorf("premises %v tier %v; want [c1] attested", rows[0].Premises, rows[0].Tier)
	}
}
