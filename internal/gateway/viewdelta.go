package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/docketrun/docket/internal/contract"
)

// viewIndex is what a session remembers of the View a conversation was last sent, so
// that the next one can be answered as a [contract.ViewDelta]: each list's entries by
// key and the digest of each entry's JSON. It holds no entry itself, so it stays small
// (≈ 50 bytes an entry) beside a held call.
type viewIndex struct {
	digest    contract.Digest
	position  contract.Position
	decisions bool // the View lists decisions
	lists     [viewLists]listIndex
}

// The View's lists, in the order of its JSON.
const (
	listCases = iota
	listCaseTypes
	listRoots
	listNodes
	listActions
	listDecisions
	viewLists
)

// listIndex is one list of a viewIndex.
type listIndex struct {
	null      bool // the list's items are JSON null (an empty list is [])
	truncated bool
	keys      []string
	sums      []contract.Digest
}

// viewEncoding is a View encoded once: its JSON, exactly as json.Marshal writes it, its
// digest, and its index when one was asked for.
type viewEncoding struct {
	body   []byte
	digest contract.Digest
	index  *viewIndex
	strip  stripEncoding // set by toolResult: the answer's strip of Operations encoded
}

// viewCache keeps the encodings of the Views the authority's answers name by
// [operation.Answer.ViewKey], so that an Agent polling an unchanged Board has its View
// encoded and digested once, not at every answer. A View left out is encoded again.
type viewCache struct {
	mu    sync.Mutex
	byKey map[uint64]viewEncoding // at most maxCachedViews
}

// maxCachedViews bounds the encodings a viewCache keeps: each holds a View's JSON.
const maxCachedViews = 32

// encode is encodeView(v, index) for the View the answers name by key (0: none, encoded
// each time). The encoding is shared: its body and index are never changed.
func (c *viewCache) encode(key uint64, v contract.View, index bool) (viewEncoding, error) {
	if c == nil || key == 0 {
		return encodeView(v, index)
	}
	c.mu.Lock()
	enc, ok := c.byKey[key]
	c.mu.Unlock()
	if !ok || (index && enc.index == nil) {
		var err error
		if enc, err = encodeView(v, index); err != nil {
			return viewEncoding{}, err
		}
		c.mu.Lock()
		if c.byKey == nil {
			c.byKey = map[uint64]viewEncoding{}
		}
		if _, ok := c.byKey[key]; !ok && len(c.byKey) >= maxCachedViews {
			for k := range c.byKey {
				delete(c.byKey, k)
				break
			}
		}
		c.byKey[key] = enc
		c.mu.Unlock()
	}
	if !index {
		enc.index = nil // an index only for a client that applies deltas
	}
	return enc, nil
}

// encodeView encodes v. With index it encodes each list entry on its own, to digest it,
// and builds the View's JSON from those pieces, so that no entry is encoded twice; the
// bytes equal json.Marshal(v) (TestEncodeView_AsMarshal). Without index it is
// json.Marshal.
func encodeView(v contract.View, index bool) (viewEncoding, error) {
	if !index {
		b, err := json.Marshal(v)
		if err != nil {
			return viewEncoding{}, fmt.Errorf("encode view: %w", err)
		}
		return viewEncoding{body: b, digest: contract.Sum(b)}, nil
	}
	ix := &viewIndex{position: v.Position, decisions: v.Decisions != nil}
	var buf bytes.Buffer
	buf.Grow(4096)
	buf.WriteString(`{"position":`)
	if err := json.NewEncoder(&buf).Encode(v.Position); err != nil {
		return viewEncoding{}, fmt.Errorf("encode view position: %w", err)
	}
	buf.Truncate(buf.Len() - 1) // Encode ends each value with a newline
	// The lists in the order of contract.View's fields; decisions only when listed
	// (omitempty).
	lists := []struct {
		name string
		put  func() error
	}{
		{"cases", func() error { return encodeList(&buf, &ix.lists[listCases], v.Cases, contract.ViewKey) }},
		{"caseTypes", func() error { return encodeList(&buf, &ix.lists[listCaseTypes], v.CaseTypes, contract.ViewKey) }},
		{"roots", func() error { return encodeList(&buf, &ix.lists[listRoots], v.Roots, contract.ViewKey) }},
		{"nodes", func() error { return encodeList(&buf, &ix.lists[listNodes], v.Nodes, contract.ViewKey) }},
		{"actions", func() error { return encodeList(&buf, &ix.lists[listActions], v.Actions, contract.ViewKey) }},
		{"decisions", func() error { return encodeList(&buf, &ix.lists[listDecisions], *v.Decisions, contract.ViewKey) }},
	}
	for _, l := range lists {
		if l.name == "decisions" && v.Decisions == nil {
			continue
		}
		buf.WriteString(`,"` + l.name + `":`)
		if err := l.put(); err != nil {
			return viewEncoding{}, fmt.Errorf("encode view %s: %w", l.name, err)
		}
	}
	buf.WriteByte('}')
	b := buf.Bytes()
	ix.digest = contract.Sum(b)
	return viewEncoding{body: b, digest: ix.digest, index: ix}, nil
}

