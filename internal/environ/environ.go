// Package environ builds the allow-listed environment of every program Docket starts: a
// worker's run and stdio mcp programs, and docket start's serve, worker and runtimes
// (docs/workers.md, Environment; docs/workbench.md, docket start).
package environ

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// basic names the variables every started program keeps besides those a caller passes:
// what a program needs to find its tools, its home and its language, and nothing that is
// usually a credential. Names match case-insensitively.
var basic = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
	"SYSTEMROOT", "WINDIR", "PATHEXT"} // the last three: programs on Windows need them to start

// Allow returns the environment for a started program, from env in os.Environ form: an
// allow-list. It keeps the basic variables (PATH, HOME, USER, LOGNAME, LANG, LANGUAGE,
// LC_*, TZ, TMPDIR, TERM) and those pass names, matching names case-insensitively, and
// nothing else: a credential a deny-list would not recognise (DB_PASS, MONGODB_URI, a
// credentialed HTTPS_PROXY) never reaches a program unless a person wrote its name down.
// Empty pass means the basics only. DOCKET_* is dropped even when pass names it: a
// program learns Docket's own credentials only from what its starter adds on purpose.
func Allow(env, pass []string) []string {
	var out []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		upper := strings.ToUpper(name)
		if strings.HasPrefix(upper, "DOCKET_") {
			continue
		}
		if slices.Contains(basic, upper) || strings.HasPrefix(upper, "LC_") || slices.ContainsFunc(pass, func(p string) bool { return strings.EqualFold(p, name) }) {
			out = append(out, kv)
		}
	}
	return out
}

// CheckName says why name cannot be passed to a program, or nil: it must be a plain
// variable name (letters, digits and underscores, not starting with a digit) and not a
// DOCKET_ variable, which [Allow] never passes.
func CheckName(name string) error {
	if name == "" {
		return errEmpty
	}
	for i, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return &nameError{name: name, why: "a variable name holds only letters, digits and underscores, and does not start with a digit"}
		}
	}
	if strings.HasPrefix(strings.ToUpper(name), "DOCKET_") {
		return &nameError{name: name, why: "DOCKET_ variables are never passed on: a program gets Docket's own settings only from what starts it"}
	}
	return nil
}

var errEmpty = errors.New("environ: an empty variable name cannot be passed on")

// nameError is a variable name [CheckName] refuses, with why.
type nameError struct {
	name, why string
}

func (e *nameError) Error() string {
	return fmt.Sprintf("environ: %q cannot be passed on: %s", e.name, e.why)
}
