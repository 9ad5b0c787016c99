package contract

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
)

// decodeFromTree decodes n, the strict parse of b, into v, a pointer, as encoding/json
// would (after [walkType] passed n), and reports whether it did. It knows the shapes of
// the wire — structs of named fields, strings, booleans, integers, float64s, pointers,
// slices, maps with string keys and types that read their own JSON — and reports false,
// having written nothing, for anything else and for anything encoding/json would refuse;
// the caller then decodes with encoding/json, whose answer, value or error, stands. It
// exists because a decode through encoding/json parses the text a second time, after
// the strict parse: most of the worker's CPU per action was JSON read twice
// (benchmarks/README.md, "Where a governed action's time goes").
//
// The one thing it runs that may fail after it has written is a type's own
// UnmarshalJSON: it then reports false with v part-written, and encoding/json, decoding
// into v again, meets the same refusal.
func decodeFromTree(b []byte, n *jnode, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	if !fitsTree(n, rv.Type().Elem(), rv.Elem()) {
		return false
	}
	return fillTree(b, n, rv.Elem())
}

// treeUnmarshaler is a wire type that reads itself from its node as its UnmarshalJSON
// reads its text, without parsing the text again; where it reports false, having
// written nothing, its UnmarshalJSON decides.
type treeUnmarshaler interface {
	unmarshalTree(n *jnode) bool
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// treeType is what decodeFromTree knows of a Go type, worked out once per type.
type treeType struct {
	// own is set when the type reads its own JSON: encoding/json hands its UnmarshalJSON
	// the value's text.
	own bool
	// unknown is set when decodeFromTree leaves the type to encoding/json: an interface,
	// an array, a float32, a TextUnmarshaler, json.Number, a struct embedding a pointer,
	// a ",string" field or two fields of one name, and the like.
	unknown bool
	fields  map[string]treeField // a struct's fields by JSON name
	// readsOwn is set when the type or its pointer has an UnmarshalJSON: walkType leaves
	// its JSON to it. (Asked of reflect for every value walked, it was a tenth of a
	// served row's check.)
	readsOwn bool
}

type treeField struct {
	index []int // the field's index path, through the structs it is embedded in
	typ   reflect.Type
}

// treeTypes holds treeTypeOf's answers by type: the types of the wire, a fixed few.
var treeTypes sync.Map

func treeTypeOf(t reflect.Type) *treeType {
	if tt, ok := treeTypes.Load(t); ok {
		return tt.(*treeType)
	}
	tt := readTreeType(t)
	tt.readsOwn = t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
	treeTypes.Store(t, tt)
	return tt
}

func readTreeType(t reflect.Type) *treeType {
	pt := reflect.PointerTo(t)
	switch {
	case t.Kind() != reflect.Pointer && pt.Implements(unmarshalerType):
		// encoding/json finds the method only on a named type's address; an unnamed
		// struct gains one only by embedding, which is left to it. It prefers the
		// method to UnmarshalText (time.Time has both).
		return &treeType{own: t.Name() != "", unknown: t.Name() == ""}
	case pt.Implements(textUnmarshalerType) || t == reflect.TypeFor[json.Number]():
		return &treeType{unknown: true}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return &treeType{unknown: t.Name() != ""}
	case reflect.String, reflect.Bool, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &treeType{}
	case reflect.Slice:
		return &treeType{}
	case reflect.Map:
		k := t.Key()
		return &treeType{unknown: k.Kind() != reflect.String || reflect.PointerTo(k).Implements(textUnmarshalerType)}
	case reflect.Struct:
		return readTreeStruct(t)
	}
	return &treeType{unknown: true}
}

// readTreeStruct reads a struct's fields as encoding/json does, for the structs where
// that is plain: no option but omitempty and omitzero, every name simple and used once,
// embedded only as an untagged struct (not a pointer to one) whose fields are promoted.
func readTreeStruct(t reflect.Type) *treeType {
	out := &treeType{fields: map[string]treeField{}}
	if !addTreeFields(out.fields, t, nil) {
		return &treeType{unknown: true}
	}
	return out
}

// addTreeFields adds the fields of t, a struct embedded at index path at, to fs, and
// reports false for a struct encoding/json would read otherwise than plainly.
func addTreeFields(fs map[string]treeField, t reflect.Type, at []int) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		path := append(append([]int(nil), at...), i)
		if f.Anonymous {
			ft := treeTypeOf(f.Type)
			if tag != "" || f.Type.Kind() != reflect.Struct || ft.unknown || ft.own || !addTreeFields(fs, f.Type, path) {
				return false
			}
			continue
		}
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := cutComma(tag)
		for opts != "" {
			var opt string
			opt, opts, _ = cutComma(opts)
			if opt != "omitempty" && opt != "omitzero" {
				return false
			}
		}
		if name == "" {
			name = f.Name
		}
		if !simpleName(name) {
			return false
		}
		if _, twice := fs[name]; twice {
			return false // encoding/json picks by depth and tag, or neither
		}
		fs[name] = treeField{index: path, typ: f.Type}
	}
	return true
}

