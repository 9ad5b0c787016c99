package contract

import (
	"fmt"
	"slices"
)

// MetaViewDeltaKey is the key under a tools/call's _meta where a client says, with true,
// that it can apply a [ViewDelta]: the gateway may then answer a changed View as the
// changes from the View the conversation holds (_meta [MetaViewKey]) instead of in full.
// A client that does not send it is never sent a delta.
const MetaViewDeltaKey = "docket/viewDelta"

// ViewDelta stands in for a [ToolResult.View] that changed: applied by [ViewDelta.Apply]
// to the View with digest From, the one the conversation holds, it gives the View whose
// digest the answer's [HostMeta.ViewDigest] names. Each list changes by its own
// [ListDelta]; a list or the position left out is unchanged. See docs/mcp.md, "A View
// sent as what changed".
type ViewDelta struct {
	From      Digest                      `json:"from"`
	Position  *Position                   `json:"position,omitempty"` // the new position, when it changed
	Cases     ListDelta[CaseEntry]        `json:"cases,omitzero"`
	CaseTypes ListDelta[CaseTypeEntry]    `json:"caseTypes,omitzero"`
	Roots     ListDelta[RootEntry]        `json:"roots,omitzero"`
	Nodes     ListDelta[Node]             `json:"nodes,omitzero"`
	Actions   ListDelta[ActionEntry]      `json:"actions,omitzero"`
	Decisions ListDelta[DecidableRequest] `json:"decisions,omitzero"` // only when both Views list decisions
}

// ListDelta is how one bounded list of the View changed: the entries Removed (named by
// their key: see [ViewKey]), then Added placed at their positions in the new list, the
// entries kept staying in their order. An entry whose content changed is removed and
// added again.
type ListDelta[T any] struct {
	Removed   []string    `json:"removed,omitempty"`
	Added     []Placed[T] `json:"added,omitempty"`
	Truncated *bool       `json:"truncated,omitempty"` // the list's new truncated, when it changed
}

// Placed is an entry of a [ListDelta] and its position (from 0) in the new list.
type Placed[T any] struct {
	At   int `json:"at"`
	Item T   `json:"item"`
}

// ViewKey is the key by which a [ListDelta] names an entry of a View's list: a Case or a
// root by its caseId, a Case Type by its name, a node by its nodeId, a decision by its
// request id, and an Action by its name, followed by "@" and its caseId when it has one.
// Within one list of a View the keys are unique; a View whose keys are not is sent whole.
func ViewKey[T CaseEntry | CaseTypeEntry | RootEntry | Node | ActionEntry | DecidableRequest](e T) string {
	switch e := any(e).(type) {
	case CaseEntry:
		return string(e.CaseID)
	case CaseTypeEntry:
		return e.Name
	case RootEntry:
		return string(e.CaseID)
	case Node:
		return e.NodeID
	case ActionEntry:
		if e.CaseID == "" {
			return e.Name
		}
		return e.Name + "@" + string(e.CaseID)
	case DecidableRequest:
		return string(e.ID)
	}
	panic("unreachable")
}

// Apply returns the View d makes of v, the View with digest d.From. It fails when d does
// not fit v (a removed key v does not hold, a position out of order). A caller checks
// the result's [ViewDigest] against the digest the answer names, and holds no View when
// they differ.
func (d ViewDelta) Apply(v View) (View, error) {
	out := v
	if d.Position != nil {
		out.Position = *d.Position
	}
	var err error
	if out.Cases, err = applyList(v.Cases, d.Cases, ViewKey[CaseEntry]); err != nil {
		return View{}, fmt.Errorf("apply view delta to cases: %w", err)
	}
	if out.CaseTypes, err = applyList(v.CaseTypes, d.CaseTypes, ViewKey[CaseTypeEntry]); err != nil {
		return View{}, fmt.Errorf("apply view delta to caseTypes: %w", err)
	}
	if out.Roots, err = applyList(v.Roots, d.Roots, ViewKey[RootEntry]); err != nil {
		return View{}, fmt.Errorf("apply view delta to roots: %w", err)
	}
	if out.Nodes, err = applyList(v.Nodes, d.Nodes, ViewKey[Node]); err != nil {
		return View{}, fmt.Errorf("apply view delta to nodes: %w", err)
	}
	if out.Actions, err = applyList(v.Actions, d.Actions, ViewKey[ActionEntry]); err != nil {
		return View{}, fmt.Errorf("apply view delta to actions: %w", err)
	}
	switch {
	case v.Decisions != nil:
		dec, err := applyList(*v.Decisions, d.Decisions, ViewKey[DecidableRequest])
		if err != nil {
			return View{}, fmt.Errorf("apply view delta to decisions: %w", err)
		}
		out.Decisions = &dec
	case len(d.Decisions.Removed) > 0 || len(d.Decisions.Added) > 0 || d.Decisions.Truncated != nil:
		return View{}, fmt.Errorf("apply view delta: decisions changed in a View that lists none")
	}
	return out, nil
}

// applyList returns old changed by d. The result is a new slice: old's items are never
// written. An empty result keeps old's form (null or []), which the View's digest sees;
// the gateway sends a list whose form changed whole.
func applyList[T any](old Bounded[T], d ListDelta[T], key func(T) string) (Bounded[T], error) {
	if len(d.Removed) == 0 && len(d.Added) == 0 {
		if d.Truncated != nil {
			old.Truncated = *d.Truncated
		}
		return old, nil
	}
	gone := make(map[string]bool, len(d.Removed))
	for _, k := range d.Removed {
		gone[k] = true
	}
	kept := make([]T, 0, len(old.Items))
	seen := make(map[string]bool, len(old.Items))
	for _, it := range old.Items {
		k := key(it)
		if seen[k] {
			return Bounded[T]{}, fmt.Errorf("the held list names %q twice", k)
		}
		seen[k] = true
		if gone[k] {
			delete(gone, k)
			continue
		}
		kept = append(kept, it)
	}
	if len(gone) > 0 {
		return Bounded[T]{}, fmt.Errorf("removes %d entries the held list does not have", len(gone))
	}
	items := make([]T, 0, len(kept)+len(d.Added))
	a := 0
	for len(kept) > 0 || a < len(d.Added) {
		if a < len(d.Added) && d.Added[a].At == len(items) {
			items = append(items, d.Added[a].Item)
			a++
			continue
		}
		if len(kept) == 0 {
			return Bounded[T]{}, fmt.Errorf("adds an entry at %d, past the list's end %d", d.Added[a].At, len(items))
		}
		items = append(items, kept[0])
		kept = kept[1:]
	}
	if old.Items == nil && len(items) == 0 {
		items = nil
	}
	out := Bounded[T]{Items: slices.Clip(items), Truncated: old.Truncated}
	if d.Truncated != nil {
		out.Truncated = *d.Truncated
	}
	return out, nil
}
