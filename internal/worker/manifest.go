package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/gowebpki/jcs"
)

// ManifestFormat is the only manifest format this worker reads.
const ManifestFormat = "docket-worker-tools/1"

// MaxManifestBytes bounds a manifest file.
const MaxManifestBytes = 1 << 20

// Adapter names a manifest may use.
const (
	AdapterWorkspace    = "workspace"
	AdapterRun          = "run"
	AdapterHTTP         = "http"
	AdapterDBQuery      = "db-query"
	AdapterDBExecFenced = "db-exec-fenced"
	AdapterMCP          = "mcp"
	AdapterMaterial     = "material"
)

// adapterKinds maps each adapter to the Tool kinds it may declare; the first is the default.
var adapterKinds = map[string][]string{
	AdapterWorkspace:    {contract.ToolKindRead, contract.ToolKindWrite},
	AdapterRun:          {contract.ToolKindRun, contract.ToolKindRead, contract.ToolKindWrite},
	AdapterHTTP:         {contract.ToolKindRead, contract.ToolKindWrite},
	AdapterDBQuery:      {contract.ToolKindRead},
	AdapterDBExecFenced: {contract.ToolKindWrite},
	AdapterMCP:          {contract.ToolKindWrite, contract.ToolKindRead, contract.ToolKindRun}, // a server's tool may act: write unless declared
	AdapterMaterial:     {contract.ToolKindRead},
}

// Reserved argument names. "source" names the Source of a call; "sql" would let a caller
// write SQL, which comes only from the Tool's template.
const (
	ArgSource = "source"
	ArgSQL    = "sql"
)

// Manifest is a parsed `docket-worker-tools/1` manifest plus the built-in workspace Tools.
// It is immutable after ParseManifest and safe for concurrent use.
type Manifest struct {
	tools   map[contract.ToolID]Tool
	digests map[contract.ToolID]string
}

// manifestFile is the JSON form of a manifest.
type manifestFile struct {
	Format string                   `json:"format"`
	Tools  map[contract.ToolID]Tool `json:"tools"`
}

// Tool is one Tool's definition. Its digest is the sha256 of the JCS of this JSON, so any
// change to a field is a new definition that must be locked again.
type Tool struct {
	Adapter     string           `json:"adapter"`
	SourceTypes []string         `json:"sourceTypes"`           // empty: the Tool is source-free
	Entry       string           `json:"entry"`                 // per adapter: workspace op, run file, "METHOD /path/{param}", SQL, MCP tool name
	Kind        string           `json:"kind,omitempty"`        // read, write or run; default by adapter
	Description string           `json:"description,omitempty"` // what it does, for the model choosing its direct Action
	Params      map[string]Param `json:"params,omitempty"`      // the arguments the call takes, besides "source"
	Returns     []string         `json:"returns,omitempty"`     // the columns of its rows, for documentation and mapping
	Facts       []Fact           `json:"facts,omitempty"`       // its rows as facts, when offered as a direct Action
	Env         *Env             `json:"env,omitempty"`         // run only: environment passed through
	Fence       *Fence           `json:"fence,omitempty"`       // limits and permissions

	// openArgs lets the built-in write_json take any scalar arguments as the object it
	// writes; a manifest cannot set it.
	openArgs bool
}

// Param types.
const (
	ParamString  = "string"
	ParamInteger = "integer"
	ParamNumber  = "number"
	ParamBoolean = "boolean"
)

// Param declares one argument.
type Param struct {
	Type     string `json:"type"` // string, integer, number or boolean
	Required bool   `json:"required,omitempty"`
	// Description says what the argument is, for the person locking the Tool and the
	// Agent calling it; absent, the definition (and its digest) is as before it existed.
	Description string `json:"description,omitempty"`
}

// Fact maps each row the Tool returns to one fact of its direct Action: Predicate with
// each argument taken from a column ("$column") or a constant. The predicate must be a
// word of the Source the call runs against (docs/workers.md, "Direct Actions").
type Fact struct {
	Predicate string            `json:"predicate"`
	Args      map[string]string `json:"args"`
}

// describe is the descriptor a Poll advertises for the Tool id at digest. A Tool that
// takes open arguments states no params, so it is offered as no direct Action.
func (t Tool) describe(id contract.ToolID, digest, adapterDigest string, sourceTypes []string) contract.ToolDescriptor {
	d := contract.ToolDescriptor{Tool: id, Digest: digest, Adapter: t.Adapter, AdapterDigest: adapterDigest,
		Kind: t.Kind, SourceTypes: sourceTypes, Direct: !t.openArgs, Description: t.Description, Returns: t.Returns}
	for _, name := range slices.Sorted(maps.Keys(t.Params)) {
		p := t.Params[name]
		d.Params = append(d.Params, contract.ToolParam{Name: name, Type: p.Type, Required: p.Required, Description: p.Description})
	}
	for _, f := range t.Facts {
		d.Facts = append(d.Facts, contract.ToolFact{Predicate: f.Predicate, Args: f.Args})
	}
	return d
}

