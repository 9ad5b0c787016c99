package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/contract"
)

// cancelOnce is a task's cancel signal, fired once from wherever the test decides.
type cancelOnce struct {
	once sync.Once
	done chan struct{}
}

func newCancel() *cancelOnce { return &cancelOnce{done: make(chan struct{})} }

func (c *cancelOnce) fire() { c.once.Do(func() { close(c.done) }) }

// turnErrors keeps the error of its provider's last turn.
type turnErrors struct {
	agent.Provider
	err error
}

func (p *turnErrors) Turn(ctx context.Context, req agent.Request, d func(agent.Delta)) (agent.Response, error) {
	resp, err := p.Provider.Turn(ctx, req, d)
	p.err = err
	return resp, err
}

// lastUserText is the text of the conversation's last message, which must be the user's.
func lastUserText(t *testing.T, store agent.ConversationStore, id string) string {
	t.Helper()
	c, err := store.Load(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Messages[len(c.Messages)-1]
	if last.Role != agent.RoleUser {
		t.Fatalf("the conversation ends with a %s message, want the user's", last.Role)
	}
	return last.Text
}

// TestLoop_Cancel_WhileTheModelStreams: a cancel while the model's answer streams aborts
// the request; nothing of the half answer is kept as the model's, no tool call is sent,
// and the conversation says where the task stopped.
func TestLoop_Cancel_WhileTheModelStreams(t *testing.T) {
	r := newRig(t)
	// The idle deadline is far past the cancel: a request it ended was not aborted by
	// the cancel, which the provider's own error tells apart (model_stalled).
	inner, err := openai.New(openai.Config{URL: providertest.Stalling(t), Model: "m", Deadlines: agent.Deadlines{Idle: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	p := &turnErrors{Provider: inner}
	cancel := newCancel()
	var deltas int
	l := r.loop(t, p, func(c *agent.LoopConfig) {
		// The stream has begun: the server sent its first piece and holds the rest.
		c.OnDelta = func(agent.Delta) { deltas++; cancel.fire() }
	})
	out, err := l.SendTask(agent.WithCancelSignal(t.Context(), cancel.done), "c1", "t-1", "Verify job calc-001.")
	if !errors.Is(err, agent.ErrCancelled) {
		t.Fatalf("SendTask = %+v, %v; want ErrCancelled", out, err)
	}
	if deltas == 0 {
		t.Fatal("the model's stream never began; the cancel was not made while it streamed")
	}
	if pe, ok := errors.AsType[*agent.ProviderError](p.err); ok && pe.Kind == agent.KindStalled {
		t.Errorf("the model request ended at its idle deadline (%v), want it aborted by the cancel", p.err)
	}
	if calls := r.gw.Calls(); len(calls) != 0 {
		t.Errorf("the gateway got %v after the cancel, want no call", tools(calls))
	}
	if text := lastUserText(t, r.store, "c1"); !strings.Contains(text, "Verify job calc-001.") || !strings.Contains(text, "cancelled this task") {
		t.Errorf("the conversation ends with %q, want the task's words and where it was cancelled", text)
	}
}

// TestLoop_Cancel_BetweenCalls: a cancel after one call of a turn is answered sends none of
// the rest, and no further model request.
func TestLoop_Cancel_BetweenCalls(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"},{"tool":"ApplyAction","arguments":{"action":"write_result"}}]},{"final":"never"}]}`)
	cancel := newCancel()
	l := r.loop(t, p, func(c *agent.LoopConfig) {
		c.OnTool = func(agent.ToolCall, agent.ToolResult) { cancel.fire() }
	})
	out, err := l.SendTask(agent.WithCancelSignal(t.Context(), cancel.done), "c1", "t-1", "go")
	if !errors.Is(err, agent.ErrCancelled) || len(out.Pending) != 0 {
		t.Fatalf("SendTask = %+v, %v; want ErrCancelled with nothing pending", out, err)
	}
	if got := tools(r.gw.Calls()); len(got) != 1 || got[0] != "QueryBoard" {
		t.Errorf("the gateway got %v, want only the QueryBoard sent before the cancel", got)
	}
	if n := len(p.requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once: no request after the cancel", n)
	}
	res := results(t, r.store, "c1")
	if len(res) != 2 {
		t.Fatalf("the turn's results are %+v, want one per call", res)
	}
	if code, _, _ := head(t, res[1]); code != contract.CodeNotExecuted || !strings.Contains(res[1].Content, "cancelled the task") {
		t.Errorf("the unsent call's result is %s, want not_executed for the cancel", res[1].Content)
	}
}

// TestLoop_Cancel_WhileACallIsHeld: a cancel while a write is held open does not cut it:
// the hold goes on to the Operation's outcome, which the model's conversation keeps; the
// next call of the turn is not sent.
func TestLoop_Cancel_WhileACallIsHeld(t *testing.T) {
	r := newRig(t)
	cancel := newCancel()
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "ApplyAction" {
			cancel.fire() // the call is admitted and kept open when the cancel comes
			return gatewaytest.Reply{State: contract.OpRunning, Later: []contract.OperationEntry{
				{State: contract.OpRunning, Stage: contract.StageAtWorker},
				{State: contract.OpDone, Result: json.RawMessage(`{"written":true}`)}}}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{"action":"write_result"}},{"tool":"QueryBoard"}]},{"final":"never"}]}`)
	l := r.loop(t, p, nil)
	out, err := l.SendTask(agent.WithCancelSignal(t.Context(), cancel.done), "c1", "t-1", "go")
	if !errors.Is(err, agent.ErrCancelled) || len(out.Pending) != 0 {
		t.Fatalf("SendTask = %+v, %v; want ErrCancelled with the held write settled", out, err)
	}
	res := results(t, r.store, "c1")
	if _, state, result := head(t, res[0]); state != string(contract.OpDone) || result != `{"written":true}` {
		t.Errorf("the held write's result reads state %q result %s, want its outcome done", state, result)
	}
	if res[0].Ordinal != 1 {
		t.Errorf("the held write's result names Operation %d, want 1", res[0].Ordinal)
	}
	for _, c := range r.gw.Calls()[1:] {
		if c.Tool != "QueryBoard" || string(c.Args) != "{}" {
			// The runtime's own delivery of the outcome is a QueryBoard of {}; the model's
			// proposed QueryBoard is never sent.
			t.Errorf("after the cancel the gateway got %s %s", c.Tool, c.Args)
		}
	}
	if n := len(p.requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
}

// TestLoop_Cancel_WhileAWriteWaitsForAPerson: a cancel while a write waits for a
// decision leaves it waiting (the run ends with it pending, as the task reports
// waiting); once a person decides, the wake shows the outcome in the conversation and
// sends no model request.
func TestLoop_Cancel_WhileAWriteWaitsForAPerson(t *testing.T) {
	r := newRig(t)
	cancel := newCancel()
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "ApplyAction" {
			cancel.fire()
			return gatewaytest.Reply{State: contract.OpWaitingForDecision}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{"action":"write_result"}}]},{"final":"never"}]}`)
	l := r.loop(t, p, nil)
	ctx := agent.WithCancelSignal(t.Context(), cancel.done)
	out, err := l.SendTask(ctx, "c1", "t-1", "go")
	if !errors.Is(err, agent.ErrCancelled) || len(out.Pending) != 1 || out.Pending[0].Ordinal != 1 {
		t.Fatalf("SendTask = %+v, %v; want ErrCancelled with the write pending", out, err)
	}
	if strip := r.gw.Strip(); strip[0].State != contract.OpWaitingForDecision {
		t.Errorf("the write is %s after the cancel, want it still waiting for a decision: a cancel cancels no Operation", strip[0].State)
	}
	r.gw.Settle(1, contract.OperationEntry{State: contract.OpDone, Result: json.RawMessage(`{"written":true}`)})
	out, err = l.Wake(ctx, "c1", "wake:t-1")
	if !errors.Is(err, agent.ErrCancelled) || len(out.Pending) != 0 {
		t.Fatalf("Wake = %+v, %v; want ErrCancelled with nothing pending", out, err)
	}
	if text := lastUserText(t, r.store, "c1"); !strings.Contains(text, `"callId":"scripted_1_1"`) || !strings.Contains(text, `{"written":true}`) {
		t.Errorf("the conversation ends with %q, want the settled write's outcome", text)
	}
	if n := len(p.requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once: the wake of a cancelled task asks it nothing", n)
	}
}
