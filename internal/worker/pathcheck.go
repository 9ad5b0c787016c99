package worker

import (
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/landing"
)

// checkDelegatedPath refuses, with contract.CodePathNeedsMember, a call an orchestrator
// approved under a path class of the delegation policy (the grant's PathCheck names the
// argument, arg) whose landing path is not plainly inside its file Source ([landing.Check]:
// absolute, climbing out with "..", passing a symbolic link, or naming a file with a
// second hard link, whose other name may be anywhere on the machine). The authority knows
// the path, not the file; only the worker can look, and a member then decides the call.
// The coding agent's hook makes the same check with the same function. The sentence says
// what was found, for the member who reads it.
func checkDelegatedPath(src *Source, args contract.Args, arg string) error {
	refuse := func(format string, a ...any) error {
		return contract.Errorf(contract.CodePathNeedsMember, format+"; an orchestrator's approval does not cover it, so a member decides the call", a...)
	}
	v, ok := args[arg]
	if !ok || v.Kind() != contract.ValueString {
		return refuse("the call has no string argument %q for the worker to check", arg)
	}
	p := v.Str()
	if src == nil || src.Type != "file" || src.Root == "" {
		return refuse("the call runs against no file Source, so the worker cannot see where %.80q lands", p)
	}
	if why := landing.Check(src.Root, p); why != "" {
		return refuse("%s", why)
	}
	return nil
}
