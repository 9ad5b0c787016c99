package capability

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// DirectVersion is the version of the built-in release of direct Actions; its digest,
// not its version, moves with every lock, unlock and approval change.
const DirectVersion = "1.0.0"

// directSource is the param a direct Action of a Tool that runs against a Source takes
// to name it, as the worker's reserved argument does (docs/workers.md).
const directSource = "source"

// CheckDirect refuses a Tool descriptor that cannot be offered as a direct Action: a
// param or kind the Board does not know, or a facts mapping that is not predicates with
// "$column" or constant arguments. A descriptor that is not Direct passes: it is
// offered as no Action.
func CheckDirect(d contract.ToolDescriptor) error {
	if !d.Direct {
		return nil
	}
	bad := func(format string, args ...any) error {
		return contract.Errorf(contract.CodeManifestInvalid, "tool %s cannot be offered as a direct Action: "+format+"; fix its manifest entry and lock it again.", append([]any{d.Tool}, args...)...)
	}
	if !toolRE().MatchString(string(d.Tool)) {
		return bad("its id is not vendor.name@N")
	}
	if !slices.Contains(execKinds, board.ExecutionKind(d.Kind)) {
		return bad("its kind %q is not read, write or run", d.Kind)
	}
	seen := map[string]bool{}
	for _, p := range d.Params {
		if !validName(p.Name) || p.Name == directSource || seen[p.Name] {
			return bad("its param %q is not a distinct lower-case name other than source", p.Name)
		}
		seen[p.Name] = true
		if !slices.Contains(paramTypes, board.ParamType(p.Type)) {
			return bad("its param %s has type %q; use string, integer, number or boolean", p.Name, p.Type)
		}
	}
	for _, f := range d.Facts {
		if !validName(f.Predicate) {
			return bad("its facts name the predicate %q; use lower-case letters, digits and _", f.Predicate)
		}
		if len(d.SourceTypes) == 0 {
			return bad("it returns facts but runs against no Source, whose words and tier they would take")
		}
		if len(f.Args) == 0 {
			return bad("its fact %s has no args; map each argument to a \"$column\"", f.Predicate)
		}
		for arg, spec := range f.Args {
			if !validName(arg) {
				return bad("its fact %s has the argument %q; use lower-case letters, digits and _", f.Predicate, arg)
			}
			if strings.HasPrefix(spec, "$") && !directColumnRE().MatchString(spec) {
				return bad("its fact %s maps %s from %q, which is not a \"$column\"", f.Predicate, arg, spec)
			}
		}
	}
	return nil
}

// directColumnRE is a column a direct Tool's fact maps from. Unlike a capability's, its
// letters may be upper case: the rows are the Tool's own (an MCP server's structured
// output is often camelCase, as docket.mcp.discover@1's inputSchema is), while the
// fact's arguments stay lower-case names.
var directColumnRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`) })

// Direct returns the built-in release of direct Actions of the given tool locks: one
// Action per Tool whose lock holds a Direct descriptor (docs/workers.md, "Direct
// Actions"), named after the Tool, its params the Tool's (and "source", to name the
// Source when several of its types are bound), its execution the Tool with its facts
// mapping as returns, its approval the lock's, and no preconditions or effects. A Tool
// locked on several Connections takes the lock made last. A lock whose descriptor
// [CheckDirect] refuses is left out, so a Board always builds. The release's digest is
// over the Actions it declares, so it moves with every lock, unlock and approval change.
// With no direct Tool it declares nothing and ok is false.
func Direct(locks []contract.ToolLock) (d board.Declarations, ok bool, err error) {
	byTool := map[string]contract.ToolLock{}
	for _, l := range locks {
		if l.Descriptor == nil || !l.Descriptor.Direct || string(l.Descriptor.Tool) != l.Tool || CheckDirect(*l.Descriptor) != nil {
			continue
		}
		if prev, seen := byTool[l.Tool]; seen && !later(l, prev) {
			continue
		}
		byTool[l.Tool] = l
	}
	if len(byTool) == 0 {
		return board.Declarations{}, false, nil
	}
	tools := make([]string, 0, len(byTool))
	for t := range byTool {
		tools = append(tools, t)
	}
	slices.Sort(tools)
	d.Release = contract.DirectRelease + "@" + DirectVersion
	for _, t := range tools {
		d.Actions = append(d.Actions, directAction(byTool[t]))
	}
	canon, err := json.Marshal(d.Actions)
	if err != nil {
		return board.Declarations{}, false, fmt.Errorf("digest the direct Actions: %w", err)
	}
	d.Digest = contract.Sum(canon).String()
	return d, true, nil
}

// later reports whether lock a was made after b: by time, then by Connection, so the
// choice is the same on every instance.
func later(a, b contract.ToolLock) bool {
	var at, bt int64
	if a.LockedAt != nil {
		at = a.LockedAt.UnixNano()
	}
	if b.LockedAt != nil {
		bt = b.LockedAt.UnixNano()
	}
	return cmp.Or(cmp.Compare(at, bt), strings.Compare(string(a.Connection), string(b.Connection))) > 0
}

// directAction is the Action of one locked, direct Tool.
func directAction(l contract.ToolLock) board.Action {
	t := l.Descriptor
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = "Runs the " + t.Kind + " Tool " + l.Tool + " on a worker."
	}
	a := board.Action{Name: l.Tool, Description: desc, Approval: l.Approval, Direct: true,
		Execution: &board.Execution{Tool: l.Tool, SourceTypes: slices.Clone(t.SourceTypes), Kind: board.ExecutionKind(t.Kind)}}
	if a.Approval == "" {
		a.Approval = board.ApprovalPerson
	}
	params := slices.Clone(t.Params)
	slices.SortFunc(params, func(x, y contract.ToolParam) int { return strings.Compare(x.Name, y.Name) })
	for _, p := range params {
		a.Params = append(a.Params, board.Param{Name: p.Name, Type: board.ParamType(p.Type), Description: p.Description, Optional: !p.Required})
	}
	if len(t.SourceTypes) > 0 {
		a.Params = append(a.Params, board.Param{Name: directSource, Type: board.ParamString, Optional: true,
			Description: "the Source to run against, by name; needed only when the Connection binds several " + strings.Join(t.SourceTypes, " or ") + " Sources"})
	}
	for _, f := range t.Facts {
		a.Execution.Returns = append(a.Execution.Returns, board.Return{Predicate: f.Predicate, Args: f.Args})
	}
	return a
}
