package console

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// policiesBody is what the Policies page shows: every version of every kind, the text of
// one, a diff between two, the publish form, and each Agent's autonomy with its forms.
type policiesBody struct {
	Kinds    []policyKindRow
	Shown    *contract.PolicyVersion // the version whose text is shown
	Diff     *contract.PolicyDiff
	File     string // the publish form's fields, kept after a refusal
	Text     string
	Error    string        // why the publish form was refused: the file:line and its teaching
	Agents   []autonomyRow // live Agents, newest first, at most maxRowsShown
	AgentsPg pager
	Ack      string // the acknowledgement the autonomy policy in force asks for; "" for none
	AgentErr string // why a level or window form was refused
	// Retention says how long an artifact an Agent keeps now can be read, and whose
	// retention that is; "" when the server keeps no artifacts.
	Retention string
}

// retentionReader is the part of the Operations the Policies page asks how long the
// project's artifacts are kept (docs/mcp.md, "Artifacts").
type retentionReader interface {
	ArtifactRetention(ctx context.Context, c identity.Caller, project contract.ProjectID) (time.Duration, bool, error)
}

// retentionWords says keep in days when it is whole days, else as a duration.
func retentionWords(keep time.Duration, fromPolicy bool) string {
	n := keep.String()
	if keep%(24*time.Hour) == 0 {
		n = strconv.FormatInt(int64(keep/(24*time.Hour)), 10) + " days"
	}
	if fromPolicy {
		return "An artifact an Agent keeps now can be read for " + n + ", as the project's artifact policy in force sets."
	}
	return "An artifact an Agent keeps now can be read for " + n + ", the server's retention: publish an [artifact_policy] with retention_days to set the project's own."
}

// policyKindRow is one kind with its versions, newest first (the first page starts with
// the one in force), at most maxRowsShown.
type policyKindRow struct {
	Kind     contract.PolicyKind
	Versions []contract.PolicyVersion
	InForce  int64
	Pager    pager
}

// autonomyRow is one Agent with its level and run windows.
type autonomyRow struct {
	Agent    contract.Agent
	Autonomy contract.Autonomy
	Windows  []windowView
}

// windowView is a run window with who opened it, by name.
type windowView struct {
	contract.RunWindow
	By who
}

// pagePolicies shows the policies page: ?kind=K&version=N picks the text shown (the one
// in force by default), ?from=A&to=B a diff of that kind.
func (s *Server) pagePolicies(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showPolicies(w, r, v, http.StatusOK, policiesBody{})
}

