package operation

import (
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// maxKeptViews bounds the Views a project's ledger keeps, one per principal: an Agent
// polling QueryBoard on an unchanged Board is answered the View it was last built, and a
// principal left out only has its next View built again.
const maxKeptViews = 64

// viewKey is what a View answered to principal is built from: the Board (its version in
// the Board cache), the policies in force at the log's head, the ledger's setup and
// allow-lists at its sequence number, and the focus.
type viewKey struct {
	principal contract.Principal
	board     uint64
	head      int64
	ledger    int64
	focus     string
}

// keptView is a View kept under its key, the focused roots answered with it, and the
// number answers carry it under.
type keptView struct {
	key   viewKey
	view  contract.View
	roots []contract.FocusedRoot
	id    uint64
}

// focusKey is focus as one comparable value.
func focusKey(focus []contract.CaseID) string {
	var b strings.Builder
	for _, id := range focus {
		b.WriteString(string(id))
		b.WriteByte(0)
	}
	return b.String()
}

// keptView returns the View kept under key, if any.
func (l *ledger) keptView(key viewKey) (keptView, bool) {
	l.viewMu.Lock()
	defer l.viewMu.Unlock()
	v, ok := l.views[key.principal]
	return v, ok && v.key == key
}

// keepView keeps v under key, as the View of key's principal; past maxKeptViews
// another principal's is dropped.
func (l *ledger) keepView(key viewKey, v keptView) {
	l.viewMu.Lock()
	defer l.viewMu.Unlock()
	if l.views == nil {
		l.views = map[contract.Principal]keptView{}
	}
	if _, ok := l.views[key.principal]; !ok && len(l.views) >= maxKeptViews {
		for k := range l.views {
			delete(l.views, k)
			break
		}
	}
	v.key = key
	l.views[key.principal] = v
}
