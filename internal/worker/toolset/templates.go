package toolset

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// Folder is the folder template: a file Source over one directory, served by the built-in
// workspace Tools — the read Tools, and with Write the two write Tools as well (the worker
// offers those only under --workspace-tools read-write, as docket start runs it).
type Folder struct {
	Source string // the Source's name
	Root   string // an absolute directory
	Write  bool
}

// AddFolder writes the folder's file Source into the vault. It adds no manifest entry: the
// workspace Tools are built in; the Tools returned are those to lock.
func (f Files) AddFolder(t Folder) (Added, error) {
	if err := checkSourceName(t.Source); err != nil {
		return Added{}, err
	}
	if !filepath.IsAbs(t.Root) {
		return Added{}, fieldErr("root", "give the folder as an absolute path, as in /home/ada/reports.")
	}
	if fi, err := os.Stat(t.Root); err != nil || !fi.IsDir() {
		return Added{}, fieldErr("root", fmt.Sprintf("%s is not a directory here; create it or give one that exists.", t.Root))
	}
	if err := f.apply(change{source: t.Source, entry: vaultEntry{Type: "file", Root: filepath.Clean(t.Root)}}); err != nil {
		return Added{}, err
	}
	tools := map[contract.ToolID]worker.Tool{}
	for _, id := range builtinIDs() {
		def := builtinDef(id)
		if def.Adapter == worker.AdapterWorkspace && (t.Write || def.Kind == contract.ToolKindRead) {
			tools[id] = def
		}
	}
	return Added{Source: &Binding{Name: t.Source, Type: "file", Words: wordsOf(tools)}, Tools: sortedIDs(tools)}, nil
}

// HTTPAPI is the HTTP API template: an http Source at BaseURL, its auth header kept in
// the vault, and one Tool per route. With BaseURL empty the routes are added to the http
// Source already in the vault under that name.
type HTTPAPI struct {
	Source     string
	BaseURL    string // absolute http(s); its path is a prefix of every route
	AuthHeader string // e.g. Authorization; "" sends none
	AuthValue  string // e.g. "Bearer …": a secret, written into the vault only
	Routes     []Route
}

// Route is one Tool of an HTTP API: Method and Path ("/orders/{id}"), the params it
// takes (each {placeholder} of the path among them) and the columns it returns. Kind ""
// follows the method: GET and HEAD read, anything else writes.
type Route struct {
	ID      contract.ToolID
	Method  string
	Path    string
	Params  map[string]worker.Param
	Kind    string
	Returns []string
}

// AddHTTPAPI writes the API's Source (unless it is already there) and one Tool per route.
func (f Files) AddHTTPAPI(t HTTPAPI) (Added, error) {
	if err := checkSourceName(t.Source); err != nil {
		return Added{}, err
	}
	if len(t.Routes) == 0 {
		return Added{}, fieldErr("routes", "give at least one route, as in GET /orders/{id}.")
	}
	c := change{tools: map[contract.ToolID]worker.Tool{}}
	if t.BaseURL != "" {
		if err := checkURL("base_url", t.BaseURL); err != nil {
			return Added{}, err
		}
		c.source, c.entry = t.Source, vaultEntry{Type: "http", URL: t.BaseURL}
		switch {
		case t.AuthHeader != "":
			if err := checkHeaders("auth_header", map[string]string{t.AuthHeader: t.AuthValue}); err != nil {
				return Added{}, err
			}
			c.entry.Headers = map[string]string{t.AuthHeader: t.AuthValue}
		case t.AuthValue != "":
			return Added{}, fieldErr("auth_header", "an auth value was given without its header; name the header, as in Authorization.")
		}
	} else if err := f.existing(t.Source, "http"); err != nil {
		return Added{}, err
	}
	for i, r := range t.Routes {
		field := fmt.Sprintf("routes[%d]", i)
		if err := checkID(field+".id", r.ID); err != nil {
			return Added{}, err
		}
		method := strings.ToUpper(strings.TrimSpace(r.Method))
		if !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, method) {
			return Added{}, fieldErr(field+".method", fmt.Sprintf("%.20q is not a method the http adapter sends; use GET, HEAD, POST, PUT, PATCH or DELETE.", r.Method))
		}
		if !strings.HasPrefix(r.Path, "/") || strings.ContainsAny(r.Path, " \t\r\n") {
			return Added{}, fieldErr(field+".path", fmt.Sprintf("%.80q is not a path under the base URL; start it with '/', as in /orders/{id}.", r.Path))
		}
		for _, ph := range placeholders(r.Path) {
			if _, ok := r.Params[ph]; !ok {
				return Added{}, fieldErr(field+".params", fmt.Sprintf("the path names {%s}; declare %s among the params.", ph, ph))
			}
		}
		kind := r.Kind
		if kind == "" {
			kind = worker.HTTPKind(method)
		}
		if _, dup := c.tools[r.ID]; dup {
			return Added{}, fieldErr(field+".id", fmt.Sprintf("%s names two routes; give each its own id.", r.ID))
		}
		c.tools[r.ID] = worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: method + " " + r.Path,
			Kind: kind, Params: r.Params, Returns: r.Returns}
	}
	if err := f.apply(c); err != nil {
		return Added{}, err
	}
	return Added{Source: &Binding{Name: t.Source, Type: "http", Words: wordsOf(c.tools)}, Tools: sortedIDs(c.tools)}, nil
}

