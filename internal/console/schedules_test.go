package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_Schedules: a member makes, lists, shows, pauses, resumes, runs and deletes a
// schedule over /api/v1; a bad cron expression is refused naming its field.
func TestServer_Schedules(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	const base = "/api/v1/projects/default/schedules"
	resp, raw := s.do(t, request{method: "POST", path: base, bearer: s.token,
		body: `{"cron":"0 9 * * mon-fri","timeZone":"Europe/Berlin","missed":"run_once","task":{"agent":"calc","text":"Morning report."}}`})
	sc := decode[contract.Schedule](t, raw)
	if resp.StatusCode != http.StatusCreated || sc.NextFire == nil || sc.Task.Agent != string(ag.Agent.ID) || sc.AgentName != "calc" || sc.Missed != contract.MissedRunOnce {
		t.Fatalf("create = %d %s", resp.StatusCode, raw)
	}
	one := base + "/" + string(sc.ID)
	resp, raw = s.do(t, request{method: "GET", path: base, bearer: s.token})
	if p := decode[contract.Page[contract.Schedule]](t, raw); resp.StatusCode != http.StatusOK || len(p.Items) != 1 || p.Items[0].ID != sc.ID {
		t.Errorf("list = %d %s", resp.StatusCode, raw)
	}
	resp, raw = s.do(t, request{method: "POST", path: one + "/pause", bearer: s.token})
	if got := decode[contract.Schedule](t, raw); resp.StatusCode != http.StatusOK || got.State != contract.SchedulePaused {
		t.Errorf("pause = %d %s", resp.StatusCode, raw)
	}
	resp, raw = s.do(t, request{method: "POST", path: one + "/run", bearer: s.token})
	if f := decode[contract.ScheduleFire](t, raw); resp.StatusCode != http.StatusCreated || f.Kind != contract.FireRunNow || f.Task == "" {
		t.Errorf("run now = %d %s", resp.StatusCode, raw)
	}
	resp, raw = s.do(t, request{method: "POST", path: one + "/resume", bearer: s.token})
	if got := decode[contract.Schedule](t, raw); resp.StatusCode != http.StatusOK || got.State != contract.ScheduleActive || got.NextFire == nil {
		t.Errorf("resume = %d %s", resp.StatusCode, raw)
	}
	resp, raw = s.do(t, request{method: "GET", path: one, bearer: s.token})
	if got := decode[contract.Schedule](t, raw); resp.StatusCode != http.StatusOK || len(got.LastFires) != 1 {
		t.Errorf("show = %d %s; want its one fire", resp.StatusCode, raw)
	}

	tests := []refusalCase{
		{"a bad hour", request{method: "POST", path: base, bearer: s.token, body: `{"cron":"0 25 * * *","task":{"agent":"calc","text":"x"}}`}, http.StatusBadRequest, contract.CodeInvalidSchedule},
		{"an unknown field", request{method: "POST", path: base, bearer: s.token, body: `{"cron":"@daily","when":"soon","task":{"agent":"calc","text":"x"}}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an unknown task field", request{method: "POST", path: base, bearer: s.token, body: `{"cron":"@daily","task":{"agent":"calc","text":"x","priority":1}}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an agent makes one", request{method: "POST", path: base, bearer: ag.Token, body: `{"every":"1h","task":{"agent":"calc","text":"x"}}`}, http.StatusForbidden, contract.CodeForbidden},
		{"resume of an active one", request{method: "POST", path: one + "/resume", bearer: s.token}, http.StatusConflict, contract.CodeScheduleState},
		{"an unknown schedule", request{method: "POST", path: base + "/sch_0000000000000000/pause", bearer: s.token}, http.StatusNotFound, contract.CodeNotFound},
	}
	wantRefusals(t, s, tests)

	_, raw = s.do(t, request{method: "POST", path: base, bearer: s.token, body: `{"cron":"0 25 * * *","task":{"agent":"calc","text":"x"}}`})
	if e := decode[contract.Error](t, raw); !strings.Contains(e.Teaching, `the hour "25"`) {
		t.Errorf("teaching of a bad hour = %q; want it to name the hour field", e.Teaching)
	}
	resp, _ = s.do(t, request{method: "DELETE", path: one, bearer: s.token})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("delete = %d", resp.StatusCode)
	}
	resp, _ = s.do(t, request{method: "GET", path: one, bearer: s.token})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("show after delete = %d; want 404", resp.StatusCode)
	}
}
