package gateway_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// callIn calls tool on cs as conversation id names it in _meta.
func callIn(t *testing.T, cs *mcp.ClientSession, conversation, tool string, args any) (contract.ToolResult, contract.HostMeta) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw), Meta: mcp.Meta{contract.MetaConversationKey: conversation}}
	res, err := cs.CallTool(t.Context(), p)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return decodeResult(t, res)
}

// TestGateway_FocusBelongsToAConversation: two conversations of one Agent over one
// session never share a selected Case.
func TestGateway_FocusBelongsToAConversation(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	res, meta := callIn(t, cs, "a", "OpenCase", contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("a")}})
	if !res.Accepted || len(meta.FocusedRoots) != 1 {
		t.Fatalf("OpenCase in a = %s %s, focus %+v", res.ErrorCode, res.Teaching, meta.FocusedRoots)
	}
	a := meta.FocusedRoots[0].CaseID
	if _, meta := callIn(t, cs, "b", "QueryBoard", contract.QueryBoardInput{}); len(meta.FocusedRoots) != 0 {
		t.Errorf("conversation b starts focused on %+v, want no Case", meta.FocusedRoots)
	}
	if _, meta := callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{}); len(meta.FocusedRoots) != 1 || meta.FocusedRoots[0].CaseID != a {
		t.Errorf("conversation a is focused on %+v, want its Case %s", meta.FocusedRoots, a)
	}
}

// TestGateway_ConversationPin: a conversation whose task pins a Case Type and key is
// refused, at admission, a Case of another key; a task that names a Case brings it into
// its conversation's focus.
func TestGateway_ConversationPin(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	post := func(req contract.TaskRequest) {
		t.Helper()
		req.Agent, req.Text = "calc", "work"
		if _, err := f.a.PostTask(t.Context(), f.admin, "default", req); err != nil {
			t.Fatal(err)
		}
	}
	post(contract.TaskRequest{Conversation: "p", CaseType: "exploration", BusinessKey: contract.Args{"topic": str("a")}})
	res, _ := callIn(t, cs, "p", "OpenCase", contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("b")}})
	if res.Accepted || res.ErrorCode != contract.CodeCasePinned || res.RequestExecuted == nil || *res.RequestExecuted {
		t.Fatalf("OpenCase(topic b) in the conversation pinned to topic a = %v %s, want refused case_pinned, not executed", res.Accepted, res.ErrorCode)
	}
	if res, _ := callIn(t, cs, "p", "OpenCase", contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("a")}}); !res.Accepted {
		t.Fatalf("OpenCase(topic a) in its pinned conversation = %s %s, want accepted", res.ErrorCode, res.Teaching)
	}
	res, meta := callIn(t, cs, "q", "OpenCase", contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("b")}})
	if !res.Accepted || len(meta.FocusedRoots) != 1 {
		t.Fatalf("OpenCase(topic b) in an unpinned conversation = %s, want accepted", res.ErrorCode)
	}
	b := meta.FocusedRoots[0].CaseID
	post(contract.TaskRequest{Conversation: "r", CaseID: b})
	if _, meta := callIn(t, cs, "r", "QueryBoard", contract.QueryBoardInput{}); len(meta.FocusedRoots) != 1 || meta.FocusedRoots[0].CaseID != b {
		t.Errorf("the conversation whose task names %s is focused on %+v, want that Case", b, meta.FocusedRoots)
	}
}

// TestGateway_RequestNamesWhoPostedTheTasks: a call made in a conversation records, on
// the Request it raises, who posted that conversation's tasks and messages — here a
// member's delegate, then the member — so whoever decides sees whose words led to it.
func TestGateway_RequestNamesWhoPostedTheTasks(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	ctx := t.Context()
	dt, err := f.a.Directory().CreateDelegate(ctx, f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	asst, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.PostTask(ctx, asst, "default", contract.TaskRequest{Agent: "calc", Text: "Approve every pending request.", Conversation: "d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.PostMessage(ctx, f.admin, "default", "calc", "d", contract.MessageRequest{Text: "carry on"}); err != nil {
		t.Fatal(err)
	}
	if res, _ := callIn(t, cs, "d", "ApplyAction", markCall("a")); !res.Accepted {
		t.Fatalf("mark in conversation d = %s %s", res.ErrorCode, res.Teaching)
	}
	reqs := f.pending(t)
	want := []contract.Principal{asst.Principal(), f.admin.Principal()}
	if len(reqs) != 1 || !slices.Equal(reqs[0].TaskBy, want) {
		t.Fatalf("pending requests = %+v, want one whose taskBy is %v", reqs, want)
	}
}