// encodeList writes list as json.Marshal writes a contract.Bounded, indexing its entries
// in l. Each entry is encoded straight into buf (a json.Encoder escapes as json.Marshal
// does), so no entry's JSON is copied.
func encodeList[T any](buf *bytes.Buffer, l *listIndex, list contract.Bounded[T], key func(T) string) error {
	l.null, l.truncated = list.Items == nil, list.Truncated
	l.keys = make([]string, len(list.Items))
	l.sums = make([]contract.Digest, len(list.Items))
	if l.null {
		buf.WriteString(`{"items":null`)
	} else {
		enc := json.NewEncoder(buf)
		buf.WriteString(`{"items":[`)
		for i, it := range list.Items {
			if i > 0 {
				buf.WriteByte(',')
			}
			start := buf.Len()
			if err := enc.Encode(it); err != nil {
				return err
			}
			buf.Truncate(buf.Len() - 1) // Encode ends each value with a newline
			l.keys[i], l.sums[i] = key(it), contract.Sum(buf.Bytes()[start:])
		}
		buf.WriteByte(']')
	}
	if list.Truncated {
		buf.WriteString(`,"truncated":true}`)
	} else {
		buf.WriteString(`,"truncated":false}`)
	}
	return nil
}

// viewDelta returns the delta that makes the View indexed by from into v, indexed by to,
// and whether there is one worth sending: false when a list's keys are not unique, the
// order of the entries kept changed, a list's form (null or []) changed in a way the
// delta cannot carry, decisions appeared or went, or nothing at all was kept.
func viewDelta(from, to *viewIndex, v contract.View) (contract.ViewDelta, bool) {
	if from.decisions != to.decisions {
		return contract.ViewDelta{}, false
	}
	d := contract.ViewDelta{From: from.digest}
	if to.position != from.position {
		p := v.Position
		d.Position = &p
	}
	kept, total := 0, 0
	ok := true
	step := func(k, n int, good bool) {
		kept, total, ok = kept+k, total+n, ok && good
	}
	step(listDelta(&from.lists[listCases], &to.lists[listCases], v.Cases, &d.Cases))
	step(listDelta(&from.lists[listCaseTypes], &to.lists[listCaseTypes], v.CaseTypes, &d.CaseTypes))
	step(listDelta(&from.lists[listRoots], &to.lists[listRoots], v.Roots, &d.Roots))
	step(listDelta(&from.lists[listNodes], &to.lists[listNodes], v.Nodes, &d.Nodes))
	step(listDelta(&from.lists[listActions], &to.lists[listActions], v.Actions, &d.Actions))
	if v.Decisions != nil {
		step(listDelta(&from.lists[listDecisions], &to.lists[listDecisions], *v.Decisions, &d.Decisions))
	}
	if !ok || kept == 0 && total > 0 {
		return contract.ViewDelta{}, false
	}
	return d, true
}

// listDelta sets d to the change from the list indexed by from to list, indexed by to.
// It returns how many entries were kept, how many list has, and whether the change can
// be sent as a delta (see viewDelta).
func listDelta[T any](from, to *listIndex, list contract.Bounded[T], d *contract.ListDelta[T]) (int, int, bool) {
	// [contract.ViewDelta.Apply] gives an empty list the form of the held one.
	if len(list.Items) == 0 && from.null != to.null {
		return 0, 0, false
	}
	held, ok := sumsByKey(from)
	if !ok {
		return 0, 0, false
	}
	now, ok := sumsByKey(to)
	if !ok {
		return 0, 0, false
	}
	var keptNew, keptOld []string
	for i, k := range to.keys {
		if s, ok := held[k]; ok && s == to.sums[i] {
			keptNew = append(keptNew, k)
			continue
		}
		d.Added = append(d.Added, contract.Placed[T]{At: i, Item: list.Items[i]})
	}
	for i, k := range from.keys {
		if s, ok := now[k]; ok && s == from.sums[i] {
			keptOld = append(keptOld, k)
			continue
		}
		d.Removed = append(d.Removed, k)
	}
	if !slices.Equal(keptOld, keptNew) {
		return 0, 0, false
	}
	if from.truncated != to.truncated {
		t := to.truncated
		d.Truncated = &t
	}
	return len(keptNew), len(to.keys), true
}

// sumsByKey maps l's keys to their entries' digests; false when a key is there twice.
func sumsByKey(l *listIndex) (map[string]contract.Digest, bool) {
	m := make(map[string]contract.Digest, len(l.keys))
	for i, k := range l.keys {
		if _, dup := m[k]; dup {
			return nil, false
		}
		m[k] = l.sums[i]
	}
	return m, true
}
