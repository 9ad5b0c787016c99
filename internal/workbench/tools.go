package workbench

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/secheaders"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// ToolsPath is docket start's own page that adds Tools to the worker it runs: an MCP
// server, then the tools discovered on it, and the templates for a folder, an HTTP API,
// a SQL query and a local script (docs/tools.md). It is served by this process behind the
// run-key gate, never by serve: the secrets typed into it (a server's environment and
// headers, an API key, a DSN) are written into the worker's vault (mode 0600) here, and
// only the Source's public part — its name, type, words and tier — goes to the authority.
const ToolsPath = "/start/tools"

// maxToolsForm bounds one tools form's body in bytes: a discovery's picks with their kinds.
const maxToolsForm = 64 << 10

// maxDiscovered bounds the discoveries the page keeps, one per Source, for the pick form.
const maxDiscovered = 16

// Discoverer lists the tools of the mcp Source named source of the Connection local, as
// the governed read docket.mcp.discover@1 through the worker returns them, and whether
// the server's list was cut short.
type Discoverer func(ctx context.Context, base, source string) ([]toolset.Discovered, bool, error)

// toolsPage serves ToolsPath and the forms under it. It is safe for concurrent use.
type toolsPage struct {
	rts      *runtimes
	runKey   string
	files    toolset.Files
	discover Discoverer
	xorigin  *http.CrossOriginProtection

	mu    sync.Mutex                      // guards found
	found map[string][]toolset.Discovered // the last discovery of each mcp Source, for its pick form
}

var toolsTemplate = sync.OnceValue(func() *template.Template { return template.Must(template.ParseFS(webFS, "web/tools.html")) })

// toolsView is what the page shows: its forms, as sent back after a refusal (never a
// secret), and a discovery to pick from.
type toolsView struct {
	CSRF    string
	Console string // the console's Tools page
	Error   string
	Form    string // the form the error is about
	MCP     mcpForm
	Picking *pickView
}

// mcpForm is the MCP server form's public part, shown again after a refusal; the
// environment and headers, which hold secrets, are not.
type mcpForm struct {
	Name, Transport, Command, Args, URL string
}

// pickView is a discovery the person picks tools from.
type pickView struct {
	Source    string
	Truncated bool
	Tools     []pickTool
}

// pickTool is one discovered tool with what it would be added as.
type pickTool struct {
	toolset.Discovered
	ID         contract.ToolID
	Kind       string // the kind offered: write unless the person chooses
	Params     []string
	Skipped    []toolset.Skipped
	Returns    []string
	Schema     string // the input schema, indented
	Structured bool
	Predicate  string   // the fact its rows are offered as; "" when they are text
	FactArgs   []string // that fact's arguments
	CannotAdd  string   // why it cannot be added (a required param no param can carry); "" when it can
}

func (p *toolsPage) csrf() string {
	m := hmac.New(sha256.New, []byte(p.runKey))
	m.Write([]byte("docket start tools form"))
	return hex.EncodeToString(m.Sum(nil))
}

func (p *toolsPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secheaders.Set(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == ToolsPath:
		p.render(w, http.StatusOK, toolsView{MCP: mcpForm{Transport: "stdio"}})
	case r.Method == http.MethodPost && r.URL.Path == ToolsPath+"/mcp":
		p.addServer(w, r)
	case r.Method == http.MethodPost && r.URL.Path == ToolsPath+"/mcp/pick":
		p.addPicked(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, ToolsPath+"/template/"):
		p.addTemplate(w, r, strings.TrimPrefix(r.URL.Path, ToolsPath+"/template/"))
	default:
		writeGateError(w, http.StatusNotFound, contract.Errorf(contract.CodeNotFound, "docket start's tools page is %s (GET) and its forms; the console is at /.", ToolsPath))
	}
}

