package workbench

import (
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// The template forms' fields, by template.
var templateFields = map[string][]string{
	"folder": {"csrf", "source", "root", "write"},
	"http":   {"csrf", "source", "base_url", "auth_header", "auth_value", "routes"},
	"sql":    {"csrf", "source", "dsn", "id", "query"},
	"script": {"csrf", "id", "entry", "kind", "params", "env"},
}

// addTemplate adds the Tools and Source of one template — a folder, an HTTP API, a SQL
// query or a local script — to the worker's manifest and vault, binds the Source in the
// authority, and sends the browser on to the console's Tools page to lock them.
func (p *toolsPage) addTemplate(w http.ResponseWriter, r *http.Request, name string) {
	fields, ok := templateFields[name]
	if !ok {
		writeGateError(w, http.StatusNotFound, contract.Errorf(contract.CodeNotFound, "the templates are folder, http, sql and script; %.20q is none of them.", name))
		return
	}
	form, err := p.decode(w, r, fields, nil)
	if err != nil {
		p.refuse(w, name, toolsView{}, err)
		return
	}
	get := func(k string) string { return strings.TrimSpace(form.Get(k)) }
	var added toolset.Added
	switch name {
	case "folder":
		added, err = p.files.AddFolder(toolset.Folder{Source: get("source"), Root: get("root"), Write: form.Get("write") != ""})
	case "http":
		var routes []toolset.Route
		if routes, err = parseRoutes(form.Get("routes")); err == nil {
			added, err = p.files.AddHTTPAPI(toolset.HTTPAPI{Source: get("source"), BaseURL: get("base_url"), AuthHeader: get("auth_header"),
				AuthValue: strings.TrimSpace(form.Get("auth_value")), Routes: routes})
		}
	case "sql":
		added, err = p.files.AddSQLQuery(toolset.SQLQuery{Source: get("source"), DSN: get("dsn"), ID: contract.ToolID(get("id")), Query: form.Get("query")})
	case "script":
		var params map[string]worker.Param
		if params, err = parseParams(strings.Fields(form.Get("params")), "params"); err == nil {
			added, err = p.files.AddScript(toolset.Script{ID: contract.ToolID(get("id")), Entry: get("entry"), Kind: get("kind"), Params: params,
				Env: strings.FieldsFunc(form.Get("env"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })})
		}
	}
	if err == nil {
		err = p.bind(r.Context(), added)
	}
	if err != nil {
		p.refuse(w, name, toolsView{}, err)
		return
	}
	p.toConsole(w, r)
}

// parseRoutes reads the HTTP API form's routes, one a line: the Tool's id, the method,
// the path under the base URL, then its params as name[:type][?] (string and required
// unless said), as in "acme.order@1 GET /orders/{id} id".
func parseRoutes(text string) ([]toolset.Route, error) {
	var out []toolset.Route
	for i, l := range lines(text) {
		f := strings.Fields(l)
		if len(f) < 3 {
			return nil, contract.Errorf(contract.CodeInvalidArgument, "route %d is not \"ID METHOD /path params…\"; write one a line, as in acme.order@1 GET /orders/{id} id.", i+1)
		}
		params, err := parseParams(f[3:], "routes")
		if err != nil {
			return nil, err
		}
		out = append(out, toolset.Route{ID: contract.ToolID(f[0]), Method: f[1], Path: f[2], Params: params})
	}
	return out, nil
}

// parseParams reads params written name[:type][?]: a string unless a type is named,
// required unless it ends in '?'.
func parseParams(words []string, field string) (map[string]worker.Param, error) {
	if len(words) == 0 {
		return nil, nil
	}
	out := map[string]worker.Param{}
	for _, w := range words {
		p := worker.Param{Type: worker.ParamString, Required: true}
		if strings.HasSuffix(w, "?") {
			w, p.Required = strings.TrimSuffix(w, "?"), false
		}
		name, typ, ok := strings.Cut(w, ":")
		if ok {
			switch typ {
			case worker.ParamString, worker.ParamInteger, worker.ParamNumber, worker.ParamBoolean:
				p.Type = typ
			default:
				return nil, contract.Errorf(contract.CodeInvalidArgument, "the %s param %.40q has type %.20q; use string, integer, number or boolean.", field, name, typ)
			}
		}
		out[name] = p
	}
	return out, nil
}
