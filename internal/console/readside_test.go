package console_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// readFixture is a console whose Agent calc asserted a note, opened an exploration Case
// and closed it with a reason.
type readFixture struct {
	*testServer
	agent contract.Agent
	note  string // the node id of the note
	since time.Time
}

func newReadFixture(t *testing.T) *readFixture {
	t.Helper()
	s := newTestServer(t, console.Config{})
	f := &readFixture{testServer: s, since: time.Now().UTC().Add(-time.Second)}
	tok, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = tok.Agent
	ag, err := s.a.Directory().Authenticate(t.Context(), identity.Token(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, in any) operation.Answer {
		t.Helper()
		ans, err := s.ops.Call(t.Context(), ag, operation.Call{Tool: tool, Input: in, Delivered: func(int64) bool { return true }})
		if err != nil {
			t.Fatalf("Call(%s): %v", tool, err)
		}
		if n := len(ans.Result.Operations); n == 0 || ans.Result.Operations[0].State != contract.OpDone {
			t.Fatalf("Call(%s) = %+v, want done", tool, ans.Result)
		}
		return ans
	}
	note := &contract.Atom{Predicate: "note", Args: contract.Args{"text": contract.StringValue("hello")}}
	ans := call(contract.ToolApplyBatch, &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact, Atom: note}}})
	res := decode[struct{ NodeIDs []string }](t, ans.Result.Result)
	if len(res.NodeIDs) != 1 {
		t.Fatalf("ApplyBatch result %s names no node", ans.Result.Result)
	}
	f.note = res.NodeIDs[0]
	call(contract.ToolOpenCase, &contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": contract.StringValue("t")}})
	call(contract.ToolCloseCase, &contract.CloseCaseInput{CaseID: "case-1", Disposition: contract.DispositionAbandoned, Reason: "a test"})
	return f
}

func (f *readFixture) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, body := f.do(t, request{method: "GET", path: path, bearer: f.token})
	return resp.StatusCode, body
}

// listOf gets a page of T at path and wants status: with 200 it returns the items and
// true; with a refusal it checks that the refusal teaches and returns false.
func listOf[T any](t *testing.T, f *readFixture, path string, status int) ([]T, bool) {
	t.Helper()
	got, body := f.get(t, path)
	if got != status {
		t.Fatalf("GET %s = %d %s, want %d", path, got, body, status)
	}
	if status != http.StatusOK {
		if ce := decode[contract.Error](t, body); ce.Teaching == "" {
			t.Errorf("refusal %s has no teaching", body)
		}
		return nil, false
	}
	return decode[contract.Page[T]](t, body).Items, true
}

func TestServer_Why(t *testing.T) {
	f := newReadFixture(t)
	status, body := f.get(t, "/api/v1/projects/default/nodes/"+url.PathEscape(f.note)+"/why")
	if status != http.StatusOK {
		t.Fatalf("GET why = %d %s", status, body)
	}
	w := decode[contract.Why](t, body)
	want := contract.WhyNode{NodeID: f.note, Kind: contract.NodeFact, Tier: contract.TierAsserted,
		Atom:      &contract.Atom{Predicate: "note", Args: contract.Args{"text": contract.StringValue("hello")}},
		CreatedBy: contract.NewPrincipal(contract.PrincipalAgent, string(f.agent.ID))}
	if diff := cmp.Diff(want, w.Root, valueEqual); diff != "" {
		t.Errorf("why of the note (-want +got):\n%s", diff)
	}
	status, body = f.get(t, "/api/v1/projects/default/nodes/nope/why")
	if ce := decode[contract.Error](t, body); status != http.StatusNotFound || ce.Code != contract.CodeNodeNotFound || ce.Teaching == "" {
		t.Errorf("why of an unknown node = %d %s, want 404 node_not_found with a teaching", status, body)
	}
}

