package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// toolsBody is what the Tools page shows: each live Connection's inventory, newest first.
type toolsBody struct {
	Connections []toolsView
	Pager       pager
	Workbench   *Workbench // docket start's forms that add Tools to its worker; nil under serve alone
	Error       string     // why the last form was refused
}

// toolsView is one Connection on the Tools page: its Tools, its Sources, and the
// predicates its Tools' facts may carry, which a Source binding is offered.
type toolsView struct {
	contract.ConnectionTools
	Rows       []toolRow
	Bound      []sourceRow
	Predicates []string
	Local      bool // the Connection docket start runs a worker for
}

// sourceRow is one bound Source as the page shows it, with what the worker's vault says
// of it: "yes", "no", or "" when no worker reported its vault.
type sourceRow struct {
	contract.SourceEntry
	Held string
}

// toolRow is one Tool as the page shows it.
type toolRow struct {
	contract.ToolEntry
	Slug        string // the Tool's id as the page's element ids carry it: letters, digits, '-' and '_'
	Kind        string
	Origin      string // built-in, manifest or MCP
	Description string
	Params      []contract.ToolParam
	Returns     []string
	Facts       []contract.ToolFact
	SourceTypes []string
	Digest      string // the digest advertised now, which Lock locks; "" when not advertised
	Approval    string // the lock's approval; "" when not locked
	Approvals   []string
}

// approvals are what a Tool's direct Action may need, as the page offers them.
var approvals = []string{"none", "person"}

// toolsEvents bring the Tools page up to date.
var toolsEvents = []string{event.LeaseAcquired, event.LeaseReleased, event.ToolLocked, event.ToolUnlocked, event.ToolApprovalSet, event.SourceBound}

// toolPages registers the Tools page and its forms.
func (s *Server) toolPages() {
	s.page("GET /projects/{project}/tools", "tools", s.pageTools)
	s.page("POST /projects/{project}/tools/{connection}/sources", "tools", s.pageBindSource)
	s.page("POST /projects/{project}/tools/{connection}/{act}", "tools", s.pageToolAct)
}

// pageTools shows every live Connection's Tools and Sources with the forms that lock,
// unlock, set an approval and bind a Source.
func (s *Server) pageTools(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showTools(w, r, v, http.StatusOK, toolsBody{})
}

