package mcpclient_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/contract"
)

func dial(t testing.TB, gw *gatewaytest.Server) *mcpclient.Client {
	t.Helper()
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: gw.URL, Token: gatewaytest.Token})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDial_ChecksTheContract(t *testing.T) {
	tests := []struct {
		name    string
		token   string
		version string
		tools   []string
		schema  string
		code    contract.Code
		is      error
	}{
		{name: "six tools at 2025-11-25", token: gatewaytest.Token},
		{name: "no token", token: "", code: contract.CodeUnauthenticated},
		{name: "rejected token", token: "wrong", code: contract.CodeUnauthenticated, is: mcpclient.ErrCredentialRejected},
		{name: "older protocol", token: gatewaytest.Token, version: "2025-06-18", code: contract.CodeProtocolDrift},
		{name: "a seventh tool", token: gatewaytest.Token, tools: append(agent.ToolNames(), "Shell"), code: contract.CodeToolDrift},
		{name: "a missing tool", token: gatewaytest.Token, tools: agent.ToolNames()[:5], code: contract.CodeToolDrift},
		{name: "a renamed tool", token: gatewaytest.Token, tools: append(agent.ToolNames()[:5], "ReadFile"), code: contract.CodeToolDrift},
		{name: "a changed schema", token: gatewaytest.Token, schema: `{"type":"object","properties":{"shell":{"type":"string"}}}`, code: contract.CodeToolDrift},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := gatewaytest.New(t)
			gw.Version, gw.Tools = tt.version, tt.tools
			if tt.schema != "" {
				gw.Schema = json.RawMessage(tt.schema)
			}
			c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: gw.URL, Token: tt.token})
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("Dial error = %v, want code %q", err, tt.code)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("Dial error = %v, want it to wrap %v", err, tt.is)
			}
			if err != nil {
				return
			}
			defer c.Close()
			var names []string
			for _, td := range c.Tools() {
				names = append(names, td.Name)
			}
			if diff := cmp.Diff(agent.ToolNames(), names); diff != "" {
				t.Errorf("Tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClient_Call(t *testing.T) {
	gw := gatewaytest.New(t)
	gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		return gatewaytest.Reply{Result: json.RawMessage(`{"caseId":"case-1"}`)}
	}
	c := dial(t, gw)
	res, err := c.Call(t.Context(), "OpenCase", json.RawMessage(`{"caseType":"calc"}`))
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	var got struct {
		Accepted bool            `json:"accepted"`
		Result   json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Fatalf("result text %q: %v", res.Text, err)
	}
	if !got.Accepted || string(got.Result) != `{"caseId":"case-1"}` {
		t.Errorf("result = %s, want accepted with the case", res.Text)
	}
	if res.Ordinal != 1 {
		t.Errorf("Ordinal = %d, want 1 (from the gateway's progress)", res.Ordinal)
	}
	calls := gw.Calls()
	if len(calls) != 1 || calls[0].Tool != "OpenCase" || string(calls[0].Args) != `{"caseType":"calc"}` {
		t.Errorf("the gateway received %+v, want one OpenCase with the arguments", calls)
	}
	// It reads the text block alone, and says so: the answer need not carry the same
	// object again as structuredContent (docs/mcp.md, "Result shape").
	if len(calls) == 1 && calls[0].Meta[contract.MetaTextOnlyKey] != true {
		t.Errorf("the call's _meta %v does not say the client reads the text block alone", calls[0].Meta)
	}
}

func TestClient_Call_ToolOutsideTheSixIsNeverSent(t *testing.T) {
	gw := gatewaytest.New(t)
	c := dial(t, gw)
	_, err := c.Call(t.Context(), "Shell", json.RawMessage(`{}`))
	if got := contract.CodeOf(err); got != contract.CodeToolNotOffered {
		t.Fatalf("Call(Shell) error = %v, want %s", err, contract.CodeToolNotOffered)
	}
	if n := len(gw.Calls()); n != 0 {
		t.Errorf("the gateway received %d calls, want none", n)
	}
}