func TestServer_CaseDetail(t *testing.T) {
	f := newReadFixture(t)
	status, body := f.get(t, "/api/v1/projects/default/cases/case-1")
	if status != http.StatusOK {
		t.Fatalf("GET case = %d %s", status, body)
	}
	d := decode[contract.CaseDetail](t, body)
	if d.CaseID != "case-1" || d.Status != contract.CaseClosed || d.Root == "" {
		t.Errorf("case fields = %+v; want case-1, closed, with its root", d.Case)
	}
	if d.Receipt == nil || d.Receipt.CaseID != "case-1" || d.Receipt.Disposition != contract.DispositionAbandoned || d.Receipt.Reason != "a test" || !d.Receipt.Exploratory {
		t.Errorf("receipt = %+v; want the abandoned, exploratory receipt of case-1", d.Receipt)
	}
	if d.Acceptance != nil || d.Why != nil || d.Facts == nil {
		t.Errorf("acceptance %+v, why %+v, facts %v; an exploration Case has no acceptance and lists its facts as []", d.Acceptance, d.Why, d.Facts)
	}
}

func TestServer_Operations(t *testing.T) {
	f := newReadFixture(t)
	tests := []struct {
		name   string
		query  string
		status int
		want   []string // tool of each Operation, in order; nil for a refusal
	}{
		{"every Agent's", "", http.StatusOK, []string{"ApplyBatch", "OpenCase", "CloseCase"}},
		{"one Agent's, by name", "?agent=calc", http.StatusOK, []string{"ApplyBatch", "OpenCase", "CloseCase"}},
		{"one Agent's, by id", "?agent=" + string(f.agent.ID), http.StatusOK, []string{"ApplyBatch", "OpenCase", "CloseCase"}},
		{"only waiting: none", "?waiting=1", http.StatusOK, []string{}},
		{"an unknown Agent", "?agent=nobody", http.StatusNotFound, nil},
		{"a bad flag", "?waiting=maybe", http.StatusBadRequest, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, ok := listOf[contract.OperationInfo](t, f, "/api/v1/projects/default/operations"+tt.query, tt.status)
			if !ok {
				return
			}
			got := []string{}
			for _, op := range ops {
				got = append(got, op.Tool)
				if op.AgentName != "calc" || op.Work != string(f.agent.ID)+"."+itoa(op.Ordinal) || op.State != contract.OpDone {
					t.Errorf("operation %+v: want calc's, with its work id, done", op)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("operations%s (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestServer_EventFilters(t *testing.T) {
	f := newReadFixture(t)
	tests := []struct {
		name   string
		query  string
		status int
		want   []string // event types, in order; nil for a refusal
	}{
		{"by type", "?type=case.opened,case.closed", http.StatusOK, []string{event.CaseOpened, event.CaseClosed}},
		{"by type, repeated", "?type=case.closed&type=case.opened", http.StatusOK, []string{event.CaseOpened, event.CaseClosed}},
		{"by Case", "?case=case-1&type=case.opened&type=case.closed&type=action.applied", http.StatusOK, []string{event.CaseOpened, event.CaseClosed}},
		{"by Agent", "?agent=calc&type=operation.admitted", http.StatusOK, []string{event.OpAdmitted, event.OpAdmitted, event.OpAdmitted}},
		{"since the future", "?since=2999-01-01T00:00:00Z", http.StatusOK, []string{}},
		{"since before the fixture", "?type=case.closed&since=" + f.since.Format(time.RFC3339), http.StatusOK, []string{event.CaseClosed}},
		{"a bad time", "?since=yesterday", http.StatusBadRequest, nil},
		{"an unknown Agent", "?agent=nobody", http.StatusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, ok := listOf[contract.Event](t, f, "/api/v1/projects/default/events"+tt.query, tt.status)
			if !ok {
				return
			}
			got := []string{}
			for _, e := range es {
				got = append(got, e.Type)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events%s (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// valueEqual lets cmp compare Values, whose fields are unexported.
var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

func TestServer_Workers(t *testing.T) {
	f := newReadFixture(t)
	if _, err := f.a.Directory().CreateConnection(t.Context(), mustCaller(t, f.testServer), "default", contract.CreateConnectionRequest{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	status, body := f.get(t, "/api/v1/projects/default/workers")
	if status != http.StatusOK {
		t.Fatalf("GET workers = %d %s", status, body)
	}
	ws := decode[contract.Page[contract.WorkerStatus]](t, body).Items
	if len(ws) != 1 || ws[0].Connection.Name != "laptop" || ws[0].Lease != contract.LeaseNever || ws[0].Tools == nil || ws[0].Sources == nil {
		t.Errorf("workers = %+v; want laptop, lease never, with empty lists", ws)
	}
}
