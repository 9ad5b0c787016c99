package worker

import "github.com/docketrun/docket/internal/environ"

// Variables the worker sets for a run program from the work item.
const (
	EnvInvocation   = "DOCKET_INVOCATION_ID" // the Operation the call runs
	EnvSourceType   = "DOCKET_SOURCE_TYPE"   // the selected Source's type; unset for a Source-free Tool
	EnvSourceAccess = "DOCKET_SOURCE_ACCESS" // how to reach the selected Source; see [SourceAccess]
)

// ScrubEnv returns the environment for a program the worker starts, from env in
// os.Environ form: the one allow-list of [environ.Allow] (the basics and what pass names,
// case-insensitively; DOCKET_* never). A Tool's env.pass is its pass.
func ScrubEnv(env, pass []string) []string { return environ.Allow(env, pass) }

// CallEnv returns the variables the work item decides for a program running call:
// DOCKET_INVOCATION_ID, and for a call against a Source DOCKET_SOURCE_TYPE and
// DOCKET_SOURCE_ACCESS. A Source-free Tool gets no Source variable.
func CallEnv(c Call) []string {
	var out []string
	if c.Invocation != "" {
		out = append(out, EnvInvocation+"="+c.Invocation)
	}
	if c.Source != nil {
		out = append(out, EnvSourceType+"="+c.Source.Type)
		if a := SourceAccess(c.Source); a != "" {
			out = append(out, EnvSourceAccess+"="+a)
		}
	}
	return out
}

// SourceAccess returns how a program reaches Source s: a file Source's root, an http
// Source's URL, a db Source's DSN, an mcp Source's URL ("" for a stdio mcp Source). It
// may hold a credential: it goes only to the program a grant names, for the one call,
// and only for a Source of a type the Tool declares.
func SourceAccess(s *Source) string {
	switch s.Type {
	case "file":
		return s.Root
	case "db":
		return s.DSN.Reveal()
	case "http", "mcp":
		return s.URL.Reveal()
	}
	return ""
}
