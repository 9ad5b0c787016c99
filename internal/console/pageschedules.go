package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// schedulesBody is what the Schedules page shows: every schedule with its next fire and
// latest outcome, the fires of the one shown, and the form that makes one.
type schedulesBody struct {
	Schedules []scheduleRow // newest first, at most maxRowsShown
	Pager     pager
	Shown     *contract.Schedule // with its last fires
	ShownBy   who                // who made the one shown, by name
	Agents    []contract.Agent   // the live Agents a schedule may be for
	Form      scheduleForm       // kept after a refusal
	Error     string             // why the form was refused: the field and its teaching
}

// scheduleRow is one schedule in the list, with who made it by name.
type scheduleRow struct {
	contract.Schedule
	By who
}

// scheduleForm is the create form's fields.
type scheduleForm struct {
	Agent, Kind, When, Zone, Missed, Text string
}

// scheduleEvents are the event types that bring the Schedules page up to date.
var scheduleEvents = []string{event.ScheduleCreated, event.SchedulePaused, event.ScheduleResumed, event.ScheduleDeleted,
	event.ScheduleFired, event.ScheduleMissed, event.ScheduleOutcome}

func (s *Server) schedulePages() {
	s.page("GET /projects/{project}/schedules", "schedules", s.pageSchedules)
	s.page("POST /projects/{project}/schedules", "schedules", s.pageCreateSchedule)
	s.page("GET /projects/{project}/schedules/{schedule}", "schedules", s.pageSchedules)
	s.page("POST /projects/{project}/schedules/{schedule}/{act}", "schedules", s.pageScheduleAct)
}

// pageSchedules shows the Schedules page, with one schedule's fires when the path names it.
func (s *Server) pageSchedules(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showSchedules(w, r, v, http.StatusOK, schedulesBody{Form: scheduleForm{Kind: "cron", Missed: string(contract.MissedSkip)}})
}

func (s *Server) showSchedules(w http.ResponseWriter, r *http.Request, v visit, status int, b schedulesBody) error {
	if s.sched == nil {
		return contract.Errorf(contract.CodeNotFound, "this server keeps no schedules.")
	}
	ctx := r.Context()
	ss, err := s.sched.Schedules(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	path := "/projects/" + url.PathEscape(string(v.project)) + "/schedules"
	if id := r.PathValue("schedule"); id != "" {
		path += "/" + url.PathEscape(id) // the pages of the list keep the schedule shown
	}
	ss = newestFirst(ss, func(sc contract.Schedule) (time.Time, string) { return sc.CreatedAt, string(sc.ID) })
	list := listPage{Path: path, Param: "after", What: "schedules"}
	if ss, b.Pager, err = pageOf(r.URL.Query(), list, ss, func(sc contract.Schedule) string { return string(sc.ID) }, maxRowsShown); err != nil {
		return err
	}
	by := make([]contract.Principal, 0, len(ss)+1)
	for _, sc := range ss {
		by = append(by, sc.CreatedBy)
	}
	if id := r.PathValue("schedule"); id != "" {
		sc, err := s.sched.Schedule(ctx, v.caller, v.project, contract.ScheduleID(id))
		if err != nil {
			return err
		}
		b.Shown = &sc
		by = append(by, sc.CreatedBy)
	}
	book, err := s.names(ctx, v, by...)
	if err != nil {
		return err
	}
	for _, sc := range ss {
		b.Schedules = append(b.Schedules, scheduleRow{Schedule: sc, By: book.who(sc.CreatedBy)})
	}
	if b.Shown != nil {
		b.ShownBy = book.who(b.Shown.CreatedBy)
	}
	as, err := s.ids.Agents(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.RevokedAt == nil {
			b.Agents = append(b.Agents, a)
		}
	}
	return s.render(w, r, v, status, "schedules", b, scheduleEvents...)
}

// pageCreateSchedule makes a schedule from the form; a refused one is shown again with the
// teaching that names its field.
func (s *Server) pageCreateSchedule(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.sched == nil {
		return contract.Errorf(contract.CodeNotFound, "this server keeps no schedules.")
	}
	f := scheduleForm{Agent: r.PostFormValue("agent"), Kind: r.PostFormValue("kind"), When: strings.TrimSpace(r.PostFormValue("when")),
		Zone: strings.TrimSpace(r.PostFormValue("zone")), Missed: r.PostFormValue("missed"), Text: r.PostFormValue("text")}
	req := contract.CreateScheduleRequest{TimeZone: f.Zone, Missed: contract.MissedPolicy(f.Missed),
		Task: contract.TaskRequest{Agent: f.Agent, Text: f.Text}}
	if f.Kind == "every" {
		req.Every = f.When
	} else {
		req.Cron = f.When
	}
	sc, err := s.sched.Create(r.Context(), v.caller, v.project, req)
	if err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		return s.showSchedules(w, r, v, status, schedulesBody{Form: f, Error: msg})
	}
	s.backToSchedules(w, r, v, sc.ID, noticeScheduleMade)
	return nil
}

// pageScheduleAct pauses, resumes, runs or deletes one schedule.
func (s *Server) pageScheduleAct(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.sched == nil {
		return contract.Errorf(contract.CodeNotFound, "this server keeps no schedules.")
	}
	ctx, id := r.Context(), contract.ScheduleID(r.PathValue("schedule"))
	var n notice
	switch r.PathValue("act") {
	case "pause":
		if _, err := s.sched.Pause(ctx, v.caller, v.project, id); err != nil {
			return err
		}
		n = noticeSchedulePaused
	case "resume":
		if _, err := s.sched.Resume(ctx, v.caller, v.project, id); err != nil {
			return err
		}
		n = noticeScheduleResumed
	case "run":
		f, err := s.sched.RunNow(ctx, v.caller, v.project, id)
		if err != nil {
			return err
		}
		n = noticeScheduleFired
		if f.Task == "" {
			n = noticeScheduleRefused
		}
	case "delete":
		if _, err := s.sched.Delete(ctx, v.caller, v.project, id); err != nil {
			return err
		}
		s.backToSchedules(w, r, v, "", noticeScheduleDeleted)
		return nil
	default:
		return contract.Errorf(contract.CodeNotFound, "a schedule is paused, resumed, run or deleted; %q is none of these.", r.PathValue("act"))
	}
	s.backToSchedules(w, r, v, id, n)
	return nil
}

func (s *Server) backToSchedules(w http.ResponseWriter, r *http.Request, v visit, id contract.ScheduleID, n notice) {
	path := "/projects/" + url.PathEscape(string(v.project)) + "/schedules"
	if id != "" {
		path += "/" + url.PathEscape(string(id))
	}
	http.Redirect(w, r, path+"?"+withNotice(nil, n), http.StatusSeeOther)
}
