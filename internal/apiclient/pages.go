package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// maxPages bounds how many pages [All] reads of one list, so that a server whose cursor
// never ends cannot keep a client reading: at the server's largest page it is far more
// than any list a bound of docs/security.md lets grow.
const maxPages = 10_000

// byAgent is the list route path narrowed to agent's items, or path itself when agent is
// empty (every agent's).
func byAgent(path, agent string) string {
	if agent == "" {
		return path
	}
	return path + "?" + url.Values{"agent": {agent}}.Encode()
}

// All returns every item of the list route at path (which may hold a query), page by
// page: each request sends the cursor the page before returned (its next) as ?after=,
// until a page names no next. A cursor that does not move ends the list too, so a server
// that answers the same page again cannot keep All reading.
func All[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	out := []T{}
	after := ""
	for range maxPages {
		p := path
		if after != "" {
			p += sep + url.Values{"after": {after}}.Encode()
		}
		var page contract.Page[T]
		if err := c.Do(ctx, http.MethodGet, p, nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Next == "" || page.Next == after {
			return out, nil
		}
		after = page.Next
	}
	return nil, fmt.Errorf("list %s: more than %d pages; the server's cursor does not end", path, maxPages)
}
