package workbench

import (
	"os"
	"strings"

	"github.com/docketrun/docket/internal/supervisor"
)

// ServeChild is docket serve as a supervised child of exe, listening on listen.
func ServeChild(exe string, env []string, restart bool, listen string) supervisor.Child {
	return supervisor.Child{Name: "serve", Path: exe, Env: env, Restart: restart,
		Args: []string{"docket", "serve", "--listen", listen}}
}

// WorkerChild is docket worker as a supervised child of exe; its Connection key is in env.
// It offers the workspace write Tools (--workspace-tools read-write): the workbench and the
// demo exist to run governed writes, each still locked, granted and, where the Action says
// so, decided by a person. A worker started by hand offers only reads unless told otherwise.
func WorkerChild(exe string, env []string, restart bool, manifest, vault string) supervisor.Child {
	return supervisor.Child{Name: "worker", Path: exe, Env: env, Restart: restart,
		Args: []string{"docket", "worker", "--manifest", manifest, "--vault", vault, "--workspace-tools", "read-write"}}
}

// ChildEnviron is this process's environment without any DOCKET_ variable, plus extra:
// a child learns its data dir, URL and key from its parent alone.
func ChildEnviron(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "DOCKET_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}
