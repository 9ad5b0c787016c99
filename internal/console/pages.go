package console

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// web holds the console's pages: layout.html frames every page, each other .html file is
// one page (its "title" and "main" templates), partials/ holds templates several pages use,
// and static/ is served at /static/.
//
//go:embed web
var web embed.FS

// maxFormBody bounds a page form's body in bytes: a digest, a verdict and a reason, or a
// reconciliation's note.
const maxFormBody = 64 << 10

// csrfField is the form field that carries the session's CSRF token on every page form.
const csrfField = "csrf"

// pageRoutes lists every route of the pages in one place, and parses their templates. A
// page is one file here (page<name>.go) and one template in web/ (<name>.html); the
// templates in web/partials/ are parts several pages use.
func (s *Server) pageRoutes() error {
	static, err := fs.Sub(web, "web/static")
	if err != nil {
		return fmt.Errorf("console: read embedded assets: %w", err)
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))

	s.mux.HandleFunc("GET /signin", s.pageSignIn)
	s.mux.HandleFunc("POST /signin", s.pageSignInPost)
	s.mux.HandleFunc("POST /signout", s.pageSignOut)

	s.page("GET /{$}", "", s.pageHome)
	s.page("GET /projects/{project}/{$}", "", s.pageProjectHome)
	s.page("GET /projects/{project}/get-started", "", s.pageGetStarted)
	s.page("GET /projects/{project}/needs", "needs", s.pageNeeds)
	s.page("GET /projects/{project}/needs/history", "needs", s.pageNeedsHistory)
	s.page("POST /projects/{project}/needs/{id}/decision", "needs", s.pageDecide)
	s.page("POST /projects/{project}/cards/{card}/confirm", "needs", s.pageConfirmCard)
	s.page("GET /projects/{project}/cards/{card}/confirm", "needs", s.pageNeedsAgain)
	s.page("POST /projects/{project}/cards/{card}/decline", "needs", s.pageDeclineCard)
	s.page("GET /projects/{project}/delegates", "delegates", s.pageDelegates)
	s.page("POST /projects/{project}/delegates", "delegates", s.pageCreateDelegate)
	s.page("POST /projects/{project}/delegates/{delegate}/revoke", "delegates", s.pageRevokeDelegate)
	s.page("GET /projects/{project}/operations", "operations", s.pageOperations)
	s.page("POST /projects/{project}/operations/{op}/reconcile", "operations", s.pageReconcile)
	s.page("GET /projects/{project}/cases", "cases", s.pageCases)
	s.page("GET /projects/{project}/cases/{case}", "cases", s.pageCase)
	s.page("POST /projects/{project}/cases/{case}/{act}", "cases", s.pageCaseHold)
	s.page("GET /projects/{project}/board", "board", s.pageBoard)
	s.page("GET /projects/{project}/board/{node}", "board", s.pageFact)
	s.page("GET /projects/{project}/events", "events", s.pageEvents)
	s.page("GET /projects/{project}/agents", "agents", s.pageAgents)
	s.page("POST /projects/{project}/agents", "agents", s.pageCreateAgent)
	s.page("GET /projects/{project}/agents/{agent}", "agents", s.pageAgent)
	s.page("POST /projects/{project}/agents/{agent}/token", "agents", s.pageRotateAgent)
	s.page("GET /projects/{project}/agents/{agent}/token", "agents", s.pageAgentsAgain)
	s.page("POST /projects/{project}/agents/{agent}/revoke", "agents", s.pageRevokeAgent)
	s.page("POST /projects/{project}/agents/{agent}/runtime", "agents", s.pageSetRuntime)
	s.page("POST /projects/{project}/agents/{agent}/model", "agents", s.pageSetModel)
	s.page("POST /projects/{project}/agents/{agent}/budgets/{budget}", "agents", s.pageSetBudget)
	s.page("POST /projects/{project}/agents/{agent}/budgets/{budget}/remove", "agents", s.pageRemoveBudget)
	s.page("GET /projects/{project}/agents/{agent}/conversations/{conversation}", "agents", s.pageTranscript)
	s.page("GET /projects/{project}/agents/{agent}/conversations/{conversation}/compactions/{digest}", "agents", s.pageCompacted)
	s.page("POST /projects/{project}/agents/{agent}/tasks", "agents", s.pagePostTask)
	s.page("GET /projects/{project}/agents/{agent}/tasks", "agents", s.pageAgentAgain)
	s.page("POST /projects/{project}/agents/{agent}/tasks/{task}/cancel", "agents", s.pageCancelTask)
	s.page("GET /projects/{project}/tasks/{task}/tree", "agents", s.pageTaskTree)
	s.page("POST /projects/{project}/agents/{agent}/conversations/{conversation}/messages", "agents", s.pagePostMessage)
	s.page("GET /projects/{project}/workers", "workers", s.pageWorkers)
	s.page("GET /projects/{project}/capabilities", "capabilities", s.pageCapabilities)
	s.uploadPage("POST /projects/{project}/capabilities", "capabilities", s.pageInstallCapability)
	s.page("GET /projects/{project}/policies", "policies", s.pagePolicies)
	s.page("POST /projects/{project}/policies", "policies", s.pagePublishPolicy)
	s.page("POST /projects/{project}/policies/agents/{agent}/level", "policies", s.pageSetLevel)
	s.page("POST /projects/{project}/policies/agents/{agent}/windows", "policies", s.pageOpenWindow)
	s.schedulePages()
	s.toolPages()
	s.noticePages()
	s.blueprintPages()

	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, contract.Errorf(contract.CodeNotFound, "there is no page at %s; start from the console's home page.", r.URL.Path))
	})
	files, err := fs.Glob(web, "web/*.html")
	if err != nil {
		return fmt.Errorf("console: list the pages: %w", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(pageFuncs).ParseFS(web, "web/layout.html", "web/partials/*.html", f)
		if err != nil {
			return fmt.Errorf("console: parse page %s: %w", name, err)
		}
		s.templates[name] = t
	}
	return nil
}

