package console

import (
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// handleMetrics serves serve's metrics to a member acting in person. The registry is
// serve's whole: its labels name every project's ids, Connections and queues, so an
// Agent's token or a delegate, which act in one project, are refused it rather than shown
// the others (docs/observability.md).
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	c := caller(r)
	if c.Kind != contract.PrincipalMember || c.IsDelegate() {
		return contract.Errorf(contract.CodeForbidden, "/metrics names every project of this serve, so only a member acting in person reads it; scrape with a member's session token (docket login), not an Agent's token or a delegate's.")
	}
	s.metrics.ServeHTTP(w, r)
	return nil
}
