package agent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

// longScript is a script of turns model turns, each reading the Board, then a final answer.
func longScript(t *testing.T, turns int) *scripted.Script {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"turns":[`)
	for i := range turns {
		fmt.Fprintf(&b, `{"say":"step %d","calls":[{"tool":"QueryBoard","arguments":{"limit":%d}}]},`, i+1, 1+i%50)
	}
	b.WriteString(`{"final":"all steps done"}]}`)
	s, err := scripted.ParseJSON([]byte(b.String()))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return s
}

// A conversation of 500 model turns against a model with an 8k-token window keeps
// running: nearing the window, older turns are compacted into the model's summary, and no
// request the model server receives is over its window (the server counts each one).
func TestLoop_LongConversationStaysInTheWindow(t *testing.T) {
	const turns, window = 500, 8192
	srv := providertest.NewOpenAI(t, longScript(t, turns), "")
	srv.SetWindow(window)
	p, err := openai.New(openai.Config{URL: srv.URL, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t)
	result, err := json.Marshal(strings.Repeat("a board row; ", 110)) // about 1.4 kB a result
	if err != nil {
		t.Fatal(err)
	}
	r.gw.Reply = func(gatewaytest.Call) gatewaytest.Reply { return gatewaytest.Reply{Result: result} }
	out, err := r.loop(t, p, func(c *agent.LoopConfig) { c.ContextWindow = window }).Send(t.Context(), "long", "take every step")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !strings.Contains(out.Final, "all steps done") {
		t.Errorf("final answer %q, want the script's end", out.Final)
	}
	if got := len(r.gw.Calls()); got != turns {
		t.Errorf("the gateway ran %d calls, want %d: one per turn, none again after a compaction", got, turns)
	}
	most := 0
	for i, seen := range srv.Seen() {
		if seen.OverWindow {
			t.Errorf("request %d was %d tokens, over the %d-token window", i+1, seen.Tokens, window)
		}
	}
	for _, n := range srv.Sizes() {
		most = max(most, n)
	}
	c, err := r.store.Load(t.Context(), "long")
	if err != nil {
		t.Fatal(err)
	}
	if c.Compactions < 10 {
		t.Errorf("%d compactions over %d turns, want them to recur as the window fills", c.Compactions, turns)
	}
	if n, ok := agent.CompactedTurns(c.Messages[0].Text); !ok || n < turns-50 {
		t.Errorf("the conversation starts with %.200q; want a summary that replaced most of the %d turns", c.Messages[0].Text, turns)
	}
	t.Logf("%d requests, the largest %d of %d tokens; %d compactions; %d messages kept", len(srv.Sizes()), most, window, c.Compactions, len(c.Messages))
}

// A compaction keeps the recent turns as they were, but a tool result among them over
// 2 KiB is kept as an artifact and shown cut with its ref, which ReadArtifact reads.
func TestLoop_CompactionCutsLongKeptResults(t *testing.T) {
	r := newRig(t)
	result, err := json.Marshal(strings.Repeat("a long board row; ", 200)) // about 3.6 kB a result
	if err != nil {
		t.Fatal(err)
	}
	r.gw.Reply = func(gatewaytest.Call) gatewaytest.Reply { return gatewaytest.Reply{Result: result} }
	p := &turnRecorder{Provider: mustScripted(t, longScript(t, 30))}
	if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.ContextWindow = 16384 }).Send(t.Context(), "cut", "take every step"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	c, err := r.store.Load(t.Context(), "cut")
	if err != nil {
		t.Fatal(err)
	}
	if c.Compactions == 0 {
		t.Fatal("no compaction over 30 turns of 3.6 kB results in a 16k window")
	}
	recut := 0
	for _, m := range c.Messages {
		for _, res := range m.Results {
			if strings.Contains(res.Content, `Read the rest with ReadArtifact {"ref": "local:`) {
				recut++
				if len(res.Content) > 2048 {
					t.Errorf("a kept result cut to %d bytes, over 2048", len(res.Content))
				}
			}
		}
	}
	if recut == 0 {
		t.Error("no kept result was cut to an artifact ref")
	}
}

func mustScripted(t *testing.T, s *scripted.Script) *scripted.Provider {
	t.Helper()
	p, err := scripted.New(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoop_CompactionAsksTheBudget: the summary a compaction asks the model for is a model
// request like any other: reserved against the authority's budgets before it is sent and
// charged after, so no request of a long conversation goes past a budget uncounted.
func TestLoop_CompactionAsksTheBudget(t *testing.T) {
	r := newRig(t)
	result, err := json.Marshal(strings.Repeat("a long board row; ", 200))
	if err != nil {
		t.Fatal(err)
	}
	r.gw.Reply = func(gatewaytest.Call) gatewaytest.Reply { return gatewaytest.Reply{Result: result} }
	p := &turnRecorder{Provider: mustScripted(t, longScript(t, 30))}
	h := &fakeHolder{room: 1000}
	if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.ContextWindow, c.Budgets = 16384, h }).Send(t.Context(), "cut", "take every step"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	c, err := r.store.Load(t.Context(), "cut")
	if err != nil {
		t.Fatal(err)
	}
	if c.Compactions == 0 {
		t.Fatal("no compaction over 30 turns of 3.6 kB results in a 16k window")
	}
	if asked := len(p.requests()); len(h.reserved) != asked || len(h.charged) != asked {
		t.Errorf("%d model requests (summaries included), %d reserved, %d charged; want each reserved and charged", asked, len(h.reserved), len(h.charged))
	}
}
