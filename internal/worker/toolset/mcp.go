package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	mcpadapter "github.com/docketrun/docket/internal/worker/adapters/mcp"
)

// MCPServer is an MCP server to add as a Source: exactly one of Command (stdio: the
// program and its arguments, with Env) or URL (Streamable HTTP, with Headers). Env and
// Headers values are secrets: they go into the vault only.
type MCPServer struct {
	Name    string
	Command []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// AddMCPServer writes the server into the vault as an mcp Source. It adds no Tool: the
// built-in docket.mcp.discover@1, returned as the Tool to lock, lists the server's tools,
// and [AddMCPTools] adds those a person picks.
func (f Files) AddMCPServer(s MCPServer) (Added, error) {
	if err := checkSourceName(s.Name); err != nil {
		return Added{}, err
	}
	e := vaultEntry{Type: "mcp"}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return Added{}, fieldErr("command", "give a stdio command or a url, not both.")
	case len(s.Command) > 0:
		if strings.TrimSpace(s.Command[0]) == "" {
			return Added{}, fieldErr("command", "the program is empty; give the server's program and its arguments, as in npx -y @modelcontextprotocol/server-filesystem /srv/docs.")
		}
		if len(s.Headers) > 0 {
			return Added{}, fieldErr("headers", "headers go with a url; a stdio server takes env instead.")
		}
		for k := range s.Env {
			if !isEnvName(k) {
				return Added{}, fieldErr("env", fmt.Sprintf("%.64q is not an environment variable name; use letters, digits and '_', not starting with a digit.", k))
			}
		}
		e.Command, e.Env = slices.Clone(s.Command), s.Env
	case s.URL != "":
		if err := checkURL("url", s.URL); err != nil {
			return Added{}, err
		}
		if len(s.Env) > 0 {
			return Added{}, fieldErr("env", "env goes with a stdio command; a server at a url takes headers instead.")
		}
		if err := checkHeaders("headers", s.Headers); err != nil {
			return Added{}, err
		}
		e.URL, e.Headers = s.URL, s.Headers
	default:
		return Added{}, fieldErr("command", "give the server's stdio command (program and arguments) or its Streamable HTTP url.")
	}
	if err := f.apply(change{source: s.Name, entry: e}); err != nil {
		return Added{}, err
	}
	discover := map[contract.ToolID]worker.Tool{worker.MCPDiscoverTool: discoverDef()}
	return Added{Source: &Binding{Name: s.Name, Type: "mcp", Words: wordsOf(discover)}, Tools: []contract.ToolID{worker.MCPDiscoverTool}}, nil
}

// Discovered is one tool an MCP server lists, as docket.mcp.discover@1 returns it.
type Discovered struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"` // absent when the tool declares no structured output
	ReadOnly     bool            `json:"readOnly"`               // the server's hint; Docket does not rely on it
}

// Structured reports whether the tool declares structured output: an output schema, from
// which a returns mapping is offered.
func (d Discovered) Structured() bool { return len(d.OutputSchema) > 0 }

// ParseDiscovered reads the rows of docket.mcp.discover@1 (run locally by [Discover] or
// as a governed read) and reports whether the server's list was cut short.
func ParseDiscovered(rows []contract.Args) ([]Discovered, bool, error) {
	out := make([]Discovered, 0, len(rows))
	truncated := false
	for i, r := range rows {
		str := func(k string) (string, error) {
			v, ok := r[k]
			if !ok || v.Kind() != contract.ValueString {
				return "", contract.Errorf(contract.CodeToolSchema, "discovered row %d has no string %q; it is not a row of %s.", i, k, worker.MCPDiscoverTool)
			}
			return v.Str(), nil
		}
		var d Discovered
		var err error
		if d.Name, err = str("name"); err != nil {
			return nil, false, err
		}
		if d.Description, err = str("description"); err != nil {
			return nil, false, err
		}
		in, err := str("inputSchema")
		if err != nil {
			return nil, false, err
		}
		d.InputSchema = json.RawMessage(in)
		if v, ok := r["outputSchema"]; ok && v.Kind() == contract.ValueString && v.Str() != "" {
			d.OutputSchema = json.RawMessage(v.Str())
		}
		if v, ok := r["readOnly"]; ok && v.Kind() == contract.ValueBool {
			d.ReadOnly = v.Bool()
		}
		if v, ok := r["truncated"]; ok && v.Kind() == contract.ValueBool && v.Bool() {
			truncated = true
		}
		out = append(out, d)
	}
	return out, truncated, nil
}

