package worker

import (
	"maps"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// SelectSource finds the Source a call of Tool id runs against and returns the arguments
// without the reserved "source". The Source is named by the served
// target and, if the call passes it, by the "source" argument too; both must agree.
//   - A source-free Tool given a Source is refused: source_free_has_source.
//   - A Tool that needs a Source and names none is refused: source_selection_required.
//   - A Source whose type the Tool does not take, or that differs from the served type,
//     is refused: source_type_mismatch.
func SelectSource(id contract.ToolID, t Tool, args contract.Args, target contract.WorkTarget, v *Vault) (*Source, contract.Args, error) {
	named, passed := args[ArgSource]
	rest := maps.Clone(args)
	delete(rest, ArgSource)
	if rest == nil {
		rest = contract.Args{}
	}
	if len(t.SourceTypes) == 0 {
		if passed || target.Source != "" {
			return nil, nil, contract.Errorf(contract.CodeSourceFreeSource, "tool %s runs without a Source; drop the source argument and target.", id)
		}
		return nil, rest, nil
	}
	name := target.Source
	if passed {
		if named.Kind() != contract.ValueString {
			return nil, nil, contract.Errorf(contract.CodeToolArgs, "the source argument of %s must be a Source name (a string).", id)
		}
		if name != "" && named.Str() != name {
			return nil, nil, contract.Errorf(contract.CodeToolArgs, "the source argument of %s names another Source than the served target; serve one Source.", id)
		}
		name = named.Str()
	}
	if name == "" {
		return nil, nil, contract.Errorf(contract.CodeSourceSelection, "tool %s runs against a Source of type %s; name it with the source argument.", id, strings.Join(t.SourceTypes, " or "))
	}
	s, ok := v.Source(name)
	if !ok {
		return nil, nil, contract.Errorf(contract.CodeSourceUnknown, "source %.63q is not in this worker's vault; add it there or bind another Source.", name)
	}
	if !slices.Contains(t.SourceTypes, s.Type) || target.SourceType != "" && target.SourceType != s.Type {
		return nil, nil, contract.Errorf(contract.CodeSourceTypeMatch, "source %s is of type %s, but tool %s runs against %s; choose a Source of that type.", name, s.Type, id, strings.Join(t.SourceTypes, " or "))
	}
	return s, rest, nil
}
