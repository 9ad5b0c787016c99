package worker

import (
	"slices"
	"strings"
)

// basicEnv names the variables every started program keeps besides those its Tool's
// env.pass names: what a program needs to find its tools, its home and its language,
// and nothing that is usually a credential. Names match case-insensitively.
var basicEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
	"SYSTEMROOT", "WINDIR", "PATHEXT"} // the last three: programs on Windows need them to start

// Variables the worker sets for a run program from the work item (issue 11, item 4).
const (
	EnvInvocation   = "DOCKET_INVOCATION_ID" // the Operation the call runs
	EnvSourceType   = "DOCKET_SOURCE_TYPE"   // the selected Source's type; unset for a Source-free Tool
	EnvSourceAccess = "DOCKET_SOURCE_ACCESS" // how to reach the selected Source; see [SourceAccess]
)

// ScrubEnv returns the environment for a started program, from environ in os.Environ
// form: an allow-list. It keeps the basic variables (PATH, HOME, USER, LOGNAME, LANG,
// LANGUAGE, LC_*, TZ, TMPDIR, TERM) and those pass names, matching names
// case-insensitively, and nothing else: a credential a deny-list would not recognise
// (DB_PASS, MONGODB_URI, a credentialed HTTPS_PROXY) never reaches a program unless a
// person wrote its name in env.pass. Empty pass means the basics only. DOCKET_* is
// dropped even when pass names it: a tool never sees the worker's own credentials.
func ScrubEnv(environ, pass []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		upper := strings.ToUpper(name)
		if strings.HasPrefix(upper, "DOCKET_") {
			continue
		}
		if slices.Contains(basicEnv, upper) || strings.HasPrefix(upper, "LC_") || slices.ContainsFunc(pass, func(p string) bool { return strings.EqualFold(p, name) }) {
			out = append(out, kv)
		}
	}
	return out
}

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
