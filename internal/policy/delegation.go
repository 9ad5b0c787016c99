package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Covering returns the first class of d that covers the request vector v, or ok false:
// a class covers a call of its Action (or its Tool) when the call's "path" argument
// matches its path glob, its "command" argument is one simple command whose first words,
// split by POSIX shell rules, are its command_prefix's words, or its "agent" argument names its agent. A path that is absolute or has
// a .. segment, and a command with any shell syntax, is covered by no class: a member
// decides it. So does a manual Agent's Board act (v.Call): manual means a person makes
// every write.
func (d *Delegation) Covering(v contract.RequestVector) (Class, bool) {
	if d == nil || v.Call != "" {
		return Class{}, false
	}
	for _, c := range d.Classes {
		if c.Action != "" && c.Action != v.Action || c.Tool != "" && c.Tool != v.Tool {
			continue
		}
		if arg, ok := stringArg(v.Args, classArg(c)); ok && c.admits(arg) {
			return c, true
		}
	}
	return Class{}, false
}

// PathArg is the argument of a call a path class reads: the Source-relative path it
// lands on.
const PathArg = "path"

// classArg is the argument of a call a class reads.
func classArg(c Class) string {
	switch {
	case c.Path != "":
		return PathArg
	case c.CommandPrefix != "":
		return "command"
	}
	return "agent"
}

func stringArg(args contract.Args, name string) (string, bool) {
	v, ok := args[name]
	if !ok || v.Kind() != contract.ValueString {
		return "", false
	}
	return v.Str(), true
}

// admits reports whether the call's argument is inside the class.
func (c Class) admits(arg string) bool {
	switch {
	case c.Path != "":
		return pathInside(arg) && globMatch(c.Path, arg)
	case c.CommandPrefix != "":
		return coversCommand(c.CommandPrefix, arg)
	}
	return arg == c.Agent
}

// pathInside reports whether p is a relative path that stays inside its Source.
func pathInside(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !slices.Contains(strings.Split(p, "/"), "..") && !strings.Contains(p, "\\")
}

// globMatch matches p against a glob whose "**" segment stands for any number of
// segments and whose other segments are path.Match patterns.
func globMatch(glob, p string) bool {
	return matchSegments(strings.Split(glob, "/"), strings.Split(p, "/"))
}

func matchSegments(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchSegments(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, err := path.Match(g[0], p[0]); err != nil || !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}
