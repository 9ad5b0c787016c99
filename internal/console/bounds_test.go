package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/conversation"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/authority/schedule"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_TaskBounds posts through the API past each bound on what one Agent may be
// given: its open tasks and messages, and those posted in an hour, whoever posts them (a
// member or the Agent's own runtime here; a delegate posts through the member's route).
// A post over a bound is refused 429 task_limit with a teaching, and the place frees as
// tasks finish and the hour passes.
func TestServer_TaskBounds(t *testing.T) {
	clock := authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	s := newTestServerOn(t, authoritytest.Options{Now: clock.Now, MaxOpenTasks: 2, MaxTasksPerHour: 4}, console.Config{}, nil)
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "other"})
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
	if _, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	const base = "/api/v1/projects/default/schedules"
	body := `{"every":"1h","task":{"agent":"calc","text":"Hourly report."}}`
	var last contract.Schedule
	for i := range schedule.MaxSchedules {
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

// TestServer_HookBounds reports hook calls through the API past each bound on one Agent's
// hook: the calls it reports in a minute, and its calls waiting for a decision at once.
// A call over one is refused 429 hook_limit with a teaching.
func TestServer_HookBounds(t *testing.T) {
	call := func(i, waitMs int) string {
		return fmt.Sprintf(`{"cli":"claude-code","callId":"toolu_%d","tool":"Bash","input":{"command":"ls %d"},"command":"ls %d","waitMs":%d}`, i, i, i, waitMs)
	}
	t.Run("per minute", func(t *testing.T) {
		clock := authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
		s := newTestServerOn(t, authoritytest.Options{Now: clock.Now}, console.Config{}, nil)
		ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range operation.DefaultMaxHookPerMinute {
			if resp, raw := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: call(i, 0)}); resp.StatusCode != http.StatusOK {
				t.Fatalf("call %d = %d %s, want 200", i, resp.StatusCode, raw)
			}
		}
		wantRefusals(t, s, []refusalCase{{"one call too many in a minute",
			request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: call(999, 0)}, http.StatusTooManyRequests, contract.CodeHookLimit}})
		clock.Add(time.Minute)
		if resp, raw := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: call(1000, 0)}); resp.StatusCode != http.StatusOK {
			t.Fatalf("a call a minute later = %d %s, want 200", resp.StatusCode, raw)
		}
	})
	t.Run("waiting", func(t *testing.T) {
		s := newTestServer(t, console.Config{})
		ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
		if err != nil {
			t.Fatal(err)
		}
		// Each held call waits until the test ends it by cancelling its request.
		held, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		for i := range operation.DefaultMaxHookWaiting {
			wg.Go(func() {
				req, err := http.NewRequestWithContext(held, "POST", s.URL+"/api/v1/hook/calls", strings.NewReader(call(i, 600_000)))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+ag.Token)
				resp, err := s.Client().Do(req)
				if err != nil {
					return // the test ended the call
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("held call %d answered %d, want it held until the test ends it", i, resp.StatusCode)
					cancel() // the loop below would wait for a call that never waits
				}
			})
		}
		path := "/api/v1/projects/default/agents/" + string(ag.Agent.ID) + "/hook-calls"
		for {
			head := logHead(t, s)
			_, raw := s.do(t, request{method: "GET", path: path, bearer: s.token})
			waiting := 0
			for _, c := range decode[contract.Page[contract.HookCallEntry]](t, raw).Items {
				if c.Decision == "" || c.Decision == "pending" {
					waiting++
				}
			}
			if waiting == operation.DefaultMaxHookWaiting {
				break
			}
			if _, err := s.st.Wait(held, "default", head); err != nil {
				t.Fatal(err)
			}
		}
		wantRefusals(t, s, []refusalCase{{"one call too many waiting",
			request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: call(999, 0)}, http.StatusTooManyRequests, contract.CodeHookLimit}})
	})
}

// TestPages_AgentListsBounded: an Agent's page shows the newest of its hook calls, however
// many it made, and says how many older ones the API pages through.
func TestPages_AgentListsBounded(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 53
	for i := range calls {
		body := fmt.Sprintf(`{"cli":"claude-code","callId":"toolu_%d","tool":"Bash","input":{"command":"ls %d"},"command":"ls %d"}`, i, i, i)
		if resp, raw := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: body}); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d = %d %s", i, resp.StatusCode, raw)
		}
	}
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, raw := s.do(t, request{method: "GET", path: "/projects/default/agents/" + string(ag.Agent.ID), cookie: sess.Token.String()})
	page := string(raw)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the Agent's page = %d", resp.StatusCode)
	}
	if got := strings.Count(page, `class="hook-call"`); got != 50 {
		t.Errorf("the page shows %d hook calls, want the newest 50", got)
	}
	if !strings.Contains(page, "ls 52") || strings.Contains(page, "<code>ls 2</code>") {
		t.Errorf("the page does not show the newest calls first")
	}
	// The older calls are a link away, on the server: the page says where the 50 stand
	// and the link shows the 3 left, the oldest last.
	older := regexp.MustCompile(`href="([^"]*calls_after=[^"]*)" rel="next">Older calls`).FindStringSubmatch(page)
	if older == nil || !strings.Contains(page, "calls 1 to 50 of 53") {
		t.Fatalf("the page does not say which calls it shows or link to the older ones")
	}
	resp, raw = s.do(t, request{method: "GET", path: html.UnescapeString(older[1]), cookie: sess.Token.String()})
	page = string(raw)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the older calls' page = %d", resp.StatusCode)
	}
	if got := strings.Count(page, `class="hook-call"`); got != 3 || !strings.Contains(page, "<code>ls 0</code>") || strings.Contains(page, "<code>ls 3</code>") {
		t.Errorf("the older calls' page shows %d calls, want the 3 oldest", got)
	}
}

