package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// scheduleBook is the part of the authority the schedule routes need; *schedule.Keeper
// is one.
type scheduleBook interface {
	Create(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.CreateScheduleRequest) (contract.Schedule, error)
	Schedules(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Schedule, error)
	Schedule(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error)
	Pause(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error)
	Resume(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error)
	Delete(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.Schedule, error)
	RunNow(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.ScheduleID) (contract.ScheduleFire, error)
}

// scheduleShape teaches the body of a new schedule.
const scheduleShape = `send one JSON object {"cron": "0 9 * * mon-fri" or "every": "1h", "timeZone": "Europe/Berlin", "missed": "skip" or "run_once", "task": {"agent": "calc", "text": "…"}}; docket schedule create does`

// scheduleRoutes adds the schedule routes when the server has schedules.
func (s *Server) scheduleRoutes() {
	if s.sched == nil {
		return
	}
	s.handle("GET /api/v1/projects/{project}/schedules", s.handleSchedules, authed)
	s.handle("POST /api/v1/projects/{project}/schedules", s.handleCreateSchedule, authed)
	s.handle("GET /api/v1/projects/{project}/schedules/{schedule}", s.handleSchedule, authed)
	s.handle("POST /api/v1/projects/{project}/schedules/{schedule}/pause", s.scheduleAct(s.sched.Pause), authed)
	s.handle("POST /api/v1/projects/{project}/schedules/{schedule}/resume", s.scheduleAct(s.sched.Resume), authed)
	s.handle("DELETE /api/v1/projects/{project}/schedules/{schedule}", s.scheduleAct(s.sched.Delete), authed)
	s.handle("POST /api/v1/projects/{project}/schedules/{schedule}/run", s.handleRunSchedule, authed)
}

func (s *Server) handleSchedules(w http.ResponseWriter, r *http.Request) error {
	ss, err := s.sched.Schedules(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, ss, func(x contract.Schedule) string { return string(x.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleCreateSchedule creates a schedule; a body that does not decode is refused with the
// shape to send.
func (s *Server) handleCreateSchedule(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.CreateScheduleRequest](w, r, s.maxBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: scheduleShape, Err: err}
	}
	if err != nil {
		return err
	}
	sc, err := s.sched.Create(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, sc)
}

func (s *Server) handleSchedule(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.sched.Schedule(r.Context(), caller(r), project(r), contract.ScheduleID(r.PathValue("schedule")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sc)
}

// scheduleAct serves a member's act on one schedule, which takes no body.
func (s *Server) scheduleAct(act func(context.Context, identity.Caller, contract.ProjectID, contract.ScheduleID) (contract.Schedule, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		sc, err := act(r.Context(), caller(r), project(r), contract.ScheduleID(r.PathValue("schedule")))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, sc)
	}
}

func (s *Server) handleRunSchedule(w http.ResponseWriter, r *http.Request) error {
	f, err := s.sched.RunNow(r.Context(), caller(r), project(r), contract.ScheduleID(r.PathValue("schedule")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, f)
}
