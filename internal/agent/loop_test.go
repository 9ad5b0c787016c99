package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/contract"
)

// turnRecorder keeps every request its provider was asked, and may add usage to each turn.
type turnRecorder struct {
	agent.Provider
	usage     agent.Usage
	requestID string // given to every turn when set

	mu   sync.Mutex
	reqs []agent.Request
}

func (r *turnRecorder) Turn(ctx context.Context, req agent.Request, d func(agent.Delta)) (agent.Response, error) {
	req.Messages = append([]agent.Message(nil), req.Messages...) // the loop edits its own copy later
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	resp, err := r.Provider.Turn(ctx, req, d)
	resp.Usage = r.usage
	if r.requestID != "" {
		resp.RequestID = r.requestID
	}
	return resp, err
}

func (r *turnRecorder) requests() []agent.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Request(nil), r.reqs...)
}

func script(t *testing.T, js string) *turnRecorder {
	t.Helper()
	s, err := scripted.ParseJSON([]byte(js))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	p, err := scripted.New(s, "test")
	if err != nil {
		t.Fatalf("scripted.New: %v", err)
	}
	return &turnRecorder{Provider: p}
}

type rig struct {
	gw    *gatewaytest.Server
	store agent.FileConversations
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return &rig{gw: gatewaytest.New(t), store: agent.FileConversations{Dir: t.TempDir()}}
}

// loop connects a new runtime to the rig's gateway: a new MCP session, the same store.
func (r *rig) loop(t *testing.T, p agent.Provider, edit func(*agent.LoopConfig)) *agent.Loop {
	t.Helper()
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: r.gw.URL, Token: gatewaytest.Token})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	cfg := agent.LoopConfig{Provider: p, Gateway: c, Store: r.store, HoldWait: time.Minute, PingEvery: time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	l, err := agent.NewLoop(cfg)
	if err != nil {
		t.Fatalf("NewLoop: %v", err)
	}
	return l
}

func tools(calls []gatewaytest.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Tool)
	}
	return out
}

// results returns the tool results the model was shown, in order, over the conversation.
func results(t *testing.T, store agent.ConversationStore, id string) []agent.ToolResult {
	t.Helper()
	c, err := store.Load(t.Context(), id)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var out []agent.ToolResult
	for _, m := range c.Messages {
		out = append(out, m.Results...)
	}
	return out
}

func head(t *testing.T, r agent.ToolResult) (code contract.Code, state string, result string) {
	t.Helper()
	var h struct {
		ErrorCode  contract.Code             `json:"errorCode"`
		Result     json.RawMessage           `json:"result"`
		Operations []contract.OperationEntry `json:"operations"`
	}
	if err := json.Unmarshal([]byte(r.Content), &h); err != nil {
		t.Fatalf("result %s is not JSON: %v", r.Content, err)
	}
	if len(h.Operations) > 0 {
		state = string(h.Operations[0].State)
	}
	return h.ErrorCode, state, string(h.Result)
}

