package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// maxPageTasks is how many of an Agent's tasks its page lists, newest first.
const maxPageTasks = 20

// taskView is one task on an Agent's page.
type taskView struct {
	contract.Task
	Short    string // its text, cut for the list
	Final    string // its final answer as shown: long JSON put in words (shownText)
	FinalRaw string // its whole final answer when Final leaves some out
	CancelBy who    // who cancelled it, by name, when someone did
}

// taskForm is what the person typed into the form that gives an Agent a task, kept when
// it was refused, with why.
type taskForm struct {
	Text, Conversation, CaseType, Key, CaseID string
	Error                                     string
}

// agentTasks is the page of agent's tasks, newest first, the request's list asks for.
func (s *Server) agentTasks(r *http.Request, v visit, a contract.Agent, list listPage) ([]taskView, pager, error) {
	ts, err := s.auth.Tasks(r.Context(), v.caller, v.project, string(a.ID))
	if err != nil {
		return nil, pager{}, err
	}
	slices.Reverse(ts)
	ts, pg, err := pageOf(r.URL.Query(), list, ts, func(t contract.Task) string { return string(t.ID) }, maxPageTasks)
	if err != nil {
		return nil, pager{}, err
	}
	var cancellers []contract.Principal
	for _, t := range ts {
		if t.Cancel != nil {
			cancellers = append(cancellers, t.Cancel.By)
		}
	}
	book, err := s.names(r.Context(), v, cancellers...)
	if err != nil {
		return nil, pager{}, err
	}
	out := make([]taskView, 0, len(ts))
	for _, t := range ts {
		short := strings.Join(strings.Fields(t.Text), " ")
		if r := []rune(short); len(r) > 120 {
			short = string(r[:120]) + "…"
		}
		v := taskView{Task: t, Short: short}
		if t.Cancel != nil {
			v.CancelBy = book.who(t.Cancel.By)
		}
		if t.Result != nil {
			v.Final, v.FinalRaw = shownText(t.Result.Final)
		}
		out = append(out, v)
	}
	return out, pg, nil
}

// pagePostTask posts the form's task for the Agent and shows its page again; a refusal
// is shown above the form, which keeps what was typed.
func (s *Server) pagePostTask(w http.ResponseWriter, r *http.Request, v visit) error {
	form := taskForm{Text: r.PostFormValue("text"), Conversation: strings.TrimSpace(r.PostFormValue("conversation")),
		CaseType: strings.TrimSpace(r.PostFormValue("case_type")), Key: strings.TrimSpace(r.PostFormValue("key")),
		CaseID: strings.TrimSpace(r.PostFormValue("case"))}
	req := contract.TaskRequest{Agent: r.PathValue("agent"), Text: form.Text, Conversation: form.Conversation,
		CaseType: form.CaseType, CaseID: contract.CaseID(form.CaseID)}
	var err error
	if form.Key != "" {
		err = contract.DecodeStrict([]byte(form.Key), &req.BusinessKey)
		if err != nil {
			err = contract.Errorf(contract.CodeInvalidArgument, "the business key is not a JSON object of the Case Type's key arguments, such as {\"job_id\": \"calc-001\"}")
		}
	}
	var t contract.Task
	if err == nil {
		t, err = s.auth.PostTask(r.Context(), v.caller, v.project, req)
	}
	if ce, ok := errors.AsType[*contract.Error](err); ok && httpStatus(ce.Code) < http.StatusInternalServerError {
		form.Error = ce.Teaching
		return s.showAgent(w, r, v, httpStatus(ce.Code), form, nil)
	}
	if err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(string(t.Agent)),
		noticeTaskPosted)
}

// pagePostMessage adds the form's words to the conversation and shows it again.
func (s *Server) pagePostMessage(w http.ResponseWriter, r *http.Request, v visit) error {
	t, err := s.auth.PostMessage(r.Context(), v.caller, v.project, r.PathValue("agent"), conversation(r),
		contract.MessageRequest{Text: r.PostFormValue("text")})
	if err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(string(t.Agent))+
		"/conversations/"+url.PathEscape(string(t.Conversation)), noticeMessagePosted)
}

// pageAgentAgain sends a GET of the address a refused task answered at (a live page
// bringing itself up to date) to the Agent's page.
func (s *Server) pageAgentAgain(w http.ResponseWriter, r *http.Request, v visit) error {
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(r.PathValue("agent")), http.StatusSeeOther)
	return nil
}
