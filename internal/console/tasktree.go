package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// taskTreeBackend is the part of the authority that answers a task's tree of asks
// (docs/agents.md). *authority.Authority satisfies it; an authority without it serves no
// tree.
type taskTreeBackend interface {
	TaskTree(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.TaskNode, error)
}

// taskTree reads the tree of task id for the caller.
func (s *Server) taskTree(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.TaskNode, error) {
	tb, ok := s.auth.(taskTreeBackend)
	if !ok {
		return contract.TaskNode{}, contract.Errorf(contract.CodeNotFound, "this authority keeps no task trees; docket task show names a task's parent.")
	}
	return tb.TaskTree(ctx, c, project, id)
}

// handleTaskTree returns the tree of asks a task belongs to: its root task and every task
// asked for under it, with states.
func (s *Server) handleTaskTree(w http.ResponseWriter, r *http.Request) error {
	t, err := s.taskTree(r.Context(), caller(r), project(r), taskOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// treeRow is one task of the tree page, indented by its depth.
type treeRow struct {
	contract.TaskNode
	Depth   int
	AskedBy string // the asking Agent's name; "" for the root
	Here    bool   // the task the page was opened for
}

// pageTaskTree shows the tree of asks a task belongs to: who asked whom, with states.
func (s *Server) pageTaskTree(w http.ResponseWriter, r *http.Request, v visit) error {
	id := taskOf(r)
	root, err := s.taskTree(r.Context(), v.caller, v.project, id)
	if err != nil {
		return err
	}
	var rows []treeRow
	var walk func(n contract.TaskNode, depth int, by string)
	walk = func(n contract.TaskNode, depth int, by string) {
		rows = append(rows, treeRow{TaskNode: n, Depth: depth, AskedBy: by, Here: n.Task.ID == id})
		for _, c := range n.Children {
			walk(c, depth+1, n.AgentName)
		}
	}
	walk(root, 0, "")
	return s.render(w, r, v, http.StatusOK, "tasktree", struct {
		Root contract.TaskNode
		Rows []treeRow
	}{root, rows}, event.TaskPosted, event.TaskClaimed, event.TaskReported, event.TaskCancelRequested)
}
