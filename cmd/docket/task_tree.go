package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

type taskTreeCmd struct {
	clientFlags
	ID string `arg:"" help:"The id of any task of the tree (docket task list shows them)."`
}

func (c *taskTreeCmd) Help() string {
	return `Shows who asked whom: the task no Agent asked for at the root, and under each task the
tasks its Agent posted for other Agents through the built-in Action docket.ask, each with
its Agent and state (docs/agents.md). Name any task of the tree.

Examples:
  docket task tree t-0123456789abcdef
  docket task tree t-0123456789abcdef -o json   # GET /api/v1/projects/{project}/tasks/{task}/tree`
}

func (c *taskTreeCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	n, err := cl.api.TaskTree(ctx, c.Project, c.ID)
	if err = credential(err); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, n)
	}
	var b strings.Builder
	writeTree(&b, n, 0)
	_, err = fmt.Fprint(e.Stdout, b.String())
	return err
}

// writeTree writes n and the tasks asked under it, one line each, indented by depth.
func writeTree(b *strings.Builder, n contract.TaskNode, depth int) {
	fmt.Fprintf(b, "%s%s\t%s\t%s\t%s\n", strings.Repeat("  ", depth), n.Task.ID, n.AgentName, n.Task.State, oneLine(n.Task.Text, 60))
	for _, c := range n.Children {
		writeTree(b, c, depth+1)
	}
}

// oneLine is s on one line, cut to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