func TestClient_Strip(t *testing.T) {
	gw := gatewaytest.New(t)
	gw.Reply = func(gatewaytest.Call) gatewaytest.Reply {
		return gatewaytest.Reply{State: contract.OpRunning, Later: []contract.OperationEntry{
			{State: contract.OpDone, Result: json.RawMessage(`{"total":262800}`)},
		}}
	}
	c := dial(t, gw)
	if _, err := c.Call(t.Context(), "ApplyAction", json.RawMessage(`{"action":"write_result"}`)); err != nil {
		t.Fatalf("Call: %v", err)
	}
	strip, err := c.Strip(t.Context())
	if err != nil {
		t.Fatalf("Strip: %v", err)
	}
	if len(strip) != 1 {
		t.Fatalf("Strip = %+v, want one operation", strip)
	}
	strip[0].At, strip[0].Since = time.Time{}, time.Time{}
	want := []contract.OperationSlot{{Ordinal: 1, OperationEntry: contract.OperationEntry{Tool: "ApplyAction", Label: "ApplyAction", State: contract.OpDone, Result: json.RawMessage(`{"total":262800}`)}}}
	if diff := cmp.Diff(want, strip); diff != "" {
		t.Errorf("Strip (-want +got):\n%s", diff)
	}
}

func TestClient_ReplacedExitsAndNeverReconnects(t *testing.T) {
	gw := gatewaytest.New(t)
	first := dial(t, gw)
	dial(t, gw) // the same Agent connects again
	for i, call := range []string{"QueryBoard", "QueryBoard"} {
		_, err := first.Call(t.Context(), call, json.RawMessage(`{}`))
		if !errors.Is(err, mcpclient.ErrReplaced) || contract.CodeOf(err) != "connection_replaced" {
			t.Fatalf("call %d on the replaced client: error = %v, want connection_replaced", i, err)
		}
	}
	if _, err := first.Strip(t.Context()); !errors.Is(err, mcpclient.ErrReplaced) {
		t.Fatalf("Strip on the replaced client: error = %v, want ErrReplaced", err)
	}
	if n := len(gw.Calls()); n != 0 {
		t.Errorf("the gateway received %d calls, want none from the replaced client", n)
	}
}

func TestClient_LostSessionIsNotResent(t *testing.T) {
	gw := gatewaytest.New(t)
	c := dial(t, gw)
	gw.Forget()
	_, err := c.Call(t.Context(), "ApplyBatch", json.RawMessage(`{"operations":[]}`))
	if !errors.Is(err, agent.ErrOutcomeUnknown) || contract.CodeOf(err) != contract.CodeOutcomeUnknown {
		t.Fatalf("Call on a forgotten session: error = %v, want outcome_unknown", err)
	}
	if _, err := c.Strip(t.Context()); err != nil {
		t.Fatalf("Strip after the lost answer (initializes anew): %v", err)
	}
	if n := len(gw.Calls()); n != 0 {
		t.Errorf("the gateway received %d calls, want none: a lost call is never re-sent", n)
	}
	res, err := c.Call(t.Context(), "QueryBoard", json.RawMessage(`{}`))
	if err != nil || !strings.Contains(res.Text, `"accepted":true`) {
		t.Fatalf("Call on the new session = %q, %v; want it answered", res.Text, err)
	}
}

func TestClient_Call_PingsAnIdleSessionFirst(t *testing.T) {
	gw := gatewaytest.New(t)
	now := time.Unix(1_800_000_000, 0)
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: gw.URL, Token: gatewaytest.Token, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	gw.Forget() // the gateway forgets the idle session
	now = now.Add(mcpclient.IdlePing + time.Second)
	if _, err := c.Call(t.Context(), "ApplyBatch", json.RawMessage(`{}`)); err != nil {
		t.Fatalf("Call after idling: %v; want the ping to find the forgotten session first", err)
	}
	if calls := gw.Calls(); len(calls) != 1 || calls[0].Tool != "ApplyBatch" {
		t.Errorf("the gateway received %+v, want the one ApplyBatch on the new session", calls)
	}
}