func (s *Server) showTools(w http.ResponseWriter, r *http.Request, v visit, status int, b toolsBody) error {
	ctx := r.Context()
	cs, err := s.ids.Connections(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	cs = slices.DeleteFunc(cs, func(c contract.Connection) bool { return c.RevokedAt != nil })
	cs = newestFirst(cs, func(c contract.Connection) (time.Time, string) { return c.CreatedAt, string(c.ID) })
	list := listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/tools", Param: "after", What: "Connections"}
	if cs, b.Pager, err = pageOf(r.URL.Query(), list, cs, func(c contract.Connection) string { return string(c.ID) }, maxRowsShown); err != nil {
		return err
	}
	b.Workbench = s.workbench
	for _, c := range cs {
		inv, err := s.auth.ToolInventory(ctx, v.caller, v.project, string(c.ID))
		if err != nil {
			return err
		}
		b.Connections = append(b.Connections, toolsViewOf(inv, s.workbench != nil && c.Name == localConnection))
	}
	return s.render(w, r, v, status, "tools", b, toolsEvents...)
}

// localConnection is the Connection whose worker docket start runs (workbench.Connection).
const localConnection = "local"

// toolsViewOf arranges a Connection's inventory for the page.
func toolsViewOf(inv contract.ConnectionTools, local bool) toolsView {
	tv := toolsView{ConnectionTools: inv, Local: local}
	preds := map[string]bool{}
	for _, e := range inv.Tools {
		row := toolRow{ToolEntry: e, Slug: slug(e.Tool), Approvals: approvals}
		d := e.Advertised
		if d == nil && e.Lock != nil {
			d = e.Lock.Descriptor
		}
		if d != nil {
			row.Kind, row.Description, row.Params, row.Returns, row.Facts, row.SourceTypes = d.Kind, d.Description, d.Params, d.Returns, d.Facts, d.SourceTypes
			row.Origin = originOf(*d)
			for _, f := range d.Facts {
				preds[f.Predicate] = true
			}
		}
		if e.Advertised != nil {
			row.Digest = e.Advertised.Digest
		}
		if e.Lock != nil {
			row.Approval = e.Lock.Approval
			if !slices.Contains(approvals, row.Approval) && row.Approval != "" {
				row.Approvals = append(slices.Clone(approvals), row.Approval) // a delegation class it was locked with
			}
		}
		tv.Rows = append(tv.Rows, row)
	}
	for _, e := range inv.Sources {
		row := sourceRow{SourceEntry: e}
		if e.InVault != nil {
			row.Held = map[bool]string{true: "yes", false: "no"}[*e.InVault]
		}
		tv.Bound = append(tv.Bound, row)
	}
	for p := range preds {
		tv.Predicates = append(tv.Predicates, p)
	}
	slices.Sort(tv.Predicates)
	return tv
}

// originOf says where a Tool comes from: built into the worker, declared in its
// manifest, or a tool of an MCP server the manifest names.
func originOf(d contract.ToolDescriptor) string {
	switch {
	case strings.HasPrefix(string(d.Tool), "docket."):
		return "built-in"
	case d.Adapter == "mcp":
		return "MCP"
	default:
		return "manifest"
	}
}

// pageToolAct locks, unlocks or sets the approval of one Tool of a Connection. Lock
// locks the digest the page showed: a worker that since advertises another is refused
// (the page then shows the new one).
func (s *Server) pageToolAct(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx, conn := r.Context(), r.PathValue("connection")
	tool := r.PostFormValue("tool")
	var err error
	var n notice
	switch r.PathValue("act") {
	case "lock":
		_, err = s.auth.LockTool(ctx, v.caller, v.project, conn, contract.ToolLock{Tool: tool, Digest: r.PostFormValue("digest"), Approval: r.PostFormValue("approval")})
		n = noticeToolLocked
	case "unlock":
		_, err = s.ids.UnlockTool(ctx, v.caller, v.project, conn, tool)
		n = noticeToolUnlocked
	case "approval":
		_, err = s.ids.SetToolApproval(ctx, v.caller, v.project, conn, tool, r.PostFormValue("approval"))
		n = noticeToolApproval
	default:
		return contract.Errorf(contract.CodeNotFound, "a Tool is locked, unlocked or given an approval; %q is none of these.", r.PathValue("act"))
	}
	if err != nil {
		return s.toolsRefused(w, r, v, err)
	}
	s.backToTools(w, r, v, n)
	return nil
}

// pageBindSource binds a Source on a Connection: its name, type and tier, and the
// predicates it may attest, ticked from those the Connection's Tools return.
func (s *Server) pageBindSource(w http.ResponseWriter, r *http.Request, v visit) error {
	conn := r.PathValue("connection")
	tier, err := contract.ParseTier(r.PostFormValue("tier"))
	if err != nil {
		return s.toolsRefused(w, r, v, contract.Errorf(contract.CodeInvalidArgument, "choose the Source's tier from the list (attested, unless you know better)."))
	}
	src := contract.Source{Name: strings.TrimSpace(r.PostFormValue("name")), Type: r.PostFormValue("type"), Words: r.PostForm["words"], Tier: tier}
	if _, err := s.ids.BindSource(r.Context(), v.caller, v.project, conn, src); err != nil {
		return s.toolsRefused(w, r, v, err)
	}
	s.backToTools(w, r, v, noticeSourceBound)
	return nil
}

// toolsRefused shows the Tools page again with why its form was refused.
func (s *Server) toolsRefused(w http.ResponseWriter, r *http.Request, v visit, err error) error {
	msg, status, err := shownRefusal(err)
	if err != nil {
		return err
	}
	return s.showTools(w, r, v, status, toolsBody{Error: msg})
}

func (s *Server) backToTools(w http.ResponseWriter, r *http.Request, v visit, n notice) {
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/tools?"+withNotice(nil, n), http.StatusSeeOther)
}

// slug is s with each character other than an ASCII letter, digit, '-' or '_' made '-',
// so that it names an element a CSS selector reaches without escapes.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}