// Discover runs docket.mcp.discover@1 here, through the mcp adapter the worker runs it
// with, against the vault's Source named source, and returns the server's tools and
// whether the list was cut short. It is for a worker's own machine (docket worker tools
// discover); the console runs the same Tool as a governed read through the worker.
func (f Files) Discover(ctx context.Context, source string) ([]Discovered, bool, error) {
	v, err := worker.LoadVault(f.Vault)
	if err != nil {
		return nil, false, err
	}
	src, ok := v.Source(source)
	if !ok {
		return nil, false, contract.Errorf(contract.CodeSourceUnknown, "source %.63q is not in the vault %s; add it first (docket worker mcp add).", source, f.Vault)
	}
	if src.Type != "mcp" {
		return nil, false, contract.Errorf(contract.CodeSourceTypeMatch, "source %s is a %s Source; discovery lists the tools of an mcp Source.", source, src.Type)
	}
	a := &mcpadapter.Adapter{}
	defer a.Close()
	out, err := a.Execute(ctx, worker.Call{Tool: worker.MCPDiscoverTool, Def: discoverDef(), Source: src, Args: contract.Args{}})
	if out.Status != worker.StatusOK {
		if err == nil {
			err = contract.Errorf(out.Code, "%s", out.Reason)
		}
		return nil, false, err
	}
	return ParseDiscovered(out.Rows)
}

// discoverDef is the built-in definition of docket.mcp.discover@1.
func discoverDef() worker.Tool { return builtinDef(worker.MCPDiscoverTool) }

// Pick is one discovered tool a person chose to add: the kind it runs as ("" is write: a
// server's tool may act), and its id ("" derives one from the Source and the tool's
// name, see [ToolIDFor]).
type Pick struct {
	Tool Discovered
	Kind string
	ID   contract.ToolID
	// Facts, when set, is the returns mapping of the Tool's direct Action: each row it
	// returns becomes these facts (see [FactsFor]); the manifest checks it as it loads.
	Facts []worker.Fact
}

// FactsFor is the returns mapping offered for a discovered tool: one fact named
// predicate whose arguments are the columns of its structured rows and its params, each
// with a name the Board takes (lower-case letters, digits and '_'). It is nil when the
// tool declares no structured output.
func FactsFor(d Discovered, predicate string) []worker.Fact {
	cols := ReturnsFromSchema(d.OutputSchema)
	if len(cols) == 0 || predicate == "" {
		return nil
	}
	args := map[string]string{}
	for _, c := range cols {
		if isParamName(c) {
			args[c] = "$" + c
		}
	}
	if m, err := ParamsFromSchema(d.InputSchema); err == nil {
		for name := range m.Params {
			if _, ok := args[name]; !ok && m.Params[name].Required {
				args[name] = "$" + name
			}
		}
	}
	if len(args) == 0 {
		return nil
	}
	return []worker.Fact{{Predicate: predicate, Args: args}}
}

