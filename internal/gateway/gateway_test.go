package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

func TestGateway_ListTools(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]any{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		schemas[tl.Name] = tl.InputSchema
	}
	want := []string{"ApplyAction", "ApplyBatch", "CloseCase", "OpenCase", "QueryBoard", "ReadArtifact"}
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, spec := range contract.Tools() {
		want, _ := json.Marshal(spec.InputSchema())
		got, _ := json.Marshal(schemas[spec.Name])
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("listed schema of %s is not the contract's (-want +got):\n%s", spec.Name, diff)
		}
	}
}

func TestGateway_Initialize(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	ir := cs.InitializeResult()
	if ir.ProtocolVersion != contract.ProtocolVersion {
		t.Errorf("protocolVersion = %q, want %q", ir.ProtocolVersion, contract.ProtocolVersion)
	}
	raw, _ := json.Marshal(ir.Meta[contract.MetaKey])
	var meta contract.HostMeta
	if err := json.Unmarshal(raw, &meta); err != nil || meta.AgentID != f.agent.ID {
		t.Errorf("initialize _meta = %s (%v), want agentId %s", raw, err, f.agent.ID)
	}
}

func batchOf(preds ...string) contract.Batch {
	var b contract.Batch
	for _, p := range preds {
		b.Operations = append(b.Operations, contract.Operation{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: p, Args: contract.Args{"x": str("1")}}})
	}
	return b
}

func TestGateway_ApplyBatchAndQuery(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	res, meta := call(t, cs, "ApplyBatch", batchOf("seen", "heard"))
	if !res.Accepted || res.ErrorCode != "" {
		t.Fatalf("ApplyBatch = %+v, want accepted", res)
	}
	if meta.AgentID != f.agent.ID || meta.Ordinal != 1 {
		t.Errorf("_meta = %+v, want agentId %s ordinal 1", meta, f.agent.ID)
	}
	want := []contract.OperationEntry{{Tool: "ApplyBatch", Label: "ApplyBatch 2 ops", State: contract.OpDone}}
	if diff := cmp.Diff(want, res.Operations, stripCompare); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	q, _ := call(t, cs, "QueryBoard", contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": str("?x")}}})
	var matches struct {
		Matches contract.Bounded[contract.Node] `json:"matches"`
	}
	if err := json.Unmarshal(q.Result, &matches); err != nil || len(matches.Matches.Items) != 1 {
		t.Errorf("QueryBoard result = %s (%v), want one match", q.Result, err)
	}
	if len(q.Operations) != 1 || q.Operations[0].Result != nil || q.Operations[0].Summary == "" {
		t.Errorf("after the next call the strip entry = %+v, want a summary (acknowledged)", q.Operations)
	}
}

// stripCompare compares strip entries without their times and results.
var stripCompare = cmp.Transformer("entry", func(e contract.OperationEntry) contract.OperationEntry {
	e.At, e.Since, e.Result, e.Summary = time.Time{}, time.Time{}, nil, ""
	return e
})

func TestGateway_Refusals(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	tests := []struct {
		name string
		tool string
		args string
		code contract.Code
		word string
	}{
		{"host metadata", "ApplyAction", `{"action":"note","agentId":"x"}`, contract.CodeHostMetadata, "agentId"},
		{"host metadata in a batch", "ApplyBatch", `{"operations":[],"requestId":"r"}`, contract.CodeHostMetadata, "requestId"},
		{"unknown field", "OpenCase", `{"caseType":"x","colour":1}`, contract.CodeUnknownField, "colour"},
		{"missing field", "CloseCase", `{"caseId":"c"}`, contract.CodeInvalidArgument, "disposition"},
		{"artifact not issued", "ReadArtifact", `{"ref":"/etc/passwd"}`, contract.CodeArtifactNotFound, "art_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := decodeResult(t, res)
			if tr.ErrorCode != tt.code || !strings.Contains(tr.Teaching, tt.word) {
				t.Errorf("%s %s = %s: %q, want %s naming %q", tt.tool, tt.args, tr.ErrorCode, tr.Teaching, tt.code, tt.word)
			}
			if tr.RequestExecuted == nil || *tr.RequestExecuted {
				t.Errorf("requestExecuted = %v, want false", tr.RequestExecuted)
			}
			if !res.IsError {
				t.Error("isError = false on a refusal")
			}
		})
	}
}