// Env is the environment a run Tool's program sees besides the basics (see [ScrubEnv]).
type Env struct {
	// Pass names variables copied from the worker's environment as they are, matched
	// case-insensitively. Absent or empty, the program gets the basics only.
	Pass []string `json:"pass,omitempty"`
}

// Fence holds a Tool's limits and declared permissions. Zero fields take the adapter's
// defaults.
type Fence struct {
	TimeoutMs int64    `json:"timeoutMs,omitempty"` // wall-clock limit of one call, milliseconds
	MaxBytes  int64    `json:"maxBytes,omitempty"`  // cap on a file read or a response, bytes
	Hosts     []string `json:"hosts,omitempty"`     // http: hosts allowed besides the Source's origin
	Allow     []string `json:"allow,omitempty"`     // db-exec-fenced: destructive classes allowed (drop, truncate, alter, delete_all)
}

// ParseManifest parses a manifest strictly: unknown fields, bad Tool ids, unknown adapters
// or kinds, a declared "source" parameter, a "sql" parameter on a db Tool and Tools of the
// reserved vendor "docket" are refused. checkers, keyed by adapter name, check entries.
func ParseManifest(b []byte, checkers map[string]Adapter) (*Manifest, error) {
	if len(b) > MaxManifestBytes {
		return nil, contract.Errorf(contract.CodeManifestInvalid, "the manifest is over %d bytes; split it or remove unused Tools.", MaxManifestBytes)
	}
	var f manifestFile
	if err := contract.DecodeStrict(b, &f); err != nil {
		if de, ok := errors.AsType[*contract.DecodeError](err); ok {
			// The key, its line and the fix, nearest field included: `unknown field
			// "adaptor" (did you mean "adapter"?) at …, line 4; …`.
			return nil, &contract.Error{Code: contract.CodeManifestInvalid, Teaching: de.Error(), Err: err}
		}
		why := err.Error()
		if ce, ok := errors.AsType[*contract.Error](err); ok {
			why = ce.Teaching // its code is the manifest's, not the JSON reader's
		}
		return nil, &contract.Error{Code: contract.CodeManifestInvalid,
			Teaching: fmt.Sprintf("the manifest is not valid %s JSON: %s.", ManifestFormat, why), Err: err}
	}
	if f.Format != ManifestFormat {
		return nil, contract.Errorf(contract.CodeManifestInvalid, "the manifest format is %.40q; set \"format\": %q.", f.Format, ManifestFormat)
	}
	m := &Manifest{tools: map[contract.ToolID]Tool{}, digests: map[contract.ToolID]string{}}
	for id, t := range f.Tools {
		if _, err := contract.ParseToolID(string(id)); err != nil {
			return nil, err
		}
		if strings.HasPrefix(string(id), "docket.") {
			return nil, contract.Errorf(contract.CodeManifestInvalid, "tool %s uses the reserved vendor \"docket\"; the built-in Tools need no declaration, name yours after your own vendor.", id)
		}
		if err := checkTool(id, &t); err != nil {
			return nil, err
		}
		if c, ok := checkers[t.Adapter].(ToolChecker); ok {
			if err := c.CheckTool(id, t); err != nil {
				return nil, fmt.Errorf("tool %s: %w", id, err)
			}
		}
		m.tools[id] = t
	}
	for id, t := range builtinTools() {
		m.tools[id] = t
	}
	for id, t := range m.tools {
		d, err := toolDigest(t)
		if err != nil {
			return nil, fmt.Errorf("digest tool %s: %w", id, err)
		}
		m.digests[id] = d
	}
	return m, nil
}