func TestLoop_Send_RunsAScriptToItsEnd(t *testing.T) {
	r := newRig(t)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "OpenCase" {
			return gatewaytest.Reply{Result: json.RawMessage(`{"caseId":"case-1","root":"n1"}`)}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[
	  {"calls":[{"as":"open","tool":"OpenCase","arguments":{"caseType":"calc"}}]},
	  {"calls":[{"tool":"ApplyBatch","arguments":{"caseId":{"$ref":"open.result.caseId"}}},{"tool":"QueryBoard"}]},
	  {"final":"done"}]}`)
	out, err := r.loop(t, p, nil).Send(t.Context(), "c1", "compute the total")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if out.Final != scripted.Banner+": done" || out.Stop != agent.StopEnd {
		t.Errorf("Outcome = %+v, want the script's final answer", out)
	}
	calls := r.gw.Calls()
	if diff := cmp.Diff([]string{"OpenCase", "ApplyBatch", "QueryBoard"}, tools(calls)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := string(calls[1].Args); got != `{"caseId":"case-1"}` {
		t.Errorf("ApplyBatch arguments = %s, want the minted caseId", got)
	}
	reqs := p.requests()
	var offered []string
	for _, td := range reqs[0].Tools {
		offered = append(offered, td.Name)
	}
	if diff := cmp.Diff(agent.ToolNames(), offered); diff != "" {
		t.Errorf("tools offered (-want +got):\n%s", diff)
	}
	if reqs[0].System != agent.SystemPrompt("") {
		t.Errorf("the system prompt is not agent.SystemPrompt")
	}
}

func TestLoop_Send_HeldCalls(t *testing.T) {
	tests := []struct {
		name      string
		reply     gatewaytest.Reply
		holdWait  time.Duration
		wantState contract.OperationState
		wantRes   string
		pings     bool // the runtime asked the strip while it kept the call open
		watched   bool // the outcome is still to be shown
	}{
		{name: "settles while held", reply: gatewaytest.Reply{State: contract.OpRunning, Later: []contract.OperationEntry{
			{State: contract.OpRunning, Stage: contract.StageAtWorker},
			{State: contract.OpDone, Result: json.RawMessage(`{"written":true}`)}}},
			holdWait: time.Minute, wantState: contract.OpDone, wantRes: `{"written":true}`, pings: true},
		{name: "still running at the bound", reply: gatewaytest.Reply{State: contract.OpRunning},
			holdWait: 20 * time.Millisecond, wantState: contract.OpRunning, pings: true, watched: true},
		{name: "waiting for a decision reaches the model at once", reply: gatewaytest.Reply{State: contract.OpWaitingForDecision},
			holdWait: time.Minute, wantState: contract.OpWaitingForDecision, watched: true},
		{name: "needs a person reaches the model at once", reply: gatewaytest.Reply{State: contract.OpNeedsPerson},
			holdWait: time.Minute, wantState: contract.OpNeedsPerson},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
				if c.Tool == "ApplyAction" {
					return tt.reply
				}
				return gatewaytest.Reply{}
			}
			p := script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{"action":"write_result"}}]},{"final":"ok"}]}`)
			pingsWhileHeld := -1
			l := r.loop(t, p, func(c *agent.LoopConfig) {
				c.HoldWait = tt.holdWait
				c.OnTool = func(agent.ToolCall, agent.ToolResult) { pingsWhileHeld = r.gw.Pings() }
			})
			if _, err := l.Send(t.Context(), "c1", "go"); err != nil {
				t.Fatalf("Send: %v", err)
			}
			res := results(t, r.store, "c1")
			code, state, result := head(t, res[0])
			if code != "" || state != string(tt.wantState) || result != tt.wantRes {
				t.Errorf("the model read errorCode %q, state %q, result %s; want state %q, result %s", code, state, result, tt.wantState, tt.wantRes)
			}
			if got := pingsWhileHeld > 0; got != tt.pings {
				t.Errorf("pings while held: %v, want %v", got, tt.pings)
			}
			c, _ := r.store.Load(t.Context(), "c1")
			if got := len(c.Watching) == 1; got != tt.watched {
				t.Errorf("watched after the call: %+v, want watched %v", c.Watching, tt.watched)
			}
			if strip := r.gw.Strip(); strip[0].State != tt.wantState {
				t.Errorf("the gateway's operation is %s, want %s: the runtime cancels nothing", strip[0].State, tt.wantState)
			}
		})
	}
}

