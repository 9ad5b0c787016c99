package syntax

import (
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// TestFactJSON_Append checks that the lines of WriteFacts asJSON are byte for byte what
// encoding/json writes for the same record, through one writer whose kept parts (the text
// before the arguments, member names, the text after them) must change with the relation,
// the argument names, negation, tier and derivation from one line to the next.
func TestFactJSON_Append(t *testing.T) {
	type record struct {
		Predicate string         `json:"predicate"`
		Args      map[string]any `json:"args"`
		Negated   bool           `json:"negated,omitempty"`
		Tier      string         `json:"tier"`
		Derived   bool           `json:"derived"`
	}
	num := func(i int64) engine.Value {
		v, err := engine.Int(i)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	flt := func(f float64) engine.Value {
		v, err := engine.Float(f)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	atom := func(pred string, neg bool, kv ...any) engine.Atom {
		a := engine.Atom{Pred: pred, Neg: neg}
		for i := 0; i < len(kv); i += 2 {
			a.Args = append(a.Args, engine.Arg{Name: kv[i].(string), Term: engine.Term{Val: kv[i+1].(engine.Value)}})
		}
		return a
	}
	lines := []struct {
		name    string
		atom    engine.Atom
		tier    contract.Tier
		derived bool
	}{
		{"first line", atom("path", false, "from", num(1), "to", num(2)), contract.TierVerified, true},
		{"same relation", atom("path", false, "from", num(2), "to", num(3)), contract.TierVerified, true},
		{"base fact", atom("path", false, "from", num(-7), "to", num(3)), contract.TierVerified, false},
		{"negated", atom("path", true, "from", num(1), "to", num(2)), contract.TierVerified, false},
		{"weaker tier", atom("path", true, "from", num(1), "to", num(2)), contract.TierAsserted, false},
		{"other argument names", atom("path", false, "a", engine.String("x"), "to", num(2)), contract.TierVerified, true},
		{"fewer arguments", atom("path", false, "a", engine.String("x")), contract.TierVerified, true},
		{"escaped string, float, bool", atom("path", false, "a", engine.String(`q"<&>\`), "b", flt(2.5), "c", engine.Bool(true)), contract.TierVerified, true},
		{"other relation", atom("edge", false, "from", num(1), "to", num(2)), contract.TierVerified, false},
		{"no arguments, escaped name", atom("é<x>", false), contract.TierAsserted, true},
		{"large float, false", atom("edge", false, "from", flt(1e21), "to", engine.Bool(false)), contract.TierVerified, false},
	}
	var js factJSON
	for _, l := range lines {
		r := record{Predicate: l.atom.Pred, Args: map[string]any{}, Negated: l.atom.Neg, Tier: l.tier.String(), Derived: l.derived}
		for _, arg := range l.atom.Args {
			r.Args[arg.Name] = arg.Term.Val.Any()
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := js.append(nil, l.atom, l.tier, l.derived); string(got) != string(want) {
			t.Errorf("%s: got %s, want %s", l.name, got, want)
		}
	}
}
