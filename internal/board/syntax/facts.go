package syntax

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// The printer of a fixpoint's facts and of its counts, as docket rules eval writes them
// (docs/cli.md); the caller owns the writer and its buffer.

// Only returns the filter of [engine.Engine.Stream] that lets through the relations
// names: pred, or ~pred for its strong negation; nil, every relation, when names is empty.
func Only(names []string) func(pred string, neg bool) bool {
	if len(names) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, name := range names {
		want[name] = true
	}
	return func(pred string, neg bool) bool {
		if neg {
			return want["~"+pred]
		}
		return want[pred]
	}
}

// WriteFacts streams the facts of eng that keep lets through to w, one a line, as they
// are read from the fixpoint (docs/cli.md, docket rules eval): the tier, base or
// derived, and the atom; or, asJSON, one object a line as encoding/json would write
// {"predicate","args","negated"(when set),"tier","derived"}. Give w a buffer: each fact
// is one Write.
func WriteFacts(w io.Writer, eng *engine.Engine, keep func(pred string, neg bool) bool, asJSON bool) error {
	var line []byte
	var js factJSON
	return eng.Stream(keep, func(en engine.Entry) error {
		derived := en.Derived && !en.Base
		line = line[:0]
		if asJSON {
			line = js.append(line, en.Atom, en.Tier, derived)
		} else {
			how := "base"
			if derived {
				how = "derived"
			}
			line = appendPadded(line, en.Tier.String(), 9)
			line = appendPadded(line, how, 7)
			line = AppendAtom(line, en.Atom)
		}
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	})
}

// appendPadded appends s, padded with spaces to width, and one space.
func appendPadded(b []byte, s string, width int) []byte {
	b = append(b, s...)
	for n := len(s); n < width; n++ {
		b = append(b, ' ')
	}
	return append(b, ' ')
}

// WriteCounts writes to w one line a predicate of eng: its name and how many facts it
// holds, or asJSON {"predicate","facts"}. With only, just those predicates are written,
// each of them, 0 when it holds none.
func WriteCounts(w io.Writer, eng *engine.Engine, only []string, asJSON bool) error {
	keep := Only(only)
	counts := map[string]int{}
	var names []string
	for _, r := range eng.Relations() {
		if keep != nil && !keep(r.Pred, r.Neg) {
			continue
		}
		name := r.Pred
		if r.Neg {
			name = "~" + name
		}
		counts[name] = r.Facts
		names = append(names, name)
	}
	for _, name := range only {
		if _, ok := counts[name]; !ok {
			counts[name] = 0
			names = append(names, name)
		}
	}
	// p before ~p, as the engine orders relations.
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(strings.Compare(strings.TrimPrefix(a, "~"), strings.TrimPrefix(b, "~")), strings.Compare(a, b))
	})
	names = slices.Compact(names)
	for _, name := range names {
		var err error
		if asJSON {
			_, err = fmt.Fprintf(w, "{\"predicate\":%s,\"facts\":%d}\n", AppendJSONString(nil, name), counts[name])
		} else {
			_, err = fmt.Fprintf(w, "%s %d\n", name, counts[name])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// factJSON writes the lines of [WriteFacts] asJSON, byte for byte as encoding/json
// would write {"predicate","args"(sorted),"negated"(when set),"tier","derived"}, keeping
// what the lines of one relation share: the text before the arguments, each argument's
// member name, and the text after them. Stream gives a relation's facts one after the
// other, and escaping those parts again for each of 500,500 facts cost a third of writing
// the line.
type factJSON struct {
	pred   string
	neg    bool
	tier   contract.Tier
	der    bool
	ok     bool     // head and tail are set
	head   []byte   // {"predicate":…,"args":{
	names  []string // the argument names keys were made for
	keys   [][]byte // each argument's member name and colon, after a comma but the first
	tail   []byte   // }, "negated", "tier", "derived" and }
	tailOK bool
}

func (j *factJSON) append(b []byte, a engine.Atom, tier contract.Tier, derived bool) []byte {
	if !j.ok || a.Pred != j.pred {
		j.pred, j.ok, j.tailOK = a.Pred, true, false
		j.head = AppendJSONString(append(j.head[:0], `{"predicate":`...), a.Pred)
		j.head = append(j.head, `,"args":{`...)
	}
	if !j.tailOK || a.Neg != j.neg || tier != j.tier || derived != j.der {
		j.neg, j.tier, j.der, j.tailOK = a.Neg, tier, derived, true
		j.tail = append(j.tail[:0], '}')
		if a.Neg {
			j.tail = append(j.tail, `,"negated":true`...)
		}
		j.tail = append(j.tail, `,"tier":`...)
		j.tail = AppendJSONString(j.tail, tier.String())
		j.tail = append(j.tail, `,"derived":`...)
		j.tail = strconv.AppendBool(j.tail, derived)
		j.tail = append(j.tail, '}')
	}
	b = append(b, j.head...)
	for i, arg := range a.Args { // sorted by name, as encoding/json sorts map keys
		if i == len(j.names) {
			j.names, j.keys = append(j.names, ""), append(j.keys, nil)
		}
		if j.keys[i] == nil || j.names[i] != arg.Name {
			j.names[i] = arg.Name
			k := j.keys[i][:0]
			if i > 0 {
				k = append(k, ',')
			}
			j.keys[i] = append(AppendJSONString(k, arg.Name), ':')
		}
		b = append(b, j.keys[i]...)
		b = AppendJSONValue(b, arg.Term.Val)
	}
	return append(b, j.tail...)
}
