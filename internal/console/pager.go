package console

import (
	"cmp"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// maxRowsShown bounds the rows of a list a page shows at once, newest first, when the list
// grows only as members make things (Agents, delegates, policy versions, schedules,
// Connections, releases): the rest is a link away, on the server, never all in one page
// (docs/console.md, "Long lists").
const maxRowsShown = 50

// pager is where one page's rows of a list stand, and the links to the others: the
// Events page's pager, for the lists that are not the log.
type pager struct {
	What            string // the rows, plural, as the links name them ("Agents")
	From, To, Total int    // the rows shown, counted from 1, of Total
	Older           string // the address of the next rows; "" on the last page
	Newest          string // the address of the first rows; "" on the first page
}

// More says whether the list has rows on other pages.
func (p pager) More() bool { return p.Older != "" || p.Newest != "" }

// listPage names one paged list of a page: the page's address, the query parameter that
// carries the key of the last row of the page before, and what its rows are.
type listPage struct {
	Path, Param, What string
}

// pageOf returns the rows of items (newest first) the query q asks for: at most n, after
// the row whose key the parameter l.Param names (the last row of the page before; the
// first rows without it), with the pager to the others at l.Path, q's other parameters
// kept. A key no row has any more (a schedule deleted since) is refused with a sentence
// that sends the member to the first page.
func pageOf[T any](q url.Values, l listPage, items []T, key func(T) string, n int) ([]T, pager, error) {
	param, what := l.Param, l.What
	start := 0
	if after := q.Get(param); after != "" {
		i := slices.IndexFunc(items, func(it T) bool { return key(it) == after })
		if i < 0 {
			return nil, pager{}, contract.Errorf(contract.CodeNotFound, "no row %.80q is on the list of %s any more; start again from its first page (%s).", after, what, pageHref(q, l.Path, param, ""))
		}
		start = i + 1
	}
	end := min(start+n, len(items))
	p := pager{What: what, From: start + 1, To: end, Total: len(items)}
	if end < len(items) {
		p.Older = pageHref(q, l.Path, param, key(items[end-1]))
	}
	if start > 0 {
		p.Newest = pageHref(q, l.Path, param, "")
	}
	return items[start:end], p, nil
}

// pageHref is the address path with the query q and param set to after, or without it
// for "": the other filters and pages of q are kept.
func pageHref(q url.Values, path, param, after string) string {
	q = maps.Clone(q)
	if after == "" {
		q.Del(param)
	} else {
		q.Set(param, after)
	}
	u := url.URL{Path: path, RawQuery: q.Encode()}
	return u.String()
}

// newestFirst returns items sorted newest first by the time and key of each, the key
// ordering rows made at the same instant, so that every page of a list reads it in one
// order.
func newestFirst[T any](items []T, of func(T) (time.Time, string)) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int {
		at, ak := of(a)
		bt, bk := of(b)
		return cmp.Or(bt.Compare(at), strings.Compare(bk, ak))
	})
	return out
}