// MCPTool is the manifest entry of a discovered tool run against an mcp Source: its
// entry the tool's name, its params from the input schema ([ParamsFromSchema]), its kind
// as given (default write), and its returns from the output schema when the tool declares
// structured rows ([ReturnsFromSchema]).
func MCPTool(d Discovered, kind string) (worker.Tool, Mapping, error) {
	if d.Name == "" || len(d.Name) > 128 || strings.ContainsAny(d.Name, "\x00\n\r") {
		return worker.Tool{}, Mapping{}, contract.Errorf(contract.CodeToolSchema, "the tool's name %.64q is empty, too long or not one line.", d.Name)
	}
	if kind == "" {
		kind = contract.ToolKindWrite
	}
	if kind != contract.ToolKindRead && kind != contract.ToolKindWrite && kind != contract.ToolKindRun {
		return worker.Tool{}, Mapping{}, fieldErr("kind", fmt.Sprintf("%.20q is not a kind; use read, write or run.", kind))
	}
	m, err := ParamsFromSchema(d.InputSchema)
	if err != nil {
		return worker.Tool{}, m, fmt.Errorf("tool %.64s: %w", d.Name, err)
	}
	t := worker.Tool{Adapter: worker.AdapterMCP, SourceTypes: []string{"mcp"}, Entry: d.Name, Kind: kind, Returns: ReturnsFromSchema(d.OutputSchema)}
	if len(m.Params) > 0 {
		t.Params = m.Params
	}
	return t, m, nil
}

// ToolIDFor derives the id of a discovered tool added from source: "<source>.<tool>@1",
// each part lower-cased with any other character made '_' (a leading digit gets a "t").
func ToolIDFor(source, tool string) contract.ToolID {
	return contract.ToolID(segment(source) + "." + segment(tool) + "@1")
}

func segment(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || !(out[0] >= 'a' && out[0] <= 'z') {
		out = "t" + out
	}
	if len(out) > 60 {
		out = out[:60]
	}
	return out
}

// AddMCPTools writes a manifest entry for each pick, to run against the vault's mcp
// Source named source. All are added or none: one that cannot be mapped refuses the lot,
// naming it.
func (f Files) AddMCPTools(source string, picks []Pick) (Added, error) {
	if len(picks) == 0 {
		return Added{}, fieldErr("tools", "no tool was picked; pick at least one of the discovered tools.")
	}
	v, err := worker.LoadVault(f.Vault)
	if err != nil {
		return Added{}, err
	}
	if src, ok := v.Source(source); !ok || src.Type != "mcp" {
		return Added{}, fieldErr("source", fmt.Sprintf("%.63q is not an mcp Source in the vault %s; add the server first (docket worker mcp add).", source, f.Vault))
	}
	tools := map[contract.ToolID]worker.Tool{}
	for _, p := range picks {
		t, _, err := MCPTool(p.Tool, p.Kind)
		if err != nil {
			return Added{}, err
		}
		t.Facts = p.Facts
		id := p.ID
		if id == "" {
			id = ToolIDFor(source, p.Tool.Name)
		}
		if _, err := contract.ParseToolID(string(id)); err != nil {
			return Added{}, err
		}
		if _, dup := tools[id]; dup {
			return Added{}, contract.Errorf(contract.CodeToolExists, "two picked tools would both be %s; give one another id.", id)
		}
		tools[id] = t
	}
	if err := f.apply(change{tools: tools}); err != nil {
		return Added{}, err
	}
	return Added{Source: &Binding{Name: source, Type: "mcp", Words: wordsOf(tools)}, Tools: sortedIDs(tools)}, nil
}

// checkSourceName refuses a Source name the authority and the vault would refuse.
func checkSourceName(name string) error {
	if _, err := contract.ParseName(name); err != nil {
		return fieldErr("name", fmt.Sprintf("%v; it names the Source in the vault and in the authority.", err))
	}
	return nil
}

// checkURL refuses a url that is not absolute http or https, without quoting it: it may
// carry a credential.
func checkURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldErr(field, "give an absolute http:// or https:// URL.")
	}
	return nil
}

// checkHeaders refuses a header name that is not an HTTP token; values are never quoted.
func checkHeaders(field string, h map[string]string) error {
	for k, v := range h {
		if !isToken(k) {
			return fieldErr(field, fmt.Sprintf("%.64q is not a header name; use letters, digits and '-', as in Authorization.", k))
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fieldErr(field, fmt.Sprintf("the value of %s holds a line break; give it on one line.", k))
		}
	}
	return nil
}

func isToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

func isEnvName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
