package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// capabilitiesBody is what the Capabilities page shows: the installed releases, newest
// first, at most maxRowsShown.
type capabilitiesBody struct {
	Releases []contract.CapabilityContent
	Pager    pager
}

// pageCapabilities shows what the project's installed releases let its agents do: each
// release with its digest, its Case Types, its Actions (parameters, bindings, approval,
// the Tool that runs them) and its rules' text.
func (s *Server) pageCapabilities(w http.ResponseWriter, r *http.Request, v visit) error {
	cs, err := s.auth.Capabilities(r.Context(), v.caller, v.project)
	if err != nil {
		return err
	}
	key := func(c contract.CapabilityContent) string { return c.Release.ID + "@" + c.Release.Version }
	cs = newestFirst(cs, func(c contract.CapabilityContent) (time.Time, string) { return c.Release.CreatedAt, key(c) })
	list := listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/capabilities", Param: "after", What: "releases"}
	var b capabilitiesBody
	if b.Releases, b.Pager, err = pageOf(r.URL.Query(), list, cs, key, maxRowsShown); err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "capabilities", b, event.CapabilityInstalled)
}
