package workbench

import (
	"os"

	"github.com/docketrun/docket/internal/environ"
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
	return supervisor.Child{Name: workerChild, Path: exe, Env: env, Restart: restart,
		Args: []string{"docket", "worker", "--manifest", manifest, "--vault", vault, "--workspace-tools", "read-write"}}
}

// ChildEnviron is the environment of a child of docket start or the demo: the one
// allow-list of started programs ([environ.Allow]: the basics, and the variables pass
// names, never DOCKET_*) drawn from this process's environment, plus extra, what the
// parent hands the child on purpose (its data dir, URL and key). A secret in the shell
// that started docket start (AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY) reaches no child
// unless a person names it in pass (docs/workbench.md).
func ChildEnviron(pass []string, extra ...string) []string {
	return append(environ.Allow(os.Environ(), pass), extra...)
}