// navItem is one entry of the console's navigation: the page's path under its project and
// its name. The Needs you entry carries the count of waiting Requests.
type navItem struct{ Page, Name string }

// navigation lists the pages the navigation links to, in its order.
var navigation = []navItem{
	{"needs", "Needs you"},
	{"operations", "Operations"},
	{"cases", "Cases"},
	{"board", "Board"},
	{"agents", "Agents"},
	{"workers", "Workers"},
	{"tools", "Tools"},
	{"events", "Events"},
	{"capabilities", "Capabilities"},
	{"policies", "Policies"},
	{"schedules", "Schedules"},
	{"delegates", "Delegates"},
}

// pageFuncs are the helpers the page templates call.
var pageFuncs = template.FuncMap{
	"navigation": func() []navItem { return navigation },
	"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"clock":      clock,
	"prev":       func(n int64) int64 { return n - 1 },
}

// clock is how a page shows a time. The zero time and the epoch stand for "never" in
// the records (a released lease expires at the epoch), and are shown so, never as 1970.
func clock(t time.Time) string {
	if !t.After(time.Unix(0, 0)) {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// visit is one signed-in member's request for a page.
type visit struct {
	caller  identity.Caller
	token   identity.Token
	project contract.ProjectID // "" on routes without {project}
	nav     string             // the navigation entry the page belongs to

	// head is the project's log head read before the handler read anything, where the
	// page's event stream starts: an event committed while the page was being read is
	// then sent to it, not lost between the read and the head.
	head int64
}

// pageData is what the layout renders around every page's Body.
type pageData struct {
	Member  string
	Project contract.ProjectID
	CSRF    string
	Nav     string
	Pending int    // the Needs you badge
	Live    string // event types that bring the page up to date; "" for none
	Head    int64  // the log's last event when the page was read; the stream starts after it
	Notice  string
	Body    any

	// Bare leaves out the stylesheet and icon: a request refused before routing is
	// answered under a Host or origin whose asset requests are refused as well.
	Bare bool
}

// pageFunc is a page handler: it reads, calls the authority and renders, and returns any
// error for [Server.renderError] to show, once.
type pageFunc func(w http.ResponseWriter, r *http.Request, v visit) error

// page registers a page that needs a member's session. A GET without one is sent to sign
// in; a POST must carry the session's CSRF token in its form and is bounded to
// maxFormBody.
func (s *Server) page(pattern, nav string, h pageFunc) { s.pageBounded(pattern, nav, maxFormBody, h) }

// uploadPage registers a page whose form may carry files (multipart/form-data), bounded
// to the server's MaxUpload as the API's capability install is.
func (s *Server) uploadPage(pattern, nav string, h pageFunc) { s.pageBounded(pattern, nav, -1, h) }

// pageBounded registers a page whose form body is bounded to limit bytes; a negative
// limit is MaxUpload, and takes a multipart form besides an urlencoded one.
func (s *Server) pageBounded(pattern, nav string, limit int64, h pageFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		v, err := s.visitorBounded(w, r, limit)
		if err != nil {
			if httpStatus(contract.CodeOf(err)) == http.StatusUnauthorized && safeMethod(r.Method) {
				http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.renderError(w, r, err)
			return
		}
		v.nav = nav
		if v.project != "" {
			if v.head, err = s.auth.LogHead(r.Context(), v.caller, v.project); err != nil {
				s.renderError(w, r, err)
				return
			}
		}
		if err := h(w, r, v); err != nil {
			s.renderError(w, r, err)
		}
	})
}

// visitor authenticates a page request by its session cookie. A bearer token is not
// taken: pages are for browsers, and a browser holds a member's session only as the cookie.
func (s *Server) visitor(w http.ResponseWriter, r *http.Request) (visit, error) {
	return s.visitorBounded(w, r, maxFormBody)
}

// visitorBounded is visitor with the form's bound: limit bytes, or, when negative, the
// server's MaxUpload with a multipart form taken too.
func (s *Server) visitorBounded(w http.ResponseWriter, r *http.Request, limit int64) (visit, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return visit{}, contract.Errorf(contract.CodeUnauthenticated, "sign in to see this page.")
	}
	tok := identity.Token(c.Value)
	if !safeMethod(r.Method) {
		multipart := false
		if limit < 0 {
			limit = s.maxUpload
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			multipart = mt == "multipart/form-data"
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		perr := r.ParseForm()
		if perr == nil && multipart {
			// Files past 1 MiB go to temporary files, removed when the request ends.
			perr = r.ParseMultipartForm(1 << 20)
		}
		if perr != nil {
			return visit{}, &contract.Error{Code: contract.CodeInvalidArgument, Err: perr,
				Teaching: fmt.Sprintf("the form could not be read; send it from the console's page, under %d bytes.", limit)}
		}
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue(csrfField)), []byte(csrfToken(tok))) != 1 {
			return visit{}, contract.Errorf(contract.CodeCSRF, "this form does not carry this session's CSRF token; reload the page and send it again.")
		}
	}
	caller, err := s.ids.Authenticate(r.Context(), tok)
	if err != nil {
		return visit{}, err
	}
	if caller.Kind != contract.PrincipalMember || caller.IsDelegate() {
		return visit{}, contract.Errorf(contract.CodeForbidden, "the console's pages are for members; agents use /mcp and delegates /api/v1.")
	}
	return visit{caller: caller, token: tok, project: contract.ProjectID(r.PathValue("project"))}, nil
}

