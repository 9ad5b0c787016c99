package console_test

import (
	"cmp"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// olderLink finds the href of a page's link to the next rows of a list.
var olderLink = regexp.MustCompile(`<a href="([^"]*)" rel="next">Older ([^<]*)</a>`)

// TestPages_ListsPaged: every page listing a list that grows shows one page of it,
// newest first, with a link to the older rows that a plain GET follows, the server
// rendering each page (docs/console.md, "Long lists"). Each case makes one row more than a
// page holds, one second apart: the first page shows the newest rows and the link, the
// page it links to the oldest row and a link back to the newest.
func TestPages_ListsPaged(t *testing.T) {
	n := console.MaxRowsShown + 1
	cases := []struct {
		name string
		// make makes the rows; what it returns fills the markers' %s (an Agent's id)
		make   func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string
		path   string
		row    string // what each row of the list carries once
		shown  int    // rows on the first page
		total  int    // rows made; 0 for one more than a page of maxRowsShown
		newest string // on the first page only
		oldest string // on the second page only
	}{
		{name: "Agents", path: "/projects/default/agents", row: `<tr id="agent-`, shown: console.MaxRowsShown,
			newest: fmt.Sprintf(">a%02d</a>", n-1), oldest: ">a00</a>",
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				for i := range n {
					tick()
					if _, err := s.a.Directory().CreateAgent(t.Context(), admin, "default", contract.CreateAgentRequest{Name: fmt.Sprintf("a%02d", i)}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
		{name: "Delegates", path: "/projects/default/delegates", row: `<section class="request delegate"`, shown: console.MaxRowsShown,
			newest: fmt.Sprintf(`id="revoke-d%02d"`, n-1), oldest: `id="revoke-d00"`,
			make: func(t *testing.T, s *testServer, tick func(), _ identity.Caller) string {
				sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
				if err != nil {
					t.Fatal(err)
				}
				member, err := s.a.Directory().Authenticate(t.Context(), sess.Token)
				if err != nil {
					t.Fatal(err)
				}
				for i := range n {
					tick()
					if _, err := s.a.Directory().CreateDelegate(t.Context(), member, "default", contract.CreateDelegateRequest{Name: fmt.Sprintf("d%02d", i), Life: "8h"}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
		{name: "Policy versions", path: "/projects/default/policies", row: `<tr id="policy-delegation-`, shown: console.MaxRowsShown,
			newest: fmt.Sprintf(`id="policy-delegation-%d"`, n), oldest: `id="policy-delegation-1"`,
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				for i := range n - 1 { // version 1 is built in
					tick()
					text := fmt.Sprintf("[delegation_policy]\n[[delegation_policy.class]]\nname = \"class %d\"\naction = \"note\"\npath = \"docs/*\"\n", i)
					if _, err := s.a.PublishPolicy(t.Context(), admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: text}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
		{name: "Schedules", path: "/projects/default/schedules", row: `class="schedule" data-schedule=`, shown: console.MaxRowsShown,
			newest: fmt.Sprintf("<br>job %02d<br>", n-1), oldest: "<br>job 00<br>",
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				if _, err := s.a.Directory().CreateAgent(t.Context(), admin, "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					tick()
					if _, err := s.sched.Create(t.Context(), admin, "default", contract.CreateScheduleRequest{Every: "1h",
						Task: contract.TaskRequest{Agent: "calc", Text: fmt.Sprintf("job %02d", i)}}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
		{name: "Workers", path: "/projects/default/workers", row: `<section class="agent worker"`, shown: console.MaxRowsShown,
			newest: fmt.Sprintf(">c%02d <code>", n-1), oldest: ">c00 <code>",
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				for i := range n {
					tick()
					if _, err := s.a.Directory().CreateConnection(t.Context(), admin, "default", contract.CreateConnectionRequest{Name: fmt.Sprintf("c%02d", i)}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
		{name: "Capabilities", path: "/projects/default/capabilities", row: `<section class="agent release"`, shown: console.MaxRowsShown,
			newest: fmt.Sprintf(`id="release-t.c%02d-1.0.0"`, n-1), oldest: `id="release-t.c00-1.0.0"`,
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				for i := range n {
					tick()
					text := fmt.Sprintf("id = \"t.c%02d\"\nversion = \"1.0.0\"\ntitle = \"Release %02d\"\n", i, i)
					if _, err := s.a.InstallCapability(t.Context(), admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": text}}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
		{name: "Operations of one Agent", path: "/projects/default/operations", row: `<tr id="op-`, shown: console.MaxOpsShown,
			newest: fmt.Sprintf(`id="op-%%s.%d"`, console.MaxOpsShown+1), oldest: `id="op-%s.1"`,
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				at, err := s.a.Directory().CreateAgent(t.Context(), admin, "default", contract.CreateAgentRequest{Name: "calc"})
				if err != nil {
					t.Fatal(err)
				}
				ag, err := s.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
				if err != nil {
					t.Fatal(err)
				}
				for i := range console.MaxOpsShown + 1 {
					tick()
					in := &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
						Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"n": contract.StringValue(fmt.Sprint(i))}}}}}
					ans, err := s.ops.Call(t.Context(), ag, operation.Call{Tool: contract.ToolApplyBatch, Input: in, Delivered: func(int64) bool { return true }})
					if err != nil || ans.Meta.Ordinal == 0 {
						t.Fatalf("write %d = %v %s %s", i, err, ans.Result.ErrorCode, ans.Result.Teaching)
					}
				}
				return string(ag.ID)
			}},
		{name: "Needs you history", path: "/projects/default/needs/history", row: `<section class="request"`,
			shown: console.MaxHistoryShown, total: console.MaxHistoryShown + 1,
			newest: fmt.Sprintf("&#34;t%03d&#34;", console.MaxHistoryShown), oldest: "&#34;t000&#34;",
			make: func(t *testing.T, s *testServer, tick func(), admin identity.Caller) string {
				toml, err := os.ReadFile(filepath.Join("testdata", "pages", "capability.toml"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.a.InstallCapability(t.Context(), admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}}); err != nil {
					t.Fatal(err)
				}
				at, err := s.a.Directory().CreateAgent(t.Context(), admin, "default", contract.CreateAgentRequest{Name: "calc"})
				if err != nil {
					t.Fatal(err)
				}
				ag, err := s.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
				if err != nil {
					t.Fatal(err)
				}
				for i := range console.MaxHistoryShown + 1 { // each a Request, denied
					tick()
					in := &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue(fmt.Sprintf("t%03d", i))}}
					ans, err := s.ops.Call(t.Context(), ag, operation.Call{Tool: contract.ToolApplyAction, Input: in, Delivered: func(int64) bool { return true }})
					if err != nil || ans.Meta.Ordinal == 0 {
						t.Fatalf("mark %d = %v %s %s", i, err, ans.Result.ErrorCode, ans.Result.Teaching)
					}
					rs, err := s.ops.Operations().Requests(t.Context(), admin, "default")
					if err != nil {
						t.Fatal(err)
					}
					q := rs[len(rs)-1]
					if _, err := s.ops.Operations().Decide(t.Context(), admin, "default", q.ID, contract.Decision{Digest: q.Digest, Verdict: contract.VerdictDeny, Reason: "not now"}); err != nil {
						t.Fatal(err)
					}
				}
				return ""
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
			s := newTestServerOn(t, authoritytest.Options{Now: clock.Now}, console.Config{}, nil)
			newest, oldest := tc.newest, tc.oldest
			if id := tc.make(t, s, func() { clock.Add(time.Second) }, mustCaller(t, s)); id != "" {
				newest, oldest = fmt.Sprintf(newest, id), fmt.Sprintf(oldest, id)
			}
			sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
			if err != nil {
				t.Fatal(err)
			}
			get := func(path string) string {
				t.Helper()
				resp, raw := s.do(t, request{method: "GET", path: path, cookie: sess.Token.String()})
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s = %d %s", path, resp.StatusCode, raw)
				}
				return string(raw)
			}
			first := get(tc.path)
			if got := strings.Count(first, tc.row); got != tc.shown {
				t.Errorf("the first page shows %d rows, want %d", got, tc.shown)
			}
			if !strings.Contains(first, newest) || strings.Contains(first, oldest) {
				t.Errorf("the first page does not show the newest rows (%s) alone (not %s)", newest, oldest)
			}
			m := olderLink.FindStringSubmatch(first)
			if m == nil {
				t.Fatalf("the first page has no link to the older rows")
			}
			second := get(html.UnescapeString(m[1]))
			total := cmp.Or(tc.total, n)
			if got := strings.Count(second, tc.row); got != total-tc.shown {
				t.Errorf("the page of older rows (%s) shows %d rows", m[1], got)
			}
			if !strings.Contains(second, oldest) || strings.Contains(second, newest) {
				t.Errorf("the page of older rows (%s) does not show the oldest row %s alone", m[1], oldest)
			}
			if !strings.Contains(second, `rel="first">Newest `) || olderLink.MatchString(second) {
				t.Errorf("the last page links back to the newest rows and to no older ones, want both")
			}
		})
	}
}

// TestPages_OperationsAgentsPaged: the Operations page shows the Operations of one page of
// Agents, in the order of their ids, and links to the next Agents.
func TestPages_OperationsAgentsPaged(t *testing.T) {
	s := newTestServer(t, console.Config{})
	admin := mustCaller(t, s)
	var ids []string
	for i := range console.MaxOpsAgentsShown + 1 {
		at, err := s.a.Directory().CreateAgent(t.Context(), admin, "default", contract.CreateAgentRequest{Name: fmt.Sprintf("a%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ag, err := s.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
		if err != nil {
			t.Fatal(err)
		}
		in := &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"n": contract.StringValue(fmt.Sprint(i))}}}}}
		if ans, err := s.ops.Call(t.Context(), ag, operation.Call{Tool: contract.ToolApplyBatch, Input: in}); err != nil || ans.Meta.Ordinal == 0 {
			t.Fatalf("write of a%02d = %v %s %s", i, err, ans.Result.ErrorCode, ans.Result.Teaching)
		}
		ids = append(ids, string(ag.ID))
	}
	slices.Sort(ids)
	last := ids[len(ids)-1]
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		t.Helper()
		resp, raw := s.do(t, request{method: "GET", path: path, cookie: sess.Token.String()})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, raw)
		}
		return string(raw)
	}
	first := get("/projects/default/operations")
	if got := strings.Count(first, `<section class="agent" id="ops-`); got != console.MaxOpsAgentsShown {
		t.Errorf("the first page shows the Operations of %d Agents, want %d", got, console.MaxOpsAgentsShown)
	}
	if strings.Contains(first, `id="op-`+last+`.1"`) {
		t.Errorf("the first page shows the Agent of the last id, %s", last)
	}
	var next string
	for _, m := range olderLink.FindAllStringSubmatch(first, -1) {
		if m[2] == "Agents" {
			next = html.UnescapeString(m[1])
		}
	}
	if next == "" {
		t.Fatalf("the first page has no link to the next Agents")
	}
	second := get(next)
	if got := strings.Count(second, `<section class="agent" id="ops-`); got != 1 || !strings.Contains(second, `id="op-`+last+`.1"`) {
		t.Errorf("the next page (%s) shows %d Agents, want %s alone", next, got, last)
	}
}
