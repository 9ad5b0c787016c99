package syntax

import (
	"bytes"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// decodeLineStd decodes one facts line with encoding/json, as ParseJSONFacts did before it
// had its own reader: the reference the reader must never be looser than.
func decodeLineStd(line []byte) (engine.Fact, error) {
	p := Pos{File: "f", Line: 1, Col: 1}
	var j jsonFact
	if err := decodeStrict(p, line, &j); err != nil {
		return engine.Fact{}, err
	}
	tier := contract.TierAsserted
	if j.Tier != "" {
		var err error
		if tier, err = contract.ParseTier(j.Tier); err != nil {
			return engine.Fact{}, err
		}
	}
	a, err := engineAtom(p, contract.Atom{Predicate: j.Predicate, Args: j.Args, Negated: j.Negated}, false)
	return engine.Fact{Atom: a, Tier: tier}, err
}

// FuzzFactReader checks the reader against encoding/json: whatever it accepts, encoding/json
// accepts as the same fact (the reader may refuse more: duplicate or case-variant names,
// invalid UTF-8, lone surrogates, null).
func FuzzFactReader(f *testing.F) {
	for _, s := range []string{
		`{"predicate": "p", "args": {"x": 1, "y": "a\u00e9\ud83d\ude00", "z": 1.5e3, "w": -0.0}, "tier": "attested", "negated": true}`,
		`{"args": {"b": false, "a": "\"\\\/\b\f\n\r\t"}, "predicate": "q"}`,
		`{"predicate": "p", "args": {"x": 9007199254740991, "y": -9007199254740991, "z": 1E-2}}`,
		`{"predicate": "p", "args": {}, "tier": ""}`,
		`{"predicate": "p", "Args": {}}`,
		`{"predicate": "p", "args": {"x": "\ud800"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 || len(bytes.TrimSpace(line)) == 0 {
			return
		}
		r := &factReader{file: "f", line: 1, src: line, names: map[string]string{}}
		got, err := r.fact()
		if err != nil {
			if contract.CodeOf(err) == "" {
				t.Fatalf("reader error %v has no code", err)
			}
			return
		}
		want, err := decodeLineStd(line)
		if err != nil {
			t.Fatalf("the reader accepts %q as %v; encoding/json refuses it: %v", line, got.Atom, err)
		}
		if diff := cmp.Diff(want.Atom.String(), got.Atom.String()); diff != "" || want.Tier != got.Tier {
			t.Fatalf("the reader reads %q as %v %v; encoding/json as %v %v", line, got.Atom, got.Tier, want.Atom, want.Tier)
		}
	})
}
