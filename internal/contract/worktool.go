package contract

import (
	"fmt"
	"strconv"
	"strings"
)

// Error codes of worker Tools, Sources and adapters. Each refusal of a
// manifest, a vault or a served call carries one of these and a sentence naming the fix.
const (
	CodeToolID            Code = "tool_id"             // a Tool id that is not "vendor.name@N"
	CodeManifestInvalid   Code = "manifest_invalid"    // the tool manifest is malformed or names an unknown adapter
	CodeToolParamReserved Code = "tool_param_reserved" // a manifest declares a reserved parameter (source; sql for db tools)
	CodeToolUnknown       Code = "tool_unknown"        // served work names a Tool this worker does not have
	CodeToolDigest        Code = "tool_digest"         // served work pins another definition of the Tool
	CodeToolArgs          Code = "tool_args"           // an argument is missing, unknown or of the wrong type
	CodeVaultPermissions  Code = "vault_permissions"   // the vault file is readable by group or others
	CodeVaultInvalid      Code = "vault_invalid"       // the vault is malformed
	CodeSourceUnknown     Code = "source_unknown"      // a Source name that is not in the vault
	CodeSourceFreeSource  Code = "source_free_has_source"
	CodeSourceSelection   Code = "source_selection_required"
	CodeSourceTypeMatch   Code = "source_type_mismatch"
	CodeWorkRow           Code = "work_row" // a served row whose shape is not the closed work row

	CodeWorkspacePath      Code = "workspace_path"      // traversal, an absolute path or an escape from the Source root
	CodeWorkspaceSymlink   Code = "workspace_symlink"   // a write through a symbolic link
	CodeWorkspaceBinary    Code = "workspace_binary"    // a text or JSON read of a binary file
	CodeWorkspaceTooLarge  Code = "workspace_too_large" // a file over the size cap
	CodeWorkspaceForbidden Code = "workspace_forbidden" // delete, shell and other operations the workspace never does
	CodeWorkspaceNotFound  Code = "workspace_not_found" // the path does not exist
	CodeWorkspaceJSON      Code = "workspace_json"      // read_json of a file that is not one JSON object

	CodeRunEntry     Code = "run_entry"      // the run entry is absolute, climbs out of the worker root or is missing
	CodeRunRefused   Code = "run_refused"    // the program exited 2: it refused, with stderr's first line as the reason
	CodeRunFailed    Code = "run_failed"     // the program exited with another non-zero status
	CodeRunOutput    Code = "run_output"     // stdout is not rows of JSON objects
	CodeToolTimeout  Code = "tool_timeout"   // the call passed its time limit
	CodeOutputTooBig Code = "output_too_big" // the result passed its size cap

	CodeHTTPHost   Code = "http_host"   // the URL's host is not the Source's origin or an allowed host
	CodeHTTPStatus Code = "http_status" // the server answered with a non-2xx status

	CodeSQLStatement   Code = "sql_statement"   // not exactly one statement, or not a SELECT for db-query
	CodeSQLDestructive Code = "sql_destructive" // DROP, TRUNCATE, ALTER or DELETE without WHERE, not declared in the fence

	CodeMCPTool        Code = "mcp_tool"        // the MCP server reported the tool call as an error
	CodeMCPUnavailable Code = "mcp_unavailable" // the MCP server could not be reached or initialized
	CodeEffectUnknown  Code = "effect_unknown"  // the call failed after its effect may have happened
	CodeToolFailed     Code = "tool_failed"     // the call failed before any effect, for a reason kept in the worker's log

	CodeToolSchema    Code = "tool_schema"    // a discovered MCP tool's input schema cannot be mapped to manifest params
	CodeToolExists    Code = "tool_exists"    // a Tool id being added is already in the manifest
	CodeSourceExists  Code = "source_exists"  // a Source name being added is already in the vault
	CodeTemplateField Code = "template_field" // a tool template's input is missing or invalid; the error names the field
)

// ToolID names a Tool: "vendor.name@N", dot-separated lower-case segments (at least two)
// and a positive version without leading zeros.
type ToolID string

// ParseToolID checks s against the Tool id form.
func ParseToolID(s string) (ToolID, error) {
	name, ver, ok := strings.Cut(s, "@")
	if !ok {
		return "", Errorf(CodeToolID, "tool id %.80q has no version; write it as vendor.name@1.", s)
	}
	if n, err := strconv.Atoi(ver); err != nil || n < 1 || ver != strconv.Itoa(n) {
		return "", Errorf(CodeToolID, "tool id %.80q has version %.20q; the version is a positive integer without leading zeros, as in vendor.name@1.", s, ver)
	}
	segs := strings.Split(name, ".")
	if len(segs) < 2 || len(name) > 128 {
		return "", Errorf(CodeToolID, "tool id %.80q needs a vendor and a name of at most 128 characters, as in acme.report@1.", s)
	}
	for _, seg := range segs {
		if err := checkToolSegment(seg); err != nil {
			return "", Errorf(CodeToolID, "tool id %.80q: %v", s, err)
		}
	}
	return ToolID(s), nil
}

func checkToolSegment(seg string) error {
	if seg == "" {
		return fmt.Errorf("a segment is empty; separate segments with single dots")
	}
	for i, r := range seg {
		ok := r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("segment %q must be lower-case letters, digits, '_' and '-', starting with a letter", seg)
		}
	}
	return nil
}

// String returns the id.
func (id ToolID) String() string { return string(id) }

// Tool kinds: what a Tool does to the world.
const (
	ToolKindRead  = "read"
	ToolKindWrite = "write"
	ToolKindRun   = "run"
)

// ToolDescriptor is what a worker advertises for one Tool in each Poll.
// The authority serves work for it only while a lock on the Connection names the same Tool
// and Digest.
type ToolDescriptor struct {
	Tool          ToolID   `json:"tool"`
	Digest        string   `json:"digest"`        // "sha256:…" of the JCS of the Tool's definition
	Adapter       string   `json:"adapter"`       // workspace, run, http, db-query, db-exec-fenced or mcp
	AdapterDigest string   `json:"adapterDigest"` // "sha256:…" naming the adapter and its version
	Kind          string   `json:"kind"`          // read, write or run
	SourceTypes   []string `json:"sourceTypes"`   // empty for a source-free Tool

	// Direct says the Tool's params are stated in full (every manifest and built-in Tool
	// but one whose arguments are open), so the authority may offer it, once locked, as a
	// direct Action (docs/workers.md, "Direct Actions"). A worker that predates direct
	// Actions sends none of the fields below.
	Direct      bool        `json:"direct,omitempty"`
	Description string      `json:"description,omitempty"` // what the Tool does, for the model and the Tools page
	Params      []ToolParam `json:"params,omitempty"`      // the arguments it takes besides "source", by name
	Returns     []string    `json:"returns,omitempty"`     // the columns of its rows
	Facts       []ToolFact  `json:"facts,omitempty"`       // how its rows become facts: the direct Action's returns mapping
}

// ToolParam is one argument a Tool takes, as its manifest declares it.
type ToolParam struct {
	Name        string `json:"name"`
	Type        string `json:"type"` // string, integer, number or boolean
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}

// ToolFact maps each row a Tool returns to one fact: Predicate with each argument taken
// from a column ("$column") or a constant, the shape of a capability Action's returns.
// The predicate must be a word of the Source the call runs against.
type ToolFact struct {
	Predicate string            `json:"predicate"`
	Args      map[string]string `json:"args"`
}
