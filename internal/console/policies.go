package console

import (
	"context"
	"net/http"
	"strconv"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// policyBook is the part of the authority the console needs for published policies.
type policyBook interface {
	PublishPolicy(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.PublishPolicyRequest) (contract.PolicyVersion, error)
	Policies(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.PolicyVersion, error)
	Policy(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.PolicyKind, n int64) (contract.PolicyVersion, error)
	PolicyDiff(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.PolicyKind, from, to int64) (contract.PolicyDiff, error)

	AgentAutonomy(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.Autonomy, error)
	SetAgentLevel(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, req contract.SetLevelRequest) (contract.Autonomy, error)
	OpenRunWindow(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, req contract.OpenWindowRequest) (contract.Autonomy, error)
}

// maxPolicyBody bounds a publication's body in bytes: the document (internal/policy.MaxText)
// JSON-escaped, and its file name.
const maxPolicyBody = 160 << 10

// policyShape teaches the body of a publication.
const policyShape = `send one JSON object {"file": "delegation.toml", "text": "<the policy document>"}; docket policy publish FILE does`

// policyRoutes adds the policy and autonomy routes when the server has a policy book.
func (s *Server) policyRoutes() {
	if s.pol == nil {
		return
	}
	s.handle("GET /api/v1/projects/{project}/policies", s.handlePolicies, authed)
	s.handle("POST /api/v1/projects/{project}/policies", s.handlePublishPolicy, authed)
	s.handle("GET /api/v1/projects/{project}/policies/{kind}", s.handlePolicy, authed)
	s.handle("GET /api/v1/projects/{project}/policies/{kind}/diff", s.handlePolicyDiff, authed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/autonomy", s.handleAutonomy, authed)
	s.handle("PUT /api/v1/projects/{project}/agents/{agent}/level", s.handleSetLevel, authed)
	s.handle("POST /api/v1/projects/{project}/agents/{agent}/windows", s.handleOpenWindow, authed)
}

// handlePolicies lists every version of every policy kind, without their text.
func (s *Server) handlePolicies(w http.ResponseWriter, r *http.Request) error {
	vs, err := s.pol.Policies(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, vs, func(v contract.PolicyVersion) string { return string(v.Kind) + "@" + strconv.FormatInt(v.Version, 10) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handlePublishPolicy publishes a member's policy document as the next version of its
// kind. A body that does not decode is refused with the shape to send.
func (s *Server) handlePublishPolicy(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.PublishPolicyRequest](w, r, maxPolicyBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: policyShape, Err: err}
	}
	if err != nil {
		return err
	}
	v, err := s.pol.PublishPolicy(r.Context(), caller(r), project(r), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, v)
}

// handlePolicy returns one version of a kind with its text: ?version=N, or the one in
// force.
func (s *Server) handlePolicy(w http.ResponseWriter, r *http.Request) error {
	kind, err := policyKind(r)
	if err != nil {
		return err
	}
	n, err := queryInt(r, "version")
	if err != nil {
		return err
	}
	v, err := s.pol.Policy(r.Context(), caller(r), project(r), kind, n)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// handlePolicyDiff returns the line difference between ?from=N and ?to=M of a kind (to
// defaults to the version in force).
func (s *Server) handlePolicyDiff(w http.ResponseWriter, r *http.Request) error {
	kind, err := policyKind(r)
	if err != nil {
		return err
	}
	from, err := queryInt(r, "from")
	if err != nil {
		return err
	}
	if from == 0 {
		return contract.Errorf(contract.CodeInvalidArgument, "name the version to compare from with ?from=N (1 is the built-in one).")
	}
	to, err := queryInt(r, "to")
	if err != nil {
		return err
	}
	d, err := s.pol.PolicyDiff(r.Context(), caller(r), project(r), kind, from, to)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}

// policyKind reads the {kind} of the path.
func policyKind(r *http.Request) (contract.PolicyKind, error) {
	k := contract.PolicyKind(r.PathValue("kind"))
	for _, known := range contract.PolicyKinds {
		if k == known {
			return k, nil
		}
	}
	return "", contract.Errorf(contract.CodeNotFound, "%.40q is not a policy kind; use delegation, autonomy, recovery or delegate.", string(k))
}