// render writes page name with the layout around body. live lists the event types that
// bring it up to date; the Needs you badge follows request events on every page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, v visit, status int, name string, body any, live ...string) error {
	d := pageData{Member: v.caller.Name, Project: v.project, CSRF: csrfToken(v.token), Nav: v.nav, Body: body,
		Notice: noticeOf(r)}
	if v.project != "" {
		n, err := s.pendingCount(r.Context(), v)
		if err != nil {
			return err
		}
		d.Pending, d.Head = n, v.head
		d.Live = strings.Join(append([]string{event.RequestCreated, event.RequestChanged}, live...), ",")
	}
	return s.writePage(w, status, name, d)
}

// writePage executes page name into a buffer first, so that a template failure is an
// error page and never half a page.
func (s *Server) writePage(w http.ResponseWriter, status int, name string, d pageData) error {
	var buf bytes.Buffer
	if err := s.templates[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		return fmt.Errorf("render page %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	// The status is sent; a browser that went away has nothing left to learn.
	_, _ = buf.WriteTo(w)
	return nil
}

// errorBody is what the error page shows.
type errorBody struct {
	Title    string
	Code     contract.Code
	Teaching string
}

// refuse answers a request the server refuses before routing it: with the error page
// when a browser navigates (it asks for HTML), else with the API's JSON error.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		s.showError(w, r, err, true)
		return
	}
	s.writeError(w, r, err)
}

// renderError shows err as a page with its code and teaching, with the status the API
// gives the same code. An error without a code is logged and never shown.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	s.showError(w, r, err, false)
}

func (s *Server) showError(w http.ResponseWriter, r *http.Request, err error, bare bool) {
	ce := s.publicError(r, err)
	status := httpStatus(ce.Code)
	title := http.StatusText(status)
	if err := s.writePage(w, status, "error", pageData{Bare: bare, Body: errorBody{Title: title, Code: ce.Code, Teaching: ce.Teaching}}); err != nil {
		s.log.ErrorContext(r.Context(), "page failed", logMethod, r.Method, logPath, r.URL.Path, logErr, err)
		http.Error(w, title, status)
	}
}

// pageHome sends a member to their first project's home.
func (s *Server) pageHome(w http.ResponseWriter, r *http.Request, v visit) error {
	who := v.caller.Whoami()
	if len(who.Projects) == 0 {
		return contract.Errorf(contract.CodeNotFound, "you are a member of no project; create one with docket project create.")
	}
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(who.Projects[0]))+"/", http.StatusSeeOther)
	return nil
}

// pageProjectHome is Needs you when something waits for a person, Get started when the
// project has nothing in it yet, else Operations.
func (s *Server) pageProjectHome(w http.ResponseWriter, r *http.Request, v visit) error {
	n, err := s.pendingCount(r.Context(), v)
	if err != nil {
		return err
	}
	to := "operations"
	if n > 0 {
		to = "needs"
	} else if empty, err := s.emptyProject(r.Context(), v); err != nil {
		return err
	} else if empty {
		to = "get-started"
	}
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/"+to, http.StatusSeeOther)
	return nil
}
