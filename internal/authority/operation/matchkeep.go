package operation

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/docketrun/docket/internal/contract"
)

// A QueryBoard's matches are a function of the Board alone (its pattern, the Case it
// names and its limit read nothing else), and the Board cache's version of a Board
// changes whenever the Board may change (boards.Cache.Read). So the matches read once
// under the Board's lock are kept under that version, and the next QueryBoard of the
// same pattern on the same Board is answered with them: without matching again, and
// without the Board's lock when what the Board cache published is that Board
// (publishedReply), as a QueryBoard of the View alone is (docs/architecture.md, "The
// project state and its driver"). A Board change makes a new version, whose first read
// of each pattern matches under the lock again.

// maxKeptMatches bounds the patterns whose matches a project's ledger keeps, and
// maxKeptMatchBytes the matches kept of one: a larger answer (up to
// board.QueryMaxMatches nodes) is matched each time, so a project keeps at most 512 KB
// of them. An Agent polls a handful of patterns; one left out is matched again.
const (
	maxKeptMatches    = 32
	maxKeptMatchBytes = 16 << 10
)

// keptMatch is a pattern's matches, as QueryBoard answers them, read on the Board of
// version board.
type keptMatch struct {
	board   uint64
	matches json.RawMessage // shared by every answer carrying them, which never change them
}

// queryKey names what a QueryBoard of pattern in Case caseID with at most limit
// matches reads of the Board: the predicate, the negation, each argument in name order
// with its Value's kind and content, caseID and limit, each string written with its
// length first so that no two queries share a key; "" when an argument is an empty
// Value (the Board refuses it), whose matches are then never kept.
func queryKey(pattern contract.Atom, caseID contract.CaseID, limit int) string {
	names := make([]string, 0, len(pattern.Args))
	for n := range pattern.Args {
		names = append(names, n)
	}
	slices.Sort(names)
	b := make([]byte, 0, 64)
	b = appendString(b, pattern.Predicate)
	b = strconv.AppendBool(b, pattern.Negated)
	for _, n := range names {
		v := pattern.Args[n]
		b = appendString(b, n)
		b = append(b, byte(v.Kind()))
		switch v.Kind() {
		case contract.ValueString:
			b = appendString(b, v.Str())
		case contract.ValueInt:
			b = strconv.AppendInt(b, v.Int(), 10)
		case contract.ValueFloat:
			b = strconv.AppendFloat(b, v.Float(), 'g', -1, 64)
		case contract.ValueBool:
			b = strconv.AppendBool(b, v.Bool())
		default:
			return ""
		}
		b = append(b, ';')
	}
	b = appendString(b, string(caseID))
	b = strconv.AppendInt(b, int64(limit), 10)
	return string(b)
}

// appendString appends s to b as its length, a colon and its bytes.
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// keptMatch returns the matches kept of query on the Board of version board, if any.
func (l *ledger) keptMatch(query string, board uint64) (json.RawMessage, bool) {
	l.viewMu.Lock()
	defer l.viewMu.Unlock()
	m, ok := l.matches[query]
	if !ok || m.board != board {
		return nil, false
	}
	return m.matches, true
}

// match returns r's matches on the Board br reads, under its lock: those kept under
// its version, else those r matches on it now, kept under that version when r names
// its query and they are neither a refusal nor larger than maxKeptMatchBytes.
func (l *ledger) match(r reply, br boardRead) (json.RawMessage, error) {
	if r.query != "" {
		if m, ok := l.keptMatch(r.query, br.version); ok {
			return m, nil
		}
	}
	m, err := r.match(br.b)
	if err != nil || r.query == "" || len(m) > maxKeptMatchBytes {
		return m, err
	}
	l.viewMu.Lock()
	defer l.viewMu.Unlock()
	if l.matches == nil {
		l.matches = map[string]keptMatch{}
	}
	if _, ok := l.matches[r.query]; !ok && len(l.matches) >= maxKeptMatches {
		for k := range l.matches {
			delete(l.matches, k)
			break
		}
	}
	l.matches[r.query] = keptMatch{board: br.version, matches: m}
	return m, nil
}
