package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// blueprintsBody is what the Blueprints page shows: the project's blueprints, each with
// the form that makes an Agent's profile from it, and the live Agents the form offers.
type blueprintsBody struct {
	Blueprints []contract.Blueprint
	Agents     []contract.Agent
	Failed     string // the blueprint whose form was refused
	Error      string // why
}

// blueprintPageEvents bring the Blueprints page up to date.
var blueprintPageEvents = []string{event.BlueprintSet, event.BlueprintRemoved, event.AgentCreated, event.AgentRevoked}

func (s *Server) blueprintPages() {
	s.page("GET /projects/{project}/blueprints", "agents", s.pageBlueprints)
	s.page("POST /projects/{project}/blueprints/{blueprint}/profile", "agents", s.pageProfileFromBlueprint)
}

func (s *Server) pageBlueprints(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showBlueprints(w, r, v, http.StatusOK, blueprintsBody{})
}

func (s *Server) showBlueprints(w http.ResponseWriter, r *http.Request, v visit, status int, b blueprintsBody) error {
	ctx := r.Context()
	bs, err := s.auth.Blueprints(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	as, err := s.ids.Agents(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	b.Blueprints = bs
	for _, a := range as {
		if a.RevokedAt == nil {
			b.Agents = append(b.Agents, a)
		}
	}
	return s.render(w, r, v, status, "blueprints", b, blueprintPageEvents...)
}

// pageProfileFromBlueprint sets the chosen Agent's profile to a copy of the blueprint, at
// the digest the page showed, and goes to the Agent's page; a refusal is shown on the
// blueprint's form with its teaching. The model is not probed from here: the page runs
// on serve's machine, not the runtime's, where the key file is.
func (s *Server) pageProfileFromBlueprint(w http.ResponseWriter, r *http.Request, v visit) error {
	name := r.PathValue("blueprint")
	from := contract.FromBlueprint{Blueprint: name, KeyFile: strings.TrimSpace(r.PostFormValue("keyFile")), Enabled: r.PostFormValue("enabled") == "1"}
	if raw := r.PostFormValue("digest"); raw != "" {
		d, err := contract.ParseDigest(raw)
		if err != nil {
			return contract.Errorf(contract.CodeInvalidArgument, "the form's digest is not the blueprint's; load the Blueprints page again and send its form.")
		}
		from.Digest = &d
	}
	p, err := s.auth.SetAgentProfileFromBlueprint(r.Context(), v.caller, v.project, r.PostFormValue("agent"), from)
	if err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok && httpStatus(ce.Code) < http.StatusInternalServerError {
			return s.showBlueprints(w, r, v, httpStatus(ce.Code), blueprintsBody{Failed: name, Error: ce.Teaching})
		}
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(string(p.Agent)), noticeProfileFromBlueprint)
}