func cutComma(s string) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// simpleName reports whether encoding/json takes name, a tag's name, as it is: letters,
// digits, '_', '-' and '.'.
func simpleName(name string) bool {
	for i := range len(name) {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return name != ""
}

// fitsTree reports whether n decodes into a t without error and in a shape fillTree
// writes as encoding/json would. v is the value decoded into, or the zero Value when it
// is a new one: a slice already holding entries is left to encoding/json, which decodes
// into them.
func fitsTree(n *jnode, t reflect.Type, v reflect.Value) bool {
	tt := treeTypeOf(t)
	switch {
	case tt.unknown:
		return false
	case tt.own:
		return true
	}
	switch t.Kind() {
	case reflect.Pointer:
		if n.kind == 'n' {
			return true
		}
		var ev reflect.Value
		if v.IsValid() && !v.IsNil() {
			ev = v.Elem()
		}
		return fitsTree(n, t.Elem(), ev)
	case reflect.String:
		return n.kind == '"'
	case reflect.Bool:
		return n.kind == 'b'
	case reflect.Float64:
		return n.kind == '0'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.kind != '0' {
			return false
		}
		i, err := strconv.ParseInt(n.str, 10, 64)
		return err == nil && !reflect.Zero(t).OverflowInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n.kind != '0' {
			return false
		}
		u, err := strconv.ParseUint(n.str, 10, 64)
		return err == nil && !reflect.Zero(t).OverflowUint(u)
	case reflect.Slice:
		if n.kind == 'n' {
			return true
		}
		if n.kind != '[' || v.IsValid() && !v.IsNil() {
			return false
		}
		for _, k := range n.kids() {
			if !fitsTree(k, t.Elem(), reflect.Value{}) {
				return false
			}
		}
		return true
	case reflect.Map:
		if n.kind == 'n' {
			return true
		}
		if n.kind != '{' {
			return false
		}
		for _, k := range n.kids() {
			if !fitsTree(k, t.Elem(), reflect.Value{}) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if n.kind != '{' {
			return false
		}
		for i, key := range n.keys() {
			f, ok := tt.fields[key]
			if !ok {
				return false // encoding/json refuses the unknown field
			}
			var fv reflect.Value
			if v.IsValid() {
				fv = v.FieldByIndex(f.index)
			}
			if !fitsTree(n.kids()[i], f.typ, fv) {
				return false
			}
		}
		return true
	}
	return false
}

// fillTree writes n into v, settable, as encoding/json does, n having passed fitsTree;
// it reports false when a type's own UnmarshalJSON refused its text.
func fillTree(b []byte, n *jnode, v reflect.Value) bool {
	t := v.Type()
	tt := treeTypeOf(t)
	if tt.own {
		if u, ok := v.Addr().Interface().(treeUnmarshaler); ok && u.unmarshalTree(n) {
			return true
		}
		u, ok := v.Addr().Interface().(json.Unmarshaler)
		return ok && u.UnmarshalJSON(b[n.start:n.end]) == nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if n.kind == 'n' {
			v.SetZero()
			return true
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return fillTree(b, n, v.Elem())
	case reflect.String:
		v.SetString(n.str)
	case reflect.Bool:
		v.SetBool(n.str == "true")
	case reflect.Float64:
		v.SetFloat(n.num)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.str, 10, 64)
		if err != nil {
			return false
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u, err := strconv.ParseUint(n.str, 10, 64)
		if err != nil {
			return false
		}
		v.SetUint(u)
	case reflect.Slice:
		if n.kind == 'n' {
			v.SetZero()
			return true
		}
		s := reflect.MakeSlice(t, len(n.kids()), len(n.kids()))
		for i, k := range n.kids() {
			if !fillTree(b, k, s.Index(i)) {
				return false
			}
		}
		v.Set(s)
	case reflect.Map:
		if n.kind == 'n' {
			v.SetZero()
			return true
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(t, len(n.kids())))
		}
		for i, k := range n.kids() {
			e := reflect.New(t.Elem()).Elem()
			if !fillTree(b, k, e) {
				return false
			}
			key := reflect.New(t.Key()).Elem()
			key.SetString(n.keys()[i])
			v.SetMapIndex(key, e)
		}
	case reflect.Struct:
		fs := treeTypeOf(t).fields
		for i, key := range n.keys() {
			if !fillTree(b, n.kids()[i], v.FieldByIndex(fs[key].index)) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// ScalarObject reads b, one JSON object whose values are all strings, numbers, booleans
// or null, strictly and into the map encoding/json's Decoder with UseNumber reads it to:
// strings as they are, numbers as their json.Number text, null as nil. It reports false
// for any other text, refused or not (an object holding an object or a list, a list, …),
// which is then read as before. A Tool's row is such an object: reading it strictly and
// then again through encoding/json parsed it twice (benchmarks/README.md, "Where a
// governed action's time goes").
func ScalarObject(b []byte) (map[string]any, bool) {
	n, err := parseStrict(b)
	if err != nil || n.kind != '{' {
		return nil, false
	}
	m := make(map[string]any, len(n.keys()))
	for i, k := range n.kids() {
		switch k.kind {
		case '"':
			m[n.keys()[i]] = k.str
		case '0':
			m[n.keys()[i]] = json.Number(k.str)
		case 'b':
			m[n.keys()[i]] = k.str == "true"
		case 'n':
			m[n.keys()[i]] = nil
		default:
			return nil, false
		}
	}
	return m, true
}
