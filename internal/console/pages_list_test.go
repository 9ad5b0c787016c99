package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_ListPages walks every list route of /api/v1 that can grow one item a page
// (?limit=1), following each page's cursor, and checks that the pages together are the
// whole list, in its order, each item once; and that apiclient.All, which the CLI and the
// runtimes list with, reads the same. Tasks are listed as posted, not by id, so a cursor
// compared as a sorted key would lose them.
func TestServer_ListPages(t *testing.T) {
	s := newTestServer(t, console.Config{})
	member := mustCaller(t, s)
	for _, name := range []string{"calc", "check", "audit"} {
		if _, err := s.a.Directory().CreateAgent(t.Context(), member, "default", contract.CreateAgentRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.a.SetAgentProfile(t.Context(), member, "default", name, contract.ProfileSpec{Provider: "scripted", Script: "run.txt"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.a.Directory().CreateConnection(t.Context(), member, "default", contract.CreateConnectionRequest{Name: "laptop-" + name}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		resp, raw := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token, body: fmt.Sprintf(`{"text":"task %d"}`, i)})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("post = %d %s", resp.StatusCode, raw)
		}
	}
	coder, err := s.a.Directory().CreateAgent(t.Context(), member, "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // each an Operation and a Request, withdrawn at once
		body := fmt.Sprintf(`{"cli":"claude-code","callId":"toolu_%d","tool":"Bash","input":{"command":"ls %d"},"command":"ls %d"}`, i, i, i)
		if resp, raw := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: coder.Token, body: body}); resp.StatusCode != http.StatusOK {
			t.Fatalf("hook call = %d %s", resp.StatusCode, raw)
		}
	}
	api := &apiclient.Client{URL: s.URL, Token: s.token, HTTP: s.Client()}
	for _, path := range []string{
		"/api/v1/projects/default/agents/" + string(coder.Agent.ID) + "/hook-calls",
		"/api/v1/projects/default/operations",
		"/api/v1/projects/default/requests",
		"/api/v1/projects/default/tasks",
		"/api/v1/projects/default/agents",
		"/api/v1/projects/default/profiles",
		"/api/v1/projects/default/connections",
		"/api/v1/projects/default/workers",
		"/api/v1/projects/default/policies",
	} {
		t.Run(path, func(t *testing.T) {
			all := getPage(t, s, path)
			if len(all.Items) < 2 {
				t.Fatalf("GET %s = %d items, want two at least to page", path, len(all.Items))
			}
			var walked []json.RawMessage
			after := ""
			for range len(all.Items) + 1 {
				q := url.Values{"limit": {"1"}}
				if after != "" {
					q.Set("after", after)
				}
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				page := getPage(t, s, path+sep+q.Encode())
				if len(page.Items) > 1 {
					t.Fatalf("GET %s?limit=1 = %d items, want one", path, len(page.Items))
				}
				walked = append(walked, page.Items...)
				if page.Next == "" {
					break
				}
				after = page.Next
			}
			if diff := cmp.Diff(compactAll(t, all.Items), compactAll(t, walked)); diff != "" {
				t.Errorf("pages of one (-whole +walked):\n%s", diff)
			}
			read, err := apiclient.All[json.RawMessage](t.Context(), api, path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(compactAll(t, all.Items), compactAll(t, read)); diff != "" {
				t.Errorf("apiclient.All (-whole +read):\n%s", diff)
			}
		})
	}
}

// TestServer_PageBytes: a page ends near a MiB of items, whatever its ?limit=, so a list
// of large tasks is read in several answers; apiclient.All follows them to the last.
func TestServer_PageBytes(t *testing.T) {
	s := newTestServerOn(t, authoritytest.Options{MaxOpenTasks: 40}, console.Config{}, nil)
	if _, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", contract.MaxTaskText-16)
	const n = 40
	for i := range n {
		resp, raw := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token,
			body: fmt.Sprintf(`{"text":"%d %s"}`, i, text)})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("post %d = %d %s", i, resp.StatusCode, raw)
		}
	}
	resp, raw := s.do(t, request{method: "GET", path: "/api/v1/projects/default/tasks?limit=500", bearer: s.token})
	if resp.StatusCode != http.StatusOK || len(raw) > 1<<20+contract.MaxTaskText+4096 {
		t.Fatalf("GET tasks = %d, %d bytes; want a page of about a MiB", resp.StatusCode, len(raw))
	}
	if p := decode[contract.Page[contract.Task]](t, raw); p.Next == "" || len(p.Items) >= n {
		t.Fatalf("the first page holds %d of %d tasks with next %q; want a part and a cursor", len(p.Items), n, p.Next)
	}
	api := &apiclient.Client{URL: s.URL, Token: s.token, HTTP: s.Client()}
	ts, err := api.Tasks(t.Context(), "default", "")
	if err != nil || len(ts) != n {
		t.Fatalf("apiclient Tasks = %d tasks, %v; want %d", len(ts), err, n)
	}
	for i, task := range ts {
		if !strings.HasPrefix(task.Text, fmt.Sprintf("%d ", i)) {
			t.Fatalf("task %d reads %.10q…, want the tasks as posted", i, task.Text)
		}
	}
}

// getPage returns the page GET path answers.
func getPage(t *testing.T, s *testServer, path string) contract.Page[json.RawMessage] {
	t.Helper()
	resp, raw := s.do(t, request{method: "GET", path: path, bearer: s.token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, raw)
	}
	return decode[contract.Page[json.RawMessage]](t, raw)
}

// compactAll returns each item as compact JSON text.
func compactAll(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		var b strings.Builder
		if err := json.NewEncoder(&b).Encode(it); err != nil {
			t.Fatal(err)
		}
		out[i] = b.String()
	}
	return out
}
