package console

import (
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// boardBody is what the Board page shows: the search as given and the facts it found.
type boardBody struct {
	Predicate, Args string
	Facts           []factRow
	Truncated       bool
	Limit           int
}

// factRow is one fact of a search, with its tier and who asserted it.
type factRow struct {
	ID, Href, Atom, Kind, Tier string
	By                         who // who asserted it; zero for a derived node
	CaseID                     contract.CaseID
}

// maxFactsShown bounds the facts the Board page lists; a narrower search sees past it.
const maxFactsShown = 100

// pageBoard searches the Board's facts by predicate and arguments (?predicate=, and
// ?args= with one name=value a line), each with its tier and who asserted it. Without a
// predicate it shows the search form alone.
func (s *Server) pageBoard(w http.ResponseWriter, r *http.Request, v visit) error {
	q := r.URL.Query()
	b := boardBody{Predicate: q.Get("predicate"), Args: q.Get("args"), Limit: maxFactsShown}
	pattern, err := factPattern(b.Predicate, strings.Split(b.Args, "\n"))
	if err != nil {
		return err
	}
	if pattern.Predicate == "" {
		// Listing a large Board in the engine's order sorts all of it; a person searching
		// names a predicate first.
		return s.render(w, r, v, http.StatusOK, "board", b)
	}
	got, err := s.auth.Facts(r.Context(), v.caller, v.project, pattern, maxFactsShown)
	if err != nil {
		return err
	}
	b.Truncated = got.Truncated
	var by []contract.Principal
	for _, n := range got.Items {
		by = append(by, n.CreatedBy)
	}
	book, err := s.names(r.Context(), v, by...)
	if err != nil {
		return err
	}
	for _, n := range got.Items {
		row := factRow{ID: n.NodeID, Href: factHref(v.project, n.NodeID), Atom: atomText(n.Atom),
			Kind: string(n.Kind), Tier: n.Tier.String(), CaseID: n.CaseID}
		if n.CreatedBy != "" {
			row.By = book.who(n.CreatedBy)
		}
		b.Facts = append(b.Facts, row)
	}
	return s.render(w, r, v, http.StatusOK, "board", b)
}

// factBody is what a fact's page shows: the node and why it holds.
type factBody struct {
	Node string
	Why  whyTree
}

// pageFact shows one Board node and its derivation tree: the rule of its best
// derivation and its premises, down to what was asserted or attested.
func (s *Server) pageFact(w http.ResponseWriter, r *http.Request, v visit) error {
	node := r.PathValue("node")
	why, err := s.auth.Why(r.Context(), v.caller, v.project, node)
	if err != nil {
		return err
	}
	book, err := s.names(r.Context(), v, whoAsserted(nil, why.Root)...)
	if err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "fact", factBody{Node: node, Why: newWhyTree(book, why)})
}
