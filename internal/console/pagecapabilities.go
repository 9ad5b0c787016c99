package console

import "net/http"

// Event type of an install in the project's log.
const evCapabilityInstalled = "capability.installed"

// pageCapabilities shows what the project's installed releases let its agents do: each
// release with its digest, its Case Types, its Actions (parameters, bindings, approval,
// the Tool that runs them) and its rules' text.
func (s *Server) pageCapabilities(w http.ResponseWriter, r *http.Request, v visit) error {
	cs, err := s.auth.Capabilities(r.Context(), v.caller, v.project)
	if err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "capabilities", cs, evCapabilityInstalled)
}