func (s *Server) showPolicies(w http.ResponseWriter, r *http.Request, v visit, status int, b policiesBody) error {
	if s.pol == nil {
		return contract.Errorf(contract.CodeNotFound, "this server publishes no policies.")
	}
	ctx := r.Context()
	vs, err := s.pol.Policies(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	path := "/projects/" + url.PathEscape(string(v.project)) + "/policies"
	for _, k := range contract.PolicyKinds {
		row := policyKindRow{Kind: k}
		var all []contract.PolicyVersion
		for _, pv := range vs {
			if pv.Kind == k {
				all = append(all, pv)
				row.InForce = max(row.InForce, pv.Version)
			}
		}
		slices.SortFunc(all, func(a, b contract.PolicyVersion) int { return cmp.Compare(b.Version, a.Version) })
		// Each kind pages on its own parameter, so that the pages of one keep the others'.
		list := listPage{Path: path, Param: string(k) + "_after", What: string(k) + " versions"}
		if row.Versions, row.Pager, err = pageOf(r.URL.Query(), list, all, func(pv contract.PolicyVersion) string { return strconv.FormatInt(pv.Version, 10) }, maxRowsShown); err != nil {
			return err
		}
		b.Kinds = append(b.Kinds, row)
	}
	if rr, ok := s.arts.(retentionReader); ok {
		keep, fromPolicy, err := rr.ArtifactRetention(ctx, v.caller, v.project)
		if err != nil {
			return err
		}
		b.Retention = retentionWords(keep, fromPolicy)
	}
	q := r.URL.Query()
	kind := contract.PolicyDelegation
	if k := q.Get("kind"); k != "" {
		if kind, err = pageKind(k); err != nil {
			return err
		}
	}
	n, err := pageInt(q, "version")
	if err != nil {
		return err
	}
	shown, err := s.pol.Policy(ctx, v.caller, v.project, kind, n)
	if err != nil {
		return err
	}
	b.Shown = &shown
	from, err := pageInt(q, "from")
	if err != nil {
		return err
	}
	if from > 0 {
		to, err := pageInt(q, "to")
		if err != nil {
			return err
		}
		d, err := s.pol.PolicyDiff(ctx, v.caller, v.project, kind, from, to)
		if err != nil {
			return err
		}
		b.Diff = &d
	}
	as, err := s.ids.Agents(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	as = slices.DeleteFunc(as, func(a contract.Agent) bool { return a.RevokedAt != nil })
	as = newestFirst(as, func(a contract.Agent) (time.Time, string) { return a.CreatedAt, string(a.ID) })
	list := listPage{Path: path, Param: "agents_after", What: "Agents"}
	if as, b.AgentsPg, err = pageOf(r.URL.Query(), list, as, func(a contract.Agent) string { return string(a.ID) }, maxRowsShown); err != nil {
		return err
	}
	var openers []contract.Principal
	for _, a := range as {
		au, err := s.pol.AgentAutonomy(ctx, v.caller, v.project, string(a.ID))
		if err != nil {
			return err
		}
		for _, w := range au.Windows {
			openers = append(openers, w.OpenedBy)
		}
		b.Agents = append(b.Agents, autonomyRow{Agent: a, Autonomy: au})
		b.Ack = au.Acknowledgement // the same for every Agent: the policy in force's
	}
	book, err := s.names(ctx, v, openers...)
	if err != nil {
		return err
	}
	for i := range b.Agents {
		for _, w := range b.Agents[i].Autonomy.Windows {
			b.Agents[i].Windows = append(b.Agents[i].Windows, windowView{RunWindow: w, By: book.who(w.OpenedBy)})
		}
	}
	return s.render(w, r, v, status, "policies", b)
}

// pageKind reads a page's ?kind= as a policy kind.
func pageKind(k string) (contract.PolicyKind, error) {
	for _, known := range contract.PolicyKinds {
		if string(known) == k {
			return known, nil
		}
	}
	return "", contract.Errorf(contract.CodeInvalidArgument, "%.40q is not a policy kind; use delegation, autonomy, recovery or delegate.", k)
}

// pageInt reads a page's whole-number query parameter; absent is 0.
func pageInt(q url.Values, name string) (int64, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, contract.Errorf(contract.CodeInvalidArgument, "%s is a version number, 1 or more.", name)
	}
	return n, nil
}

// shownRefusal returns the teaching of a refusal a form shows on its page, or err itself
// when it is not one a person can correct there.
func shownRefusal(err error) (string, int, error) {
	if ce, ok := errors.AsType[*contract.Error](err); ok && httpStatus(ce.Code) < http.StatusInternalServerError {
		return ce.Teaching, httpStatus(ce.Code), nil
	}
	return "", 0, err
}

// pagePublishPolicy publishes the pasted document as the next version of its kind; a
// malformed one is shown again with its file:line refusal.
func (s *Server) pagePublishPolicy(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.pol == nil {
		return contract.Errorf(contract.CodeNotFound, "this server publishes no policies.")
	}
	file := strings.TrimSpace(r.PostFormValue("file"))
	if file == "" {
		file = "policy.toml"
	}
	text := r.PostFormValue("text")
	pv, err := s.pol.PublishPolicy(r.Context(), v.caller, v.project, contract.PublishPolicyRequest{File: file, Text: text})
	if err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		return s.showPolicies(w, r, v, status, policiesBody{File: file, Text: text, Error: msg})
	}
	http.Redirect(w, r, s.policiesPath(v)+"?"+withNotice(url.Values{"kind": {string(pv.Kind)}}, noticePolicyPublished), http.StatusSeeOther)
	return nil
}

// pageSetLevel sets an Agent's autonomy level, with the acknowledgement when the policy
// in force asks for it.
func (s *Server) pageSetLevel(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.pol == nil {
		return contract.Errorf(contract.CodeNotFound, "this server publishes no policies.")
	}
	req := contract.SetLevelRequest{Level: r.PostFormValue("level")}
	if r.PostFormValue("acknowledge") == "yes" {
		req.Acknowledgement = r.PostFormValue("acknowledgement")
	}
	au, err := s.pol.SetAgentLevel(r.Context(), v.caller, v.project, r.PathValue("agent"), req)
	if err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		return s.showPolicies(w, r, v, status, policiesBody{AgentErr: msg})
	}
	return redirectNotice(w, r, s.policiesPath(v), levelNotices[au.Level])
}

// pageOpenWindow opens a run window of the form's minutes for an Agent.
func (s *Server) pageOpenWindow(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.pol == nil {
		return contract.Errorf(contract.CodeNotFound, "this server publishes no policies.")
	}
	m, err := strconv.ParseInt(strings.TrimSpace(r.PostFormValue("minutes")), 10, 64)
	if err != nil {
		return s.showPolicies(w, r, v, http.StatusBadRequest, policiesBody{AgentErr: "minutes is a whole number from 1 to 1440."})
	}
	_, err = s.pol.OpenRunWindow(r.Context(), v.caller, v.project, r.PathValue("agent"), contract.OpenWindowRequest{Minutes: m})
	if err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		return s.showPolicies(w, r, v, status, policiesBody{AgentErr: msg})
	}
	return redirectNotice(w, r, s.policiesPath(v), noticeWindowOpened)
}

// policiesPath is the Policies page of the visit's project.
func (s *Server) policiesPath(v visit) string {
	return "/projects/" + url.PathEscape(string(v.project)) + "/policies"
}
