package contract

// Error codes of the worker's fences on the files it reads and the Tools it offers,
// besides those of worktool.go.
const (
	CodeWorkspaceSpecial   Code = "workspace_not_regular" // a FIFO, device, socket or directory where a regular file is read
	CodeWorkspaceHardLink  Code = "workspace_hard_link"   // a file with more than one hard link, which may be any file elsewhere
	CodeWorkspaceProtected Code = "workspace_protected"   // the worker's own vault, manifest or data dir, whatever the path
	CodeWorkspaceHidden    Code = "workspace_hidden"      // a hidden or credential path (.env, .git/, *.pem, id_*) not allowed by the Source
	CodeWorkspaceCeiling   Code = "workspace_ceiling"     // a workspace Tool above the worker's --workspace-tools ceiling
	CodeWorkRefused        Code = "work_refused"          // the worker refused served work before running it; the reason says why
)
