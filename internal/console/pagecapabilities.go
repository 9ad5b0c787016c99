package console

import (
	"net/http"

	"github.com/docketrun/docket/internal/authority/event"
)

// pageCapabilities shows what the project's installed releases let its agents do: each
// release with its digest, its Case Types, its Actions (parameters, bindings, approval,
// the Tool that runs them) and its rules' text.
func (s *Server) pageCapabilities(w http.ResponseWriter, r *http.Request, v visit) error {
	cs, err := s.auth.Capabilities(r.Context(), v.caller, v.project)
	if err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "capabilities", cs, event.CapabilityInstalled)
}
