package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

// TestLoop_CutStreamNeverResendsACall: the model's answer stream is cut on the first
// attempt of every request, after a tool call of an earlier turn was sent to the gateway
// and in the middle of a turn that proposes another: each turn is asked for again from
// the last complete message, every call reaches the gateway exactly once, and each turn
// records the retry it needed (provider, what failed, the wait).
func TestLoop_CutStreamNeverResendsACall(t *testing.T) {
	s, err := scripted.ParseJSON([]byte(`{"turns":[
	  {"calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"a","args":{"x":"1"}}}]}}]},
	  {"calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"b","args":{"x":"2"}}}]}}]},
	  {"final":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t, s, "", providertest.WithFaults(providertest.Faults{Cut: 1, FirstOnly: true}))
	c, err := openai.New(openai.Config{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t)
	p := agent.WithRetries(c, agent.RetryPolicy{Base: time.Millisecond, Cap: 2 * time.Millisecond})
	out, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go")
	if err != nil || out.Final != "done" {
		t.Fatalf("Send = %+v, %v; want the conversation completed", out, err)
	}
	if diff := cmp.Diff([]string{"ApplyBatch", "ApplyBatch"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls the gateway received (-want +got):\n%s", diff)
	}
	if st := srv.Stats(); st.Cut != 3 || st.Requests != 6 {
		t.Errorf("the server cut %d of %d requests, want the first attempt of each of 3 turns cut", st.Cut, st.Requests)
	}
	conv, err := r.store.Load(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, m := range conv.Messages {
		if m.Role != agent.RoleAssistant {
			continue
		}
		turns++
		if m.Turn == nil || len(m.Turn.Retries) != 1 || m.Turn.Retries[0].Kind != agent.KindStream || m.Turn.Retries[0].Provider != "openai" || m.Turn.Retries[0].Attempt != 1 {
			t.Errorf("turn %d recorded %+v, want one retry of a cut openai stream", turns, m.Turn)
		}
	}
	if turns != 3 {
		t.Errorf("the conversation holds %d turns, want 3", turns)
	}
}

// TestLoop_ReasoningModel: against servers that answer with reasoning and refuse a
// request whose tool calls come back without it, a conversation over the real clients
// completes; the reasoning is kept in the conversation, and it is never the answer and
// never in what reached the gateway (the Board).
func TestLoop_ReasoningModel(t *testing.T) {
	js := `{"turns":[
	  {"say":"opening","calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"a","args":{"x":"1"}}}]}}]},
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"final":"done"}]}`
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			s, err := scripted.ParseJSON([]byte(js))
			if err != nil {
				t.Fatal(err)
			}
			var p agent.Provider
			var srv *providertest.Server
			if wire == "openai" {
				srv = providertest.NewOpenAI(t, s, "", providertest.WithReasoning())
				p, err = openai.New(openai.Config{URL: srv.URL, Model: "deepseek-reasoner"})
			} else {
				srv = providertest.NewAnthropic(t, s, "k", providertest.WithReasoning())
				p, err = anthropic.New(anthropic.Config{URL: srv.URL, Model: "claude-test", Key: agent.NewKey("k"), Thinking: agent.ThinkingOn})
			}
			if err != nil {
				t.Fatal(err)
			}
			r := newRig(t)
			out, err := r.loop(t, p, nil).Send(t.Context(), "c1", "go")
			if err != nil || out.Final != "done" {
				t.Fatalf("Send = %+v, %v; want the conversation completed", out, err)
			}
			if st := srv.Stats(); st.ReasoningRefuse != 0 || st.Requests != 3 {
				t.Errorf("the server saw %+v; want 3 requests, none refused for reasoning", st)
			}
			for _, c := range r.gw.Calls() {
				if strings.Contains(string(c.Args), "REASONING") {
					t.Errorf("the reasoning reached the gateway in %s %s", c.Tool, c.Args)
				}
			}
			conv, err := r.store.Load(t.Context(), "c1")
			if err != nil {
				t.Fatal(err)
			}
			kept := 0
			for _, m := range conv.Messages {
				if strings.Contains(m.Text, "REASONING") {
					t.Errorf("a message's text holds the reasoning: %q", m.Text)
				}
				if len(m.Reasoning) > 0 {
					kept++
				}
			}
			if kept != 3 {
				t.Errorf("%d assistant messages kept their reasoning, want 3", kept)
			}
		})
	}
}
