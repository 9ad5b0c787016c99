package console

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// pageCancelTask cancels a task from its Agent's page and shows the page again: a task
// no runtime took yet ends at once; one a runtime runs stops at its next step. A task
// that ended meanwhile is said so, not shown as an error.
func (s *Server) pageCancelTask(w http.ResponseWriter, r *http.Request, v visit) error {
	back := "/projects/" + url.PathEscape(string(v.project)) + "/agents/" + url.PathEscape(r.PathValue("agent"))
	t, err := s.auth.CancelTask(r.Context(), v.caller, v.project, taskOf(r))
	if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Code == contract.CodeTaskFinished {
		return redirectNotice(w, r, back, noticeTaskEnded)
	}
	if err != nil {
		return err
	}
	if t.State == contract.TaskCancelled {
		return redirectNotice(w, r, back, noticeTaskCancelled)
	}
	return redirectNotice(w, r, back, noticeTaskCancelAsked)
}
