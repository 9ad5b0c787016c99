package engine

import "github.com/docketrun/docket/internal/contract"

// ValueOf converts a wire scalar to an engine Value: the one translation the Board and
// the text syntax share.
func ValueOf(v contract.Value) (Value, error) {
	switch v.Kind() {
	case contract.ValueString:
		return String(v.Str()), nil
	case contract.ValueInt:
		return Int(v.Int())
	case contract.ValueFloat:
		return Float(v.Float())
	case contract.ValueBool:
		return Bool(v.Bool()), nil
	}
	return Value{}, contract.Errorf(contract.CodeInvalidArgument, "a value is empty; give a string, number or boolean")
}

// Wire returns v's wire form. Every Value converts: the engine holds only exact
// integers and finite floats, which contract.Value accepts too. The zero Value gives the
// zero contract.Value.
func (v Value) Wire() contract.Value {
	switch v.kind {
	case KindString:
		return contract.StringValue(v.s)
	case KindInt:
		x, _ := contract.IntValue(v.n)
		return x
	case KindFloat:
		x, _ := contract.FloatValue(v.FloatVal())
		return x
	case KindBool:
		return contract.BoolValue(v.BoolVal())
	}
	return contract.Value{}
}
