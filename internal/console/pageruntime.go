package console

import (
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// pageSetRuntime starts or stops an Agent's runtime from its page: it sets
// its profile's enabled flag, which docket start follows within seconds, starting or
// stopping the supervised runtime. The page does not reach the runtime itself.
func (s *Server) pageSetRuntime(w http.ResponseWriter, r *http.Request, v visit) error {
	var on bool
	switch r.PostFormValue("enabled") {
	case "1":
		on = true
	case "0":
	default:
		return contract.Errorf(contract.CodeInvalidArgument, "send enabled 1 (start the runtime) or 0 (stop it), as the Agent's page does.")
	}
	ctx := r.Context()
	p, err := s.auth.AgentProfile(ctx, v.caller, v.project, r.PathValue("agent"))
	if err != nil {
		return err
	}
	p.Enabled = on
	if _, err := s.auth.SetAgentProfile(ctx, v.caller, v.project, string(p.Agent), p.ProfileSpec); err != nil {
		return err
	}
	n := noticeRuntimeStops
	if on {
		n = noticeRuntimeStarts
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(string(p.Agent)), n)
}