func TestLoop_Send_ShowsUnreadOutcomeBeforeTheNextTurn(t *testing.T) {
	r := newRig(t)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "ApplyAction" {
			return gatewaytest.Reply{State: contract.OpRunning}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{}}]},{"calls":[{"tool":"QueryBoard"}]},{"final":"ok"}]}`)
	l := r.loop(t, p, func(c *agent.LoopConfig) { c.HoldWait = 10 * time.Millisecond })
	// The write is still running at the hold bound: the scripted model ends its turn on it,
	// as a model with nothing to go on would, and the run ends with it pending.
	if out, err := l.Send(t.Context(), "c1", "go"); err != nil || len(out.Pending) != 1 {
		t.Fatalf("Send = %+v, %v; want the run ended with the write pending", out, err)
	}
	// The write settles; the runtime's wake shows its outcome before the next turn.
	r.gw.Settle(1, contract.OperationEntry{State: contract.OpDone, Result: json.RawMessage(`{"total":262800}`)})
	if out, err := l.Wake(t.Context(), "c1", "wake:1"); err != nil || !strings.HasSuffix(out.Final, "ok") {
		t.Fatalf("Wake = %+v, %v; want the script played to its end", out, err)
	}
	reqs := p.requests()
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if !strings.Contains(last.Text, "outcomes you have not read") || !strings.Contains(last.Text, `"callId":"scripted_1_1"`) || !strings.Contains(last.Text, "262800") {
		t.Errorf("the turn after the outcome was shown %q; want the unread outcome of scripted_1_1", last.Text)
	}
	if strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Text, "262800") {
		t.Errorf("the outcome was shown before it was known")
	}
	c, _ := r.store.Load(t.Context(), "c1")
	if len(c.Watching) != 0 || len(c.Unread) != 0 {
		t.Errorf("after showing: watching %+v, unread %q; want both empty", c.Watching, c.Unread)
	}
}

func TestLoop_Send_WriteGateStopsTheTurn(t *testing.T) {
	tests := []struct {
		name  string
		reply func(c gatewaytest.Call) gatewaytest.Reply
		code  contract.Code
		sent  []string
	}{
		{name: "operation_running", code: "operation_running", sent: []string{"ApplyAction", "ApplyBatch"}, reply: func(c gatewaytest.Call) gatewaytest.Reply {
			if c.Tool == "ApplyBatch" {
				return gatewaytest.Reply{ErrorCode: "operation_running", Teaching: "another conversation's write is open"}
			}
			return gatewaytest.Reply{}
		}},
		// Nothing is watched, so the refused write is sent once more (the refusal delivered
		// the outcome); refused again, the turn stops.
		{name: "previous_result_undelivered", code: "previous_result_undelivered", sent: []string{"ApplyAction", "ApplyBatch", "ApplyBatch"}, reply: func(c gatewaytest.Call) gatewaytest.Reply {
			if c.Tool == "ApplyBatch" {
				return gatewaytest.Reply{ErrorCode: "previous_result_undelivered", Teaching: "read the outcome first"}
			}
			return gatewaytest.Reply{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.gw.Reply = tt.reply
			p := script(t, `{"turns":[{"calls":[
			  {"tool":"ApplyAction","arguments":{}},
			  {"tool":"ApplyBatch","arguments":{}},
			  {"tool":"CloseCase","arguments":{}}]},{"final":"ok"}]}`)
			if _, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go"); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if diff := cmp.Diff(tt.sent, tools(r.gw.Calls())); diff != "" {
				t.Errorf("calls sent (-want +got):\n%s", diff)
			}
			res := results(t, r.store, "c1")
			if code, _, _ := head(t, res[1]); code != tt.code {
				t.Errorf("the refused write shows %q, want %q", code, tt.code)
			}
			if code, _, _ := head(t, res[2]); code != contract.CodeNotExecuted || !res[2].IsError {
				t.Errorf("the call after the refusal shows %q, want %s", code, contract.CodeNotExecuted)
			}
		})
	}
}

// TestLoop_Send_HeldCallStopsTheTurn: once a call of a turn is held past the bound or
// waits for a decision, the turn's other calls are not sent (the write gate would refuse
// them, and did once): each is answered not_executed, naming the open call, and only the
// open call reached the gateway.
func TestLoop_Send_HeldCallStopsTheTurn(t *testing.T) {
	for _, state := range []contract.OperationState{contract.OpWaitingForDecision, contract.OpRunning} {
		t.Run(string(state), func(t *testing.T) {
			r := newRig(t)
			r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
				if c.Tool == "ApplyAction" {
					return gatewaytest.Reply{State: state}
				}
				return gatewaytest.Reply{}
			}
			p := script(t, `{"turns":[{"calls":[
			  {"tool":"ApplyAction","arguments":{}},
			  {"tool":"ApplyBatch","arguments":{}},
			  {"tool":"QueryBoard","arguments":{}}]},{"final":"ok"}]}`)
			out, err := r.loop(t, p, func(c *agent.LoopConfig) { c.HoldWait = 10 * time.Millisecond }).Send(t.Context(), "c1", "go")
			if err != nil || len(out.Pending) != 1 {
				t.Fatalf("Send = %+v, %v; want the run ended with the held write pending", out, err)
			}
			if diff := cmp.Diff([]string{"ApplyAction"}, tools(r.gw.Calls())); diff != "" {
				t.Errorf("calls sent (-want +got):\n%s", diff)
			}
			res := results(t, r.store, "c1")
			for _, rr := range res[1:3] {
				if code, _, _ := head(t, rr); code != contract.CodeNotExecuted || !strings.Contains(rr.Content, "ApplyAction scripted_1_1") {
					t.Errorf("a call after the held one shows %s, want %s naming the held call", rr.Content, contract.CodeNotExecuted)
				}
			}
		})
	}
}

// TestLoop_Send_AnEarlierRunsOutcomeDoesNotRefuseTheNext: a write refused because an
// outcome another run left unread was delivered by that refusal, so it is sent once more
// and the conversation goes on; the model reads the write's own answer.
func TestLoop_Send_AnEarlierRunsOutcomeDoesNotRefuseTheNext(t *testing.T) {
	r := newRig(t)
	refused := false
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "ApplyBatch" && !refused {
			refused = true
			return gatewaytest.Reply{ErrorCode: "previous_result_undelivered", Teaching: "read the outcome first"}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"ApplyBatch","arguments":{}}]},{"final":"ok"}]}`)
	out, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go")
	if err != nil || !strings.HasSuffix(out.Final, "ok") {
		t.Fatalf("Send = %+v, %v; want ok", out, err)
	}
	if diff := cmp.Diff([]string{"ApplyBatch", "ApplyBatch"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls sent (-want +got):\n%s", diff)
	}
	if code, _, _ := head(t, results(t, r.store, "c1")[0]); code != "" {
		t.Errorf("the model read %q, want the accepted answer", code)
	}
}

