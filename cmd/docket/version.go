package main

import (
	"fmt"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…"; when it is not, the
// module version the Go toolchain stamped stands in (see [buildVersion]).
var version = "dev"

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	_, err := fmt.Fprintln(e.Stdout, "docket", versionLine())
	return err
}

// versionLine is what docket version and docket --version print after "docket": the
// version, and the commit and its date the Go toolchain recorded in the binary.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return buildVersion(version, info)
}

// buildVersion names a build from its build information, so a report of a bug can name
// the exact source: "v1.2.0 (commit 3f2a9c1d0b7e, 2026-12-02T05:14:15Z)", with
// "+ local changes" when the tree was modified. ldflag is the version set with -ldflags,
// "dev" when none was; a binary built by go install module@version carries that version
// in info. A binary built with no commit recorded (outside a git clone, in a linked
// worktree, with -buildvcs=false, by go test) says so rather than printing nothing.
func buildVersion(ldflag string, info *debug.BuildInfo) string {
	v := ldflag
	if info != nil && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	var rev, at string
	modified := false
	if info != nil {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev == "" {
		return v + " (no commit recorded in this build)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := v + " (commit " + rev
	if at != "" {
		out += ", " + at
	}
	if modified {
		out += ", + local changes"
	}
	return out + ")"
}