// TestServer_ConversationBounds saves through the API past each bound on one Agent's
// conversations: the conversations it starts, and the bytes it saves, in an hour. A save
// over one is refused 429 conversation_limit with a teaching; an hour later it is kept.
func TestServer_ConversationBounds(t *testing.T) {
	save := func(t *testing.T, s *testServer, token, id string, prev int64, text string, want int) contract.ConversationHead {
		t.Helper()
		body := fmt.Sprintf(`{"prev":%d,"from":0,"messages":[{"role":"user","text":%q}]}`, prev, text)
		resp, raw := s.do(t, request{method: "POST", path: "/api/v1/conversations/" + id + "/saves", bearer: token, body: body})
		if resp.StatusCode != want {
			t.Fatalf("save %s = %d %.200s, want %d", id, resp.StatusCode, raw, want)
		}
		if want != http.StatusOK {
			if ce := decode[contract.Error](t, raw); ce.Code != contract.CodeConversationLimit || ce.Teaching == "" {
				t.Fatalf("save %s refused %s %q, want conversation_limit with a teaching", id, ce.Code, ce.Teaching)
			}
			return contract.ConversationHead{}
		}
		return decode[contract.ConversationHead](t, raw)
	}
	newServer := func(t *testing.T) (*testServer, *authoritytest.Clock, string) {
		clock := authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
		s := newTestServerOn(t, authoritytest.Options{Now: clock.Now}, console.Config{}, nil)
		ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
		if err != nil {
			t.Fatal(err)
		}
		return s, clock, ag.Token
	}
	t.Run("started in an hour", func(t *testing.T) {
		s, clock, token := newServer(t)
		for i := range conversation.MaxStartedPerHour {
			save(t, s, token, fmt.Sprintf("c-%d", i), 0, "go", http.StatusOK)
		}
		save(t, s, token, "c-more", 0, "go", http.StatusTooManyRequests)
		save(t, s, token, "c-0", 0, "again", http.StatusOK) // a conversation it started goes on
		clock.Add(time.Hour)
		save(t, s, token, "c-more", 0, "go", http.StatusOK)
	})
	t.Run("bytes in an hour", func(t *testing.T) {
		s, clock, token := newServer(t)
		big := strings.Repeat("x", contract.MaxConversationEntry-1024)
		var head contract.ConversationHead
		for saved := 0; saved+len(big) <= conversation.MaxSavedPerHour; saved += len(big) + 64 {
			head = save(t, s, token, "c-1", head.Seq, big, http.StatusOK)
		}
		save(t, s, token, "c-1", head.Seq, big, http.StatusTooManyRequests)
		clock.Add(time.Hour)
		save(t, s, token, "c-1", head.Seq, big, http.StatusOK)
	})
}

// TestPages_NeedsHistoryBounded: the history of Needs you shows the newest requests that
// no longer wait, however many hook calls left one, and says how many it leaves out.
func TestPages_NeedsHistoryBounded(t *testing.T) {
	clock := authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	s := newTestServerOn(t, authoritytest.Options{Now: clock.Now}, console.Config{}, nil)
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 104
	for i := range calls { // each a Request, withdrawn at once
		if i%100 == 99 {
			clock.Add(time.Minute) // within the hook's bound a minute
		}
		body := fmt.Sprintf(`{"cli":"claude-code","callId":"toolu_%d","tool":"Bash","input":{"command":"ls %d"},"command":"ls %d"}`, i, i, i)
		if resp, raw := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: body}); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d = %d %s", i, resp.StatusCode, raw)
		}
	}
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, raw := s.do(t, request{method: "GET", path: "/projects/default/needs/history", cookie: sess.Token.String()})
	page := string(raw)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the history = %d", resp.StatusCode)
	}
	if got := strings.Count(page, `<section class="request"`); got != 100 {
		t.Errorf("the history shows %d requests, want the newest 100", got)
	}
	if !strings.Contains(page, "&#34;ls 103&#34;") || strings.Contains(page, "&#34;ls 3&#34;") {
		t.Errorf("the history does not show the newest requests")
	}
	if !strings.Contains(page, `id="requests-more">4 older requests are not shown`) {
		t.Errorf("the history does not say how many requests it leaves out")
	}
}