func TestLoop_Send_ToolOutsideTheSixIsRefusedLocally(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"calls":[{"tool":"Shell","arguments":{"cmd":"rm -rf /"}},{"tool":"QueryBoard"}]},{"final":"ok"}]}`)
	if _, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if diff := cmp.Diff([]string{"QueryBoard"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls sent (-want +got):\n%s", diff)
	}
	if code, _, _ := head(t, results(t, r.store, "c1")[0]); code != contract.CodeToolNotOffered {
		t.Errorf("Shell shows %q, want %s", code, contract.CodeToolNotOffered)
	}
}

func TestLoop_Send_LostAnswerIsNotResent(t *testing.T) {
	r := newRig(t)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "OpenCase" {
			r.gw.Forget() // the gateway forgets the session after this answer
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"OpenCase","arguments":{}}]},{"calls":[{"tool":"ApplyBatch","arguments":{}},{"tool":"QueryBoard"}]},{"final":"ok"}]}`)
	if _, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if diff := cmp.Diff([]string{"OpenCase"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls the gateway ran (-want +got):\n%s", diff)
	}
	res := results(t, r.store, "c1")
	if code, _, _ := head(t, res[1]); code != contract.CodeOutcomeUnknown {
		t.Errorf("the lost call shows %q, want %s", code, contract.CodeOutcomeUnknown)
	}
	if code, _, _ := head(t, res[2]); code != contract.CodeNotExecuted {
		t.Errorf("the call after it shows %q, want %s", code, contract.CodeNotExecuted)
	}
}