func checkTool(id contract.ToolID, t *Tool) error {
	kinds, ok := adapterKinds[t.Adapter]
	if !ok {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s names adapter %.40q; use workspace, run, http, db-query, db-exec-fenced or mcp.", id, t.Adapter)
	}
	if t.Adapter == AdapterWorkspace {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s uses the workspace adapter, whose Tools are built in; use docket.workspace.*@1 instead.", id)
	}
	if t.Kind == "" {
		t.Kind = kinds[0]
		if t.Adapter == AdapterHTTP {
			method, _, _ := strings.Cut(strings.TrimSpace(t.Entry), " ")
			t.Kind = HTTPKind(method)
		}
	}
	if t.SourceTypes == nil {
		t.SourceTypes = []string{} // absent and [] are one definition, with one digest
	}
	if !slices.Contains(kinds, t.Kind) {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s has kind %.20q; adapter %s takes %s.", id, t.Kind, t.Adapter, strings.Join(kinds, ", "))
	}
	if strings.TrimSpace(t.Entry) == "" {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s has no entry; say what it runs.", id)
	}
	for _, st := range t.SourceTypes {
		if !slices.Contains(contract.SourceTypes, st) {
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s names source type %.20q; use file, http, db or mcp.", id, st)
		}
	}
	needs := map[string]string{AdapterHTTP: "http", AdapterDBQuery: "db", AdapterDBExecFenced: "db", AdapterMCP: "mcp"}
	if want, ok := needs[t.Adapter]; ok && !slices.Equal(t.SourceTypes, []string{want}) {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s uses adapter %s, which runs against one %s Source; set \"sourceTypes\": [%q].", id, t.Adapter, want, want)
	}
	for name, p := range t.Params {
		if name == ArgSource {
			return contract.Errorf(contract.CodeToolParamReserved, "tool %s declares a parameter \"source\", which is reserved for naming the Source; rename it.", id)
		}
		if name == ArgSQL && (t.Adapter == AdapterDBQuery || t.Adapter == AdapterDBExecFenced) {
			return contract.Errorf(contract.CodeToolParamReserved, "tool %s declares a parameter \"sql\"; SQL comes only from the Tool's entry template, with {param} placeholders bound as driver parameters.", id)
		}
		if !validArgName(name) {
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s has parameter %.40q; use lower-case letters, digits and '_', starting with a letter.", id, name)
		}
		if len(p.Description) > 2000 {
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s parameter %s has a description over 2000 bytes; shorten it.", id, name)
		}
		switch p.Type {
		case ParamString, ParamInteger, ParamNumber, ParamBoolean:
		default:
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s parameter %s has type %.20q; use string, integer, number or boolean.", id, name, p.Type)
		}
	}
	for _, f := range t.Facts {
		if !validArgName(f.Predicate) {
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s has a fact with predicate %.40q; use lower-case letters, digits and '_', starting with a letter.", id, f.Predicate)
		}
		if len(t.SourceTypes) == 0 {
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s maps its rows to facts but runs against no Source; facts take a Source's words and tier, so set sourceTypes or remove facts.", id)
		}
		if len(f.Args) == 0 {
			return contract.Errorf(contract.CodeManifestInvalid, "tool %s has fact %s with no args; map each argument to a \"$column\" of its rows.", id, f.Predicate)
		}
		for arg, spec := range f.Args {
			col, isCol := strings.CutPrefix(spec, "$")
			// A column is the Tool's own name (an MCP server's rows are often camelCase);
			// the fact's arguments are Board names, lower-case.
			if !validArgName(arg) || isCol && !validColumn(col) {
				return contract.Errorf(contract.CodeManifestInvalid, "tool %s fact %s maps %.40q from %.40q; name arguments with lower-case letters, digits and '_', and \"$column\"s with letters, digits and '_'.", id, f.Predicate, arg, spec)
			}
		}
	}
	if t.Env != nil && t.Adapter != AdapterRun {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s sets env, but adapter %s starts no program of the Tool's; only a run Tool takes env.pass, so remove it.", id, t.Adapter)
	}
	if t.Fence != nil && (t.Fence.TimeoutMs < 0 || t.Fence.MaxBytes < 0) {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s has a negative fence limit; use a positive number or leave it out for the default.", id)
	}
	return nil
}

// HTTPKind is the kind of an http Tool whose manifest entry says none: GET and HEAD
// read, any other method writes (docs/workers.md, "http").
func HTTPKind(method string) string {
	switch strings.ToUpper(method) {
	case "GET", "HEAD":
		return contract.ToolKindRead
	}
	return contract.ToolKindWrite
}

// validColumn reports whether s may name a column of a Tool's rows: letters of either
// case, digits and '_', starting with a letter or '_', as a direct Action's facts mapping
// takes it (capability.CheckDirect).
func validColumn(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func validArgName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '_')) {
			return false
		}
	}
	return true
}

// toolDigest is the sha256 of the JCS of t's JSON definition.
func toolDigest(t Tool) (string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", err
	}
	return grant.Digest(canon), nil
}

// Lookup returns the definition and digest of the Tool id.
func (m *Manifest) Lookup(id contract.ToolID) (Tool, string, bool) {
	t, ok := m.tools[id]
	return t, m.digests[id], ok
}

// IDs returns the Tool ids, sorted.
func (m *Manifest) IDs() []contract.ToolID {
	ids := make([]contract.ToolID, 0, len(m.tools))
	for id := range m.tools {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// CheckArgs checks args against t's params: unknown arguments, missing required ones and
// wrong types are refused with tool_args. The reserved "source" must already be removed.
func (t Tool) CheckArgs(id contract.ToolID, args contract.Args) error {
	for name, v := range args {
		p, ok := t.Params[name]
		if !ok {
			if t.openArgs && validArgName(name) {
				continue
			}
			return contract.Errorf(contract.CodeToolArgs, "tool %s takes no argument %.40q; pass only its declared parameters.", id, name)
		}
		if !typeMatches(p.Type, v) {
			return contract.Errorf(contract.CodeToolArgs, "tool %s argument %s must be a %s.", id, name, p.Type)
		}
	}
	for name, p := range t.Params {
		if _, ok := args[name]; p.Required && !ok {
			return contract.Errorf(contract.CodeToolArgs, "tool %s needs argument %s.", id, name)
		}
	}
	return nil
}

func typeMatches(typ string, v contract.Value) bool {
	switch typ {
	case ParamString:
		return v.Kind() == contract.ValueString
	case ParamInteger:
		return v.Kind() == contract.ValueInt
	case ParamNumber:
		return v.Kind() == contract.ValueInt || v.Kind() == contract.ValueFloat
	case ParamBoolean:
		return v.Kind() == contract.ValueBool
	}
	return false
}