// SQLQuery is the SQL query template: a db Source at DSN and one db-query Tool, a single
// SELECT whose {name} placeholders are bound as driver parameters. Params "" declares
// every placeholder a required string. With DSN empty the Tool is added to the db Source
// already in the vault under that name.
type SQLQuery struct {
	Source  string
	DSN     string // postgres://… (or sqlite:<path>): a secret, written into the vault only
	ID      contract.ToolID
	Query   string
	Params  map[string]worker.Param
	Returns []string
}

var sqlPlaceholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([a-z][a-z0-9_]*)\}`) })

// AddSQLQuery writes the query's Source (unless it is already there) and its Tool.
func (f Files) AddSQLQuery(t SQLQuery) (Added, error) {
	if err := checkSourceName(t.Source); err != nil {
		return Added{}, err
	}
	if err := checkID("id", t.ID); err != nil {
		return Added{}, err
	}
	c := change{}
	if t.DSN != "" {
		if !strings.HasPrefix(t.DSN, "postgres://") && !strings.HasPrefix(t.DSN, "postgresql://") && !strings.HasPrefix(t.DSN, "sqlite:") {
			return Added{}, fieldErr("dsn", "give a PostgreSQL DSN starting postgres:// or postgresql:// (or sqlite:<path> for a local file).")
		}
		c.source, c.entry = t.Source, vaultEntry{Type: "db", DSN: t.DSN}
	} else if err := f.existing(t.Source, "db"); err != nil {
		return Added{}, err
	}
	q := strings.TrimSpace(t.Query)
	if q == "" {
		return Added{}, fieldErr("query", "give one SELECT, with {name} where an argument goes, as in SELECT id, total FROM orders WHERE customer = {customer}.")
	}
	params := t.Params
	if params == nil {
		params = map[string]worker.Param{}
		for _, m := range sqlPlaceholder().FindAllStringSubmatch(q, -1) {
			params[m[1]] = worker.Param{Type: worker.ParamString, Required: true}
		}
	}
	if len(params) == 0 {
		params = nil
	}
	c.tools = map[contract.ToolID]worker.Tool{t.ID: {Adapter: worker.AdapterDBQuery, SourceTypes: []string{"db"}, Entry: q, Params: params, Returns: t.Returns}}
	if err := f.apply(c); err != nil {
		return Added{}, err
	}
	return Added{Source: &Binding{Name: t.Source, Type: "db", Words: wordsOf(c.tools)}, Tools: []contract.ToolID{t.ID}}, nil
}

// Script is the local script template: a source-free run Tool starting Entry, a file
// under the worker root, with the environment variables named in Env passed through.
// Kind "" is run.
type Script struct {
	ID      contract.ToolID
	Entry   string // relative to the worker root, as in scripts/report.sh
	Kind    string
	Params  map[string]worker.Param
	Env     []string
	Returns []string
}

// AddScript writes the script's Tool. It binds no Source: the Tool is source-free, so its
// rows land as asserted, not attested.
func (f Files) AddScript(t Script) (Added, error) {
	if err := checkID("id", t.ID); err != nil {
		return Added{}, err
	}
	root := f.Root
	if root == "" {
		root = filepath.Dir(f.Manifest)
	}
	e := filepath.ToSlash(strings.TrimSpace(t.Entry))
	if e == "" || filepath.IsAbs(t.Entry) || strings.HasPrefix(e, "/") || slices.Contains(strings.Split(e, "/"), "..") {
		return Added{}, fieldErr("entry", fmt.Sprintf("give the program as a path under the worker root %s, as in scripts/report.sh.", root))
	}
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(e)))
	if err != nil || !fi.Mode().IsRegular() {
		return Added{}, fieldErr("entry", fmt.Sprintf("%s is not a file under the worker root %s; put the program there.", e, root))
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return Added{}, fieldErr("entry", fmt.Sprintf("%s is not executable; run chmod +x on it.", e))
	}
	kind := t.Kind
	if kind == "" {
		kind = contract.ToolKindRun
	}
	def := worker.Tool{Adapter: worker.AdapterRun, SourceTypes: []string{}, Entry: e, Kind: kind, Params: t.Params, Returns: t.Returns}
	if len(t.Env) > 0 {
		for _, n := range t.Env {
			if !isEnvName(n) {
				return Added{}, fieldErr("env", fmt.Sprintf("%.64q is not an environment variable name; use letters, digits and '_'.", n))
			}
			if strings.HasPrefix(strings.ToUpper(n), "DOCKET_") {
				return Added{}, fieldErr("env", fmt.Sprintf("%s is Docket's own; no program the worker starts receives DOCKET_* variables, so leave it out.", n))
			}
		}
		def.Env = &worker.Env{Pass: slices.Clone(t.Env)}
	}
	if err := f.apply(change{tools: map[contract.ToolID]worker.Tool{t.ID: def}}); err != nil {
		return Added{}, err
	}
	return Added{Tools: []contract.ToolID{t.ID}}, nil
}

// existing refuses unless the vault holds a Source name of type typ.
func (f Files) existing(name, typ string) error {
	v, err := worker.LoadVault(f.Vault)
	if err != nil {
		return err
	}
	s, ok := v.Source(name)
	if !ok || s.Type != typ {
		return fieldErr("source", fmt.Sprintf("%s is not a %s Source in the vault %s; give its connection details to add it.", name, typ, f.Vault))
	}
	return nil
}

// checkID refuses a Tool id that is not vendor.name@N or uses the reserved vendor.
func checkID(field string, id contract.ToolID) error {
	if _, err := contract.ParseToolID(string(id)); err != nil {
		return fieldErr(field, fmt.Sprintf("%.80q is not a Tool id; write it as vendor.name@1, as in acme.orders@1.", id))
	}
	if strings.HasPrefix(string(id), "docket.") {
		return fieldErr(field, fmt.Sprintf("%s uses the reserved vendor \"docket\"; name it after your own.", id))
	}
	return nil
}

// placeholders returns the {name} placeholders of an http path.
func placeholders(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+j])
		s = s[i+j+1:]
	}
}

// builtins is the manifest of the built-in Tools alone.
func builtins() *worker.Manifest {
	m, err := worker.ParseManifest([]byte(`{"format":"`+worker.ManifestFormat+`","tools":{}}`), nil)
	if err != nil {
		panic("toolset: the empty manifest does not parse: " + err.Error())
	}
	return m
}

func builtinIDs() []contract.ToolID { return builtins().IDs() }

func builtinDef(id contract.ToolID) worker.Tool {
	t, _, _ := builtins().Lookup(id)
	return t
}