func TestLoop_Send_ResumesAfterAKillWithoutResending(t *testing.T) {
	r := newRig(t)
	received := make(chan gatewaytest.Call, 1)
	r.gw.Received = received
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "ApplyAction" {
			return gatewaytest.Reply{State: contract.OpRunning, Block: t.Context().Done()}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{"action":"write_result"}},{"tool":"QueryBoard"}]},{"final":"ok"}]}`)

	// The first runtime dies while its write is held.
	ctx, kill := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.loop(t, p, nil).Send(ctx, "c1", "go")
		errc <- err
	}()
	<-received
	kill()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed run ended with %v, want context.Canceled", err)
	}
	r.gw.Settle(1, contract.OperationEntry{State: contract.OpDone, Result: json.RawMessage(`{"total":262800}`)})

	// A new runtime resumes the conversation.
	out, err := r.loop(t, p, nil).Send(t.Context(), "c1", "")
	if err != nil {
		t.Fatalf("resumed Send: %v", err)
	}
	if out.Final != scripted.Banner+": ok" {
		t.Errorf("Final = %q, want the script's end", out.Final)
	}
	// The QueryBoard is the runtime's own, delivering the outcome it found by ping.
	if diff := cmp.Diff([]string{"ApplyAction", "QueryBoard"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls the gateway received (-want +got):\n%s", diff)
	}
	res := results(t, r.store, "c1")
	if code, _, _ := head(t, res[0]); code != contract.CodeOutcomeUnknown {
		t.Errorf("the in-flight call shows %q, want %s", code, contract.CodeOutcomeUnknown)
	}
	if code, _, _ := head(t, res[1]); code != contract.CodeNotExecuted {
		t.Errorf("the call after it shows %q, want %s", code, contract.CodeNotExecuted)
	}
	reqs := p.requests()
	last := reqs[len(reqs)-1].Messages
	if text := last[len(last)-1].Text; !strings.Contains(text, "262800") {
		t.Errorf("the resumed turn was shown %q; want the outcome it had not read", text)
	}
}

func TestLoop_Send_StopsAtTheTokenBudget(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},{"calls":[{"tool":"ApplyBatch","arguments":{}}]},{"final":"ok"}]}`)
	p.usage = agent.Usage{InputTokens: 400, OutputTokens: 100}
	meter, err := agent.NewMeter(agent.Budget{MaxTokens: 1000}, "scripted", nil)
	if err != nil {
		t.Fatalf("NewMeter: %v", err)
	}
	_, err = r.loop(t, p, func(c *agent.LoopConfig) { c.Meter = meter }).Send(t.Context(), "c1", "go")
	be, ok := errors.AsType[*agent.BudgetError](err)
	if !ok || be.Kind != agent.BudgetTokens || be.Spent.Turns != 2 {
		t.Fatalf("Send error = %v, want the token budget spent after 2 turns", err)
	}
	if diff := cmp.Diff([]string{"QueryBoard"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls sent (-want +got):\n%s", diff)
	}
	if code, _, _ := head(t, results(t, r.store, "c1")[1]); code != contract.CodeNotExecuted {
		t.Errorf("the last turn's call shows %q, want %s", code, contract.CodeNotExecuted)
	}
}

func TestLoop_Send_BoundsResultsAndServesLocalArtifacts(t *testing.T) {
	r := newRig(t)
	big := strings.Repeat("x", 2000)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		return gatewaytest.Reply{Result: json.RawMessage(`"` + big + `"`)}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},{"calls":[{"tool":"ReadArtifact","arguments":{"ref":"local:1","offset":1990}}]},{"final":"ok"}]}`)
	if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.Bounder.Limit = 600 }).Send(t.Context(), "c1", "go"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	res := results(t, r.store, "c1")
	if len(res[0].Content) > 600 || !strings.Contains(res[0].Content, `ReadArtifact {"ref": "local:1"}`) {
		t.Errorf("the big result was shown as %d bytes ending %q; want at most 600 with the local ref", len(res[0].Content), res[0].Content[max(0, len(res[0].Content)-120):])
	}
	if !strings.Contains(res[1].Content, `"total":`) || strings.Contains(res[1].Content, "errorCode") {
		t.Errorf("ReadArtifact of the local ref = %s, want the artifact's tail", res[1].Content)
	}
	if diff := cmp.Diff([]string{"QueryBoard"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls sent (-want +got):\n%s", diff)
	}
}

func TestLoop_Send_LostReadDoesNotStopTheTurn(t *testing.T) {
	r := newRig(t)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "OpenCase" {
			r.gw.Forget()
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"OpenCase","arguments":{}}]},{"calls":[{"tool":"QueryBoard"},{"tool":"ApplyBatch","arguments":{}}]},{"final":"ok"}]}`)
	if _, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if diff := cmp.Diff([]string{"OpenCase", "ApplyBatch"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls the gateway ran (-want +got):\n%s", diff)
	}
	if code, _, _ := head(t, results(t, r.store, "c1")[1]); code != contract.CodeOutcomeUnknown {
		t.Errorf("the lost query shows %q, want %s", code, contract.CodeOutcomeUnknown)
	}
	if c, _ := r.store.Load(t.Context(), "c1"); len(c.Watching) != 0 {
		t.Errorf("watching %+v after a lost read, want nothing", c.Watching)
	}
}

func TestLoop_Send_FinalAnswerPastTheBudgetFinishes(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"final":"done"}]}`)
	p.usage = agent.Usage{InputTokens: 900, OutputTokens: 200}
	meter, err := agent.NewMeter(agent.Budget{MaxTokens: 1000}, "scripted", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.loop(t, p, func(c *agent.LoopConfig) { c.Meter = meter }).Send(t.Context(), "c1", "go")
	if err != nil || out.Spent.InputTokens != 900 {
		t.Errorf("Send = %+v, %v; want the final answer with its spending and no error: the budget stopped nothing", out, err)
	}
}