// rawPost posts body to /mcp with the given headers and returns the status and body.
func rawPost(t *testing.T, url string, headers map[string]string, body string) (int, rpcErrorBody) {
	t.Helper()
	resp, data := rawDo(t, url, headers, body)
	var e rpcErrorBody
	json.Unmarshal(data, &e)
	return resp.StatusCode, e
}

// rawDo posts body to /mcp with the given headers, as a Streamable HTTP client does, and
// returns the response with its body read.
func rawDo(t *testing.T, url string, headers map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

type rpcErrorBody struct {
	Error struct {
		Code int                   `json:"code"`
		Data contract.RPCErrorData `json:"data"`
	} `json:"error"`
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestGateway_TransportRefusals(t *testing.T) {
	f := newFixture(t, time.Second)
	auth := "Bearer " + f.token
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		reason  string
	}{
		{"no token", nil, strings.ReplaceAll(initBody, "%q", `"2025-11-25"`), http.StatusUnauthorized, contract.ReasonUnauthenticated},
		{"bad token", map[string]string{"Authorization": "Bearer dkt_agt_nope"}, strings.ReplaceAll(initBody, "%q", `"2025-11-25"`), http.StatusUnauthorized, contract.ReasonUnauthenticated},
		{"member token", map[string]string{"Authorization": "Bearer " + memberToken(t, f)}, strings.ReplaceAll(initBody, "%q", `"2025-11-25"`), http.StatusUnauthorized, contract.ReasonUnauthenticated},
		{"newer protocol header", map[string]string{"Authorization": auth, "Mcp-Protocol-Version": "2026-07-28"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, http.StatusBadRequest, contract.ReasonUnsupportedProtocol},
		{"unknown session", map[string]string{"Authorization": auth, "Mcp-Session-Id": "NOSUCHSESSION"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, http.StatusNotFound, contract.ReasonUnknownSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := rawPost(t, f.url, tt.headers, tt.body)
			if status != tt.status || body.Error.Code != contract.RPCCodeServer || body.Error.Data.Reason != tt.reason {
				t.Errorf("status %d, error %+v; want %d, -32000, reason %q", status, body.Error, tt.status, tt.reason)
			}
		})
	}
}

func memberToken(t *testing.T, f *fixture) string {
	t.Helper()
	s, err := f.a.Directory().Login(t.Context(), "ada", "correct horse battery", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s.Token.String()
}

func TestGateway_Takeover(t *testing.T) {
	f := newFixture(t, time.Second)
	first := f.connect(t, nil)
	call(t, first, "QueryBoard", struct{}{})
	second := f.connect(t, nil)
	_, err := callErr(first, "QueryBoard", struct{}{})
	if err == nil || !strings.Contains(err.Error(), "Conflict") {
		t.Errorf("a call on the replaced session = %v, want 409 connection_replaced", err)
	}
	if res, _ := call(t, second, "QueryBoard", struct{}{}); !res.Accepted {
		t.Errorf("the new session's call = %+v, want accepted", res)
	}
	// The raw body of the replaced session's next request is exact.
	status, body := rawPost(t, f.url, map[string]string{"Authorization": "Bearer " + f.token, "Mcp-Session-Id": first.ID(),
		"Mcp-Protocol-Version": contract.ProtocolVersion}, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if status != http.StatusConflict || body.Error.Data.Reason != contract.ReasonConnectionReplaced {
		t.Errorf("replaced session: status %d, %+v; want 409 connection_replaced", status, body.Error)
	}
}

func TestGateway_DeleteEndsSession(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	id := cs.ID()
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	status, body := rawPost(t, f.url, map[string]string{"Authorization": "Bearer " + f.token, "Mcp-Session-Id": id,
		"Mcp-Protocol-Version": contract.ProtocolVersion}, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if status != http.StatusNotFound || body.Error.Data.Reason != contract.ReasonUnknownSession {
		t.Errorf("after DELETE: status %d, %+v; want 404 unknown_session", status, body.Error)
	}
	// The client initializes anew.
	cs2 := f.connect(t, nil)
	call(t, cs2, "QueryBoard", struct{}{})
	_ = context.Background
}

func TestGateway_PingState(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	cs := f.connect(t, nil)
	call(t, cs, "ApplyAction", fetchCall("a.txt"))
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Fatalf("Ping through the SDK client: %v", err)
	}
	// The gateway answers ping itself; a method spelled with an escape is still a ping.
	for _, method := range []string{`"ping"`, `"\u0070ing"`} {
		t.Run(method, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":`+method+`}`))
			req.Header.Set("Authorization", "Bearer "+f.token)
			req.Header.Set("Mcp-Session-Id", cs.ID())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				ID     int `json:"id"`
				Result struct {
					Meta map[string]contract.HostMeta `json:"_meta"`
				} `json:"result"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			state := body.Result.Meta[contract.MetaKey].State
			if body.ID != 7 || len(state) != 1 || state[0].Ordinal != 1 || state[0].State != contract.OpRunning {
				t.Errorf("ping = %+v, want id 7 and the strip's state form with ordinal 1 running", body)
			}
		})
	}
}

func TestGateway_CaseLifecycle(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	res, meta := call(t, cs, "OpenCase", contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("t1")}})
	var opened struct {
		Case contract.Case `json:"case"`
	}
	if err := json.Unmarshal(res.Result, &opened); err != nil || !res.Accepted || opened.Case.CaseID == "" {
		t.Fatalf("OpenCase = %s %s %s", res.ErrorCode, res.Teaching, res.Result)
	}
	id := opened.Case.CaseID
	if len(meta.FocusedRoots) != 1 || meta.FocusedRoots[0].CaseID != id || !slices.Equal(meta.AffectedCases, []contract.CaseID{id}) {
		t.Errorf("_meta = %+v, want the new Case focused and affected", meta)
	}
	if len(res.View.Roots.Items) != 1 || res.View.Roots.Items[0].CaseID != id {
		t.Errorf("view roots = %+v, want the new Case's root", res.View.Roots.Items)
	}
	res, _ = call(t, cs, "CloseCase", contract.CloseCaseInput{CaseID: id, Disposition: contract.DispositionCompleted})
	if res.Accepted || res.ErrorCode == "" || res.Operations[0].State != contract.OpRefused {
		t.Errorf("CloseCase completed without acceptance = %+v, want refused by the Board", res.Operations)
	}
	res, _ = call(t, cs, "CloseCase", contract.CloseCaseInput{CaseID: id, Disposition: contract.DispositionCancelled, Reason: "done exploring"})
	if !res.Accepted || res.Operations[0].Label != "CloseCase "+string(id)+" cancelled" {
		t.Errorf("CloseCase cancelled = %s %s %+v", res.ErrorCode, res.Teaching, res.Operations)
	}
}

func TestGateway_ReadArtifact(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	put, err := f.ops.Operations().PutArtifact(t.Context(), f.agent, []byte("0123456789"))
	if err != nil || !strings.HasPrefix(put.Ref, "art_") || put.Size != 10 {
		t.Fatalf("PutArtifact = %+v, %v", put, err)
	}
	ref := put.Ref
	again, err := f.ops.Operations().PutArtifact(t.Context(), f.agent, []byte("0123456789"))
	if err != nil || again != put {
		t.Errorf("PutArtifact of the same content again = %+v, %v, want %+v: one content, one artifact", again, err, put)
	}
	tests := []struct {
		name string
		in   contract.ReadArtifactInput
		want contract.ArtifactFragment
	}{
		{"whole", contract.ReadArtifactInput{Ref: ref}, contract.ArtifactFragment{Ref: ref, Size: 10, Text: "0123456789"}},
		{"fragment", contract.ReadArtifactInput{Ref: ref, Offset: 2, Limit: 3}, contract.ArtifactFragment{Ref: ref, Offset: 2, Size: 10, Text: "234", More: true}},
		{"past the end", contract.ReadArtifactInput{Ref: ref, Offset: 99}, contract.ArtifactFragment{Ref: ref, Offset: 10, Size: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := call(t, cs, "ReadArtifact", tt.in)
			var got contract.ArtifactFragment
			if err := json.Unmarshal(res.Result, &got); err != nil {
				t.Fatalf("ReadArtifact = %s %s", res.ErrorCode, res.Teaching)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fragment (-want +got):\n%s", diff)
			}
		})
	}
}
