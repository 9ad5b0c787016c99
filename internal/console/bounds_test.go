package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// testClock is a clock a test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestServer_TaskBounds posts through the API past each bound on what one Agent may be
// given: its open tasks and messages, and those posted in an hour, whoever posts them (a
// member, its delegate or the Agent's own runtime). A post over a bound is refused 429
// task_limit with a teaching, and the place frees as tasks finish and the hour passes.
func TestServer_TaskBounds(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	s := newTestServerOn(t, authority.Config{Now: clock.Now, MaxOpenTasks: 2, MaxTasksPerHour: 4}, console.Config{}, nil)
	ag, err := s.a.CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.a.CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	post := func(t *testing.T, bearer, path, body string, want int) contract.Task {
		t.Helper()
		resp, raw := s.do(t, request{method: "POST", path: path, bearer: bearer, body: body})
		if resp.StatusCode != want {
			t.Fatalf("POST %s = %d %s, want %d", path, resp.StatusCode, raw, want)
		}
		if want != http.StatusCreated {
			if ce := decode[contract.Error](t, raw); ce.Code != contract.CodeTaskLimit || ce.Teaching == "" {
				t.Fatalf("POST %s refused %s %q, want task_limit with a teaching", path, ce.Code, ce.Teaching)
			}
			return contract.Task{}
		}
		return decode[contract.Task](t, raw)
	}
	finish := func(t *testing.T) {
		t.Helper()
		resp, raw := s.do(t, request{method: "POST", path: "/api/v1/tasks/claim", bearer: ag.Token, body: `{"waitMs":0}`})
		claim := decode[contract.TaskClaim](t, raw)
		if resp.StatusCode != http.StatusOK || claim.Task == nil {
			t.Fatalf("claim = %d %s, want a task", resp.StatusCode, raw)
		}
		resp, raw = s.do(t, request{method: "POST", path: "/api/v1/tasks/" + string(claim.Task.ID) + "/report", bearer: ag.Token,
			body: fmt.Sprintf(`{"attempt":%d,"state":"completed","final":"done","closedCases":[]}`, claim.Task.Attempt)})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("report = %d %s", resp.StatusCode, raw)
		}
	}
	const member = "/api/v1/projects/default/agents/calc/tasks"
	first := post(t, s.token, member, `{"text":"one"}`, http.StatusCreated)
	post(t, ag.Token, "/api/v1/tasks", `{"text":"two"}`, http.StatusCreated)
	// Open: two of two.
	post(t, s.token, member, `{"text":"three"}`, http.StatusTooManyRequests)
	post(t, ag.Token, "/api/v1/tasks", `{"text":"three"}`, http.StatusTooManyRequests)
	post(t, s.token, "/api/v1/projects/default/agents/calc/conversations/"+string(first.Conversation)+"/messages", `{"text":"and a message"}`, http.StatusTooManyRequests)
	// Another Agent has its own places.
	post(t, other.Token, "/api/v1/tasks", `{"text":"elsewhere"}`, http.StatusCreated)
	// A post sent again with its client key finds its task, bound or not.
	finish(t)
	again := post(t, s.token, member, `{"text":"three","clientKey":"k3"}`, http.StatusCreated)
	if got := post(t, s.token, member, `{"text":"three","clientKey":"k3"}`, http.StatusCreated); got.ID != again.ID {
		t.Fatalf("a post sent again = %s, want %s", got.ID, again.ID)
	}
	finish(t)
	post(t, s.token, "/api/v1/projects/default/agents/calc/conversations/"+string(first.Conversation)+"/messages", `{"text":"four"}`, http.StatusCreated)
	finish(t)
	finish(t)
	// In the hour: four of four, none open.
	post(t, s.token, member, `{"text":"five"}`, http.StatusTooManyRequests)
	clock.Add(time.Hour)
	post(t, s.token, member, `{"text":"five"}`, http.StatusCreated)
}

// TestServer_ScheduleBound creates schedules through the API up to the most a project
// keeps; the next is refused 429 schedule_limit, and a deleted one frees its place.
func TestServer_ScheduleBound(t *testing.T) {
	s := newTestServer(t, console.Config{})
	if _, err := s.a.CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	const base = "/api/v1/projects/default/schedules"
	body := `{"every":"1h","task":{"agent":"calc","text":"Hourly report."}}`
	var last contract.Schedule
	for i := range authority.MaxSchedules {
		resp, raw := s.do(t, request{method: "POST", path: base, bearer: s.token, body: body})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("schedule %d = %d %s, want 201", i+1, resp.StatusCode, raw)
		}
		last = decode[contract.Schedule](t, raw)
	}
	wantRefusals(t, s, []refusalCase{{"one schedule too many", request{method: "POST", path: base, bearer: s.token, body: body},
		http.StatusTooManyRequests, contract.CodeScheduleLimit}})
	if resp, raw := s.do(t, request{method: "DELETE", path: base + "/" + string(last.ID), bearer: s.token}); resp.StatusCode != http.StatusOK {
		t.Fatalf("delete = %d %s", resp.StatusCode, raw)
	}
	if resp, raw := s.do(t, request{method: "POST", path: base, bearer: s.token, body: body}); resp.StatusCode != http.StatusCreated {
		t.Fatalf("a schedule after a delete = %d %s, want 201", resp.StatusCode, strings.TrimSpace(string(raw)))
	}
}