func (p *toolsPage) render(w http.ResponseWriter, status int, v toolsView) {
	v.CSRF = p.csrf()
	v.Console = "/projects/" + url.PathEscape(p.rts.project()) + "/tools"
	var b strings.Builder
	if err := toolsTemplate().Execute(&b, v); err != nil {
		writeGateError(w, http.StatusInternalServerError, contract.Errorf(contract.CodeInternal, "the tools page could not be shown; see docket start's output."))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	// The status is sent; a browser that went away has nothing to learn.
	w.Write([]byte(b.String()))
}

// refuse shows the page again with why form was refused; a CSRF or cross-origin refusal
// is the gate's JSON error, as for the other forms.
func (p *toolsPage) refuse(w http.ResponseWriter, form string, v toolsView, err error) {
	if ce, ok := errors.AsType[*contract.Error](err); ok && (ce.Code == contract.CodeCSRF || ce.Code == contract.CodeCrossOrigin) {
		writeGateError(w, http.StatusForbidden, ce)
		return
	}
	v.Error, v.Form = teachingOf(err), form
	if v.MCP.Transport == "" {
		v.MCP.Transport = "stdio"
	}
	p.render(w, http.StatusBadRequest, v)
}

// decode reads a tools form as the first-use form is read (readForm): only the fields
// named (those in multi may repeat, the others come once), and a pick's kind.* and
// facts.* fields.
func (p *toolsPage) decode(w http.ResponseWriter, r *http.Request, fields, multi []string) (formValues, error) {
	return readForm(w, r, formRules{
		xorigin: p.xorigin, csrf: p.csrf(), max: maxToolsForm,
		field: func(k string) (known, repeats bool) {
			repeats = contains(multi, k)
			return contains(fields, k) || repeats || strings.HasPrefix(k, "kind.") || strings.HasPrefix(k, "facts."), repeats
		},
		only: "the page's form",
		from: "the page docket start serves", reload: "the page",
	})
}

// mcpFields are the MCP server form's fields.
var mcpFields = []string{"csrf", "name", "transport", "command", "args", "env", "url", "headers"}

// addServer writes the server into the worker's vault, binds its Source in the
// authority, locks the discovery Tool, runs the discovery as a governed read through the
// worker and shows its tools to pick from.
func (p *toolsPage) addServer(w http.ResponseWriter, r *http.Request) {
	form, err := p.decode(w, r, mcpFields, nil)
	f := mcpForm{Name: strings.TrimSpace(form.Get("name")), Transport: form.Get("transport"), Command: strings.TrimSpace(form.Get("command")),
		Args: form.Get("args"), URL: strings.TrimSpace(form.Get("url"))}
	if err != nil {
		p.refuse(w, "mcp", toolsView{MCP: f}, err)
		return
	}
	s := toolset.MCPServer{Name: f.Name}
	switch f.Transport {
	case "stdio":
		if f.Command != "" {
			s.Command = append([]string{f.Command}, lines(f.Args)...)
		}
		if s.Env, err = pairs(form.Get("env"), "=", "env", "NAME=value"); err != nil {
			p.refuse(w, "mcp", toolsView{MCP: f}, err)
			return
		}
	case "http":
		s.URL = f.URL
		if s.Headers, err = pairs(form.Get("headers"), ":", "headers", "Name: value"); err != nil {
			p.refuse(w, "mcp", toolsView{MCP: f}, err)
			return
		}
	default:
		p.refuse(w, "mcp", toolsView{MCP: f}, contract.Errorf(contract.CodeInvalidArgument, "choose how the server is reached: a stdio command, or a Streamable HTTP URL."))
		return
	}
	ctx := r.Context()
	added, err := p.files.AddMCPServer(s)
	if err != nil {
		p.refuse(w, "mcp", toolsView{MCP: f}, err)
		return
	}
	if err := p.bind(ctx, added); err != nil {
		p.refuse(w, "mcp", toolsView{MCP: f}, err)
		return
	}
	p.showDiscovery(w, r, f.Name)
}

// showDiscovery runs the discovery of source and shows its tools to pick from.
func (p *toolsPage) showDiscovery(w http.ResponseWriter, r *http.Request, source string) {
	if p.discover == nil {
		p.refuse(w, "mcp", toolsView{}, contract.Errorf(contract.CodeInternal, "this docket start cannot discover an MCP server's tools; run docket worker tools discover on this machine."))
		return
	}
	found, truncated, err := p.discover(r.Context(), p.rts.base, source)
	if err != nil {
		p.refuse(w, "mcp", toolsView{}, err)
		return
	}
	p.mu.Lock()
	if p.found == nil {
		p.found = map[string][]toolset.Discovered{}
	}
	if _, ok := p.found[source]; !ok && len(p.found) >= maxDiscovered {
		clear(p.found) // a discovery forgotten is run again
	}
	p.found[source] = found
	p.mu.Unlock()
	pv := &pickView{Source: source, Truncated: truncated}
	for _, d := range found {
		pt := pickTool{Discovered: d, ID: toolset.ToolIDFor(source, d.Name), Kind: contract.ToolKindWrite, Structured: d.Structured()}
		if m, err := toolset.ParamsFromSchema(d.InputSchema); err == nil {
			for name := range m.Params {
				pt.Params = append(pt.Params, name)
			}
			slices.Sort(pt.Params)
			pt.Skipped = m.Skipped
		} else {
			pt.CannotAdd = teachingOf(err)
		}
		pt.Returns = toolset.ReturnsFromSchema(d.OutputSchema)
		if fs := toolset.FactsFor(d, predicateFor(source, d.Name)); len(fs) == 1 {
			pt.Predicate = fs[0].Predicate
			for a := range fs[0].Args {
				pt.FactArgs = append(pt.FactArgs, a)
			}
			slices.Sort(pt.FactArgs)
		}
		pt.Schema = indent(d.InputSchema)
		pv.Tools = append(pv.Tools, pt)
	}
	p.render(w, http.StatusOK, toolsView{Picking: pv})
}

// addPicked adds the ticked tools of a discovery to the worker's manifest, each with the
// kind chosen for it; the worker reloads its manifest, and the console's Tools page then
// lists them to be locked.
func (p *toolsPage) addPicked(w http.ResponseWriter, r *http.Request) {
	form, err := p.decode(w, r, []string{"csrf", "source"}, []string{"pick"})
	if err != nil {
		p.refuse(w, "pick", toolsView{}, err)
		return
	}
	source := form.Get("source")
	p.mu.Lock()
	found, ok := p.found[source]
	p.mu.Unlock()
	if !ok {
		p.refuse(w, "pick", toolsView{}, contract.Errorf(contract.CodeNotFound, "no discovery of the Source %.63q is at hand; add the server again or discover its tools again.", source))
		return
	}
	var picks []toolset.Pick
	for _, name := range form["pick"] {
		i := slices.IndexFunc(found, func(d toolset.Discovered) bool { return d.Name == name })
		if i < 0 {
			p.refuse(w, "pick", toolsView{}, contract.Errorf(contract.CodeInvalidArgument, "the server listed no tool %.64q; pick from the tools shown.", name))
			return
		}
		pick := toolset.Pick{Tool: found[i], Kind: form.Get("kind." + name)}
		if pred := strings.TrimSpace(form.Get("facts." + name)); pred != "" {
			if pick.Facts = toolset.FactsFor(found[i], pred); pick.Facts == nil {
				p.refuse(w, "pick", toolsView{}, contract.Errorf(contract.CodeInvalidArgument, "the tool %.64s declares no structured rows, so they cannot be facts; leave its fact empty.", name))
				return
			}
		}
		picks = append(picks, pick)
	}
	added, err := p.files.AddMCPTools(source, picks)
	if err == nil {
		err = p.bind(r.Context(), added)
	}
	if err != nil {
		p.refuse(w, "pick", toolsView{}, err)
		return
	}
	p.toConsole(w, r)
}

// bind binds the Source an add wrote into the vault on the Connection local, in the
// authority: its name, type and the words the Tools return, attested. A Source already
// bound keeps its tier, and gains the new words.
func (p *toolsPage) bind(ctx context.Context, a toolset.Added) error {
	if a.Source == nil {
		return nil
	}
	cl, err := p.rts.member()
	if err != nil {
		return err
	}
	path := apiclient.ProjectPath(p.rts.project(), "connections", Connection, "sources")
	srcs, err := apiclient.All[contract.Source](ctx, cl, path)
	if err != nil {
		return err
	}
	src := contract.Source{Type: a.Source.Type, Words: slices.Clone(a.Source.Words), Tier: contract.TierAttested}
	known := false
	for _, s := range srcs {
		known = known || s.Name == a.Source.Name
		if s.Name == a.Source.Name {
			src.Tier = s.Tier
			for _, w := range s.Words {
				if !slices.Contains(src.Words, w) {
					src.Words = append(src.Words, w)
				}
			}
		}
	}
	// Tools that map no rows to facts bind a Source with no words: it attests nothing
	// until a Tool returns facts, and its calls run all the same.
	slices.Sort(src.Words)
	return cl.Do(ctx, http.MethodPut, path+"/"+url.PathEscape(a.Source.Name), src, nil)
}

// toConsole sends the browser on to the console's Tools page, where the added Tools wait
// to be locked.
func (p *toolsPage) toConsole(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/projects/"+url.PathEscape(p.rts.project())+"/tools?notice=tools_added", http.StatusSeeOther)
}

// predicateFor is the fact offered for the rows of the tool a Source's server lists:
// "<source>_<tool>", lower-cased, other characters '_'.
func predicateFor(source, tool string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(source + "_" + tool) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(b.String(), "_0123456789")
	if len(out) > 60 {
		out = out[:60]
	}
	return out
}

// lines splits text into its non-empty lines, each trimmed.
func lines(text string) []string {
	var out []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// pairs reads one name-sep-value pair a line (NAME=value, or Name: value), refusing a
// line without sep without quoting it: it may hold a secret.
func pairs(text, sep, field, shape string) (map[string]string, error) {
	var out map[string]string
	for i, l := range lines(text) {
		k, v, ok := strings.Cut(l, sep)
		if !ok {
			return nil, contract.Errorf(contract.CodeInvalidArgument, "line %d of %s is not %s; write one a line.", i+1, field, shape)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// indent is schema indented for the page, or as it came when it is not JSON.
func indent(schema json.RawMessage) string {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return string(schema)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(schema)
	}
	return string(b)
}
