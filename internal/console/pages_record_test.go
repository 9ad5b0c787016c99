package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_Facts: the API's fact search finds facts by predicate and arguments, each
// with its tier and who asserted it, and refuses an argument it cannot read.
func TestServer_Facts(t *testing.T) {
	f := newReadFixture(t)
	tests := []struct {
		name, query string
		status      int
		want        int // facts, with status 200
	}{
		{name: "by predicate", query: "predicate=note", status: 200, want: 1},
		{name: "by argument", query: "predicate=note&arg=text%3Dhello", status: 200, want: 1},
		{name: "by a JSON argument", query: "predicate=note&arg=text%3D%22hello%22", status: 200, want: 1},
		{name: "by a variable", query: "predicate=note&arg=text%3D%3Fx", status: 200, want: 1},
		{name: "no match", query: "predicate=note&arg=text%3Dbye", status: 200, want: 0},
		{name: "every fact", query: "", status: 200, want: 1},
		{name: "an argument without a value", query: "predicate=note&arg=text", status: 400},
		{name: "an argument without a predicate", query: "arg=text%3Dhello", status: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.get(t, "/api/v1/projects/default/facts?"+tt.query)
			if status != tt.status {
				t.Fatalf("GET facts?%s = %d %s, want %d", tt.query, status, body, tt.status)
			}
			if status != http.StatusOK {
				if ce := decode[contract.Error](t, body); ce.Code != contract.CodeInvalidArgument || ce.Teaching == "" {
					t.Errorf("refusal %s, want invalid_argument with a teaching", body)
				}
				return
			}
			got := decode[contract.Bounded[contract.Node]](t, body)
			if len(got.Items) != tt.want {
				t.Fatalf("GET facts?%s = %d facts, want %d: %s", tt.query, len(got.Items), tt.want, body)
			}
			if tt.want > 0 {
				n := got.Items[0]
				if n.NodeID != f.note || n.Tier != contract.TierAsserted || n.CreatedBy != contract.NewPrincipal(contract.PrincipalAgent, string(f.agent.ID)) {
					t.Errorf("fact = %+v, want the note, asserted by calc", n)
				}
			}
		})
	}
}

// TestPages_RecordWithoutBrowser: the Cases, Board and Events pages as a client without
// JavaScript reads them: the filters are query parameters, each page says what it found,
// and every answer carries the CSP header.
func TestPages_RecordWithoutBrowser(t *testing.T) {
	f := newReadFixture(t)
	sess, err := f.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	cookie := sess.Token.String()
	note := "/projects/default/board/" + url.PathEscape(f.note)
	tests := []struct {
		name, path string
		status     int
		body       []string
	}{
		{"cases", "/projects/default/cases", 200, []string{`href="/projects/default/cases/case-1"`, "exploration", "abandoned", "1 of 1 Case."}},
		{"cases, filtered out", "/projects/default/cases?status=running", 200, []string{"No Case matches these filters.", "0 of 1 Case."}},
		{"cases, certified", "/projects/default/cases?certified=no", 200, []string{"case-1"}},
		{"a case", "/projects/default/cases/case-1", 200, []string{"Case <code>case-1</code>", "Nothing certifies the root yet.", "Receipt", "abandoned: a test", event.CaseOpened, event.CaseClosed}},
		{"a case that is not there", "/projects/default/cases/case-9", 404, []string{"case_not_found"}},
		{"board", "/projects/default/board", 200, []string{"Name a predicate to search"}},
		{"board, by predicate", "/projects/default/board?predicate=note", 200, []string{`note(text: &#34;hello&#34;)`, "asserted", "agent:" + string(f.agent.ID), note}},
		{"board, searched", "/projects/default/board?predicate=note&args=text%3Dhello", 200, []string{"1 fact.", note}},
		{"board, nothing found", "/projects/default/board?predicate=note&args=text%3Dbye", 200, []string{"No fact matches."}},
		{"board, a bad argument", "/projects/default/board?predicate=note&args=text", 400, []string{"invalid_argument"}},
		{"a fact", note, 200, []string{"Why <code class=\"atom\">note(text: &#34;hello&#34;)</code>", "asserted by <a class=\"who-name\" href=\"/projects/default/agents/agt_", "<svg", "1 node."}},
		{"a fact that is not there", "/projects/default/board/nope", 404, []string{"node_not_found"}},
		{"events", "/projects/default/events", 200, []string{"The latest events", event.CaseClosed, event.ProjectCreated, `data-live="request.created,request.changed,project.created`}},
		{"events, filtered", "/projects/default/events?type=case.opened", 200, []string{event.CaseOpened, "type case.opened"}},
		{"events, by case", "/projects/default/events?case=case-1", 200, []string{event.CaseClosed, "naming Case case-1"}},
		{"events, by agent name", "/projects/default/events?agent=calc&type=operation.admitted", 200, []string{event.OpAdmitted}},
		{"events, by actor", "/projects/default/events?actor=agent:" + string(f.agent.ID), 200, []string{event.CaseOpened, "by agent:" + string(f.agent.ID)}},
		{"events, by another actor", "/projects/default/events?actor=member:nobody&type=case.opened", 200, []string{"No event matches."}},
		{"events, paged", "/projects/default/events?before=3", 200, []string{`id="ev-2"`, `id="ev-1"`, "Newer events"}},
		{"events, after", "/projects/default/events?after=1", 200, []string{`id="ev-2"`, "Older events"}},
		{"events, chain", "/projects/default/events?check=1", 200, []string{"The chain holds:"}},
		{"events, a bad cursor", "/projects/default/events?before=x", 400, []string{"invalid_argument"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, request{method: "GET", path: tt.path, cookie: cookie})
			if resp.StatusCode != tt.status {
				t.Errorf("GET %s = %d, want %d\n%s", tt.path, resp.StatusCode, tt.status, body)
			}
			for _, want := range tt.body {
				if !strings.Contains(string(body), want) {
					t.Errorf("GET %s does not contain %q:\n%s", tt.path, want, body)
				}
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("GET %s has Content-Security-Policy %q", tt.path, csp)
			}
		})
	}
}
