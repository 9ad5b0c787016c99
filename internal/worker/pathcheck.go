package worker

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// checkDelegatedPath refuses, with contract.CodePathNeedsMember, a call an orchestrator
// approved under a path class of the delegation policy (the grant's PathCheck names the
// argument, arg) whose landing path is not plainly inside its file Source: absolute,
// climbing out with "..", passing a symbolic link, or naming a file with a second hard
// link, whose other name may be anywhere on the machine. The authority knows the path,
// not the file; only the worker can look, and a member then decides the call. A path not
// there yet is plain: the call creates it. The sentence says what was found, for the
// member who reads it.
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
	if p == "" || path.IsAbs(p) || strings.ContainsAny(p, "\\\x00") || slices.Contains(strings.Split(p, "/"), "..") {
		return refuse("%.80q is absolute, empty or climbs out with \"..\"", p)
	}
	root, err := os.OpenRoot(src.Root)
	if err != nil {
		return refuse("the worker could not open Source %s to check %.80q", src.Name, p)
	}
	defer root.Close()
	parts := strings.Split(path.Clean(p), "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		info, err := root.Lstat(sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return refuse("the worker could not check %.80q", sub)
		case info.Mode()&fs.ModeSymlink != 0:
			return refuse("%.80q is a symbolic link, which may lead anywhere", sub)
		case i == len(parts)-1 && !info.IsDir() && HardLinks(info) > 1:
			return refuse("%.80q has %d hard links, so it may be any file elsewhere on the machine", sub, HardLinks(info))
		}
	}
	return nil
}
