package providertest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

// wire is one of the two servers with its real client.
type wire struct {
	name   string
	server func(t *testing.T, s *scripted.Script, opts ...providertest.Option) *providertest.Server
	client func(url string, d agent.Deadlines) (agent.Provider, error)
}

var wires = []wire{
	{"openai", func(t *testing.T, s *scripted.Script, opts ...providertest.Option) *providertest.Server {
		return providertest.NewOpenAI(t, s, "", opts...)
	}, func(url string, d agent.Deadlines) (agent.Provider, error) {
		return openai.New(openai.Config{URL: url, Model: "m", Deadlines: d})
	}},
	{"anthropic", func(t *testing.T, s *scripted.Script, opts ...providertest.Option) *providertest.Server {
		return providertest.NewAnthropic(t, s, "k", opts...)
	}, func(url string, d agent.Deadlines) (agent.Provider, error) {
		return anthropic.New(anthropic.Config{URL: url, Model: "m", Key: agent.NewKey("k"), Deadlines: d})
	}},
}

func parse(t *testing.T, js string) *scripted.Script {
	t.Helper()
	s, err := scripted.ParseJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var quick = agent.RetryPolicy{Attempts: 3, Base: time.Millisecond, Cap: 2 * time.Millisecond}

// TestFaults_EachIsRetriedThenGivenUp: each fault the servers inject on every request is
// read by the real client as the failure it is, retried to the policy's bound with each
// retry recorded, and given up with the failure named: a 429 with its Retry-After, an
// overloaded server, a stream cut mid-answer, a stream stalled past the idle deadline.
func TestFaults_EachIsRetriedThenGivenUp(t *testing.T) {
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "go"}}}
	faults := []struct {
		name   string
		faults providertest.Faults
		kind   agent.ErrorKind
		count  func(providertest.Stats) int
	}{
		{"rate limited", providertest.Faults{RateLimit: 1, RetryAfter: 20 * time.Millisecond}, agent.KindRateLimit, func(s providertest.Stats) int { return s.RateLimited }},
		{"overloaded", providertest.Faults{Overloaded: 1}, agent.KindServer, func(s providertest.Stats) int { return s.Overloaded }},
		{"cut", providertest.Faults{Cut: 1}, agent.KindStream, func(s providertest.Stats) int { return s.Cut }},
		{"stalled", providertest.Faults{Stall: 1}, agent.KindStalled, func(s providertest.Stats) int { return s.Stalled }},
	}
	for _, w := range wires {
		for _, f := range faults {
			t.Run(w.name+"/"+f.name, func(t *testing.T) {
				srv := w.server(t, parse(t, `{"turns":[{"say":"thinking","calls":[{"tool":"QueryBoard","arguments":{}}]},{"final":"done"}]}`), providertest.WithFaults(f.faults))
				c, err := w.client(srv.URL, agent.Deadlines{FirstByte: 5 * time.Second, Idle: 150 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				var discards int
				_, err = agent.WithRetries(c, quick).Turn(t.Context(), req, func(d agent.Delta) {
					if d.Kind == agent.DeltaDiscard {
						discards++
					}
				})
				pe, ok := errors.AsType[*agent.ProviderError](err)
				if !ok || pe.Kind != f.kind || len(pe.Retries) != quick.Attempts-1 || discards != quick.Attempts-1 {
					t.Fatalf("Turn = %v; want %s after %d attempts", err, f.kind, quick.Attempts)
				}
				if f.kind == agent.KindRateLimit {
					for _, r := range pe.Retries {
						if !r.Asked || r.WaitMS != 20 || r.Status != 429 {
							t.Errorf("retry %+v, want the server's Retry-After of 20 ms honoured", r)
						}
					}
				}
				if n := f.count(srv.Stats()); n != quick.Attempts {
					t.Errorf("the server injected %d faults, want one per attempt (%d)", n, quick.Attempts)
				}
			})
		}
	}
}

// TestFaults_ConversationCompletesThroughThem: a four-turn conversation through servers
// that rate-limit, overload, cut and stall a share of requests completes over the real
// clients with retries, the same each run for a seed, and the answers are the script's.
// The server's log marks the one request of each turn it answered whole, with the usage
// it reported: what the client read, and what a runtime charges to its budgets.
func TestFaults_ConversationCompletesThroughThem(t *testing.T) {
	js := `{"turns":[{"calls":[{"tool":"QueryBoard","arguments":{"a":1}}]},{"calls":[{"tool":"QueryBoard","arguments":{"a":2}}]},{"calls":[{"tool":"QueryBoard","arguments":{"a":3}}]},{"final":"done"}]}`
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			var runs []providertest.Stats
			for range 2 {
				srv := w.server(t, parse(t, js), providertest.WithFaults(providertest.Faults{Seed: 7, RateLimit: 0.2, Overloaded: 0.1, Cut: 0.15, Stall: 0.1, RetryAfter: time.Millisecond}))
				c, err := w.client(srv.URL, agent.Deadlines{FirstByte: 5 * time.Second, Idle: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				p := agent.WithRetries(c, agent.RetryPolicy{Attempts: 10, Base: time.Millisecond, Cap: 2 * time.Millisecond})
				msgs := []agent.Message{{Role: agent.RoleUser, Text: "go"}}
				var read agent.Usage
				for turn := 1; ; turn++ {
					resp, err := p.Turn(t.Context(), agent.Request{Messages: msgs}, nil)
					if err != nil {
						t.Fatalf("turn %d: %v", turn, err)
					}
					read.InputTokens += resp.Usage.InputTokens
					read.OutputTokens += resp.Usage.OutputTokens
					msgs = append(msgs, resp.Message)
					if len(resp.Message.Calls) == 0 {
						if resp.Message.Text != "done" || turn != 4 {
							t.Fatalf("turn %d ended %q, want the script's final answer at turn 4", turn, resp.Message.Text)
						}
						break
					}
					var res []agent.ToolResult
					for _, c := range resp.Message.Calls {
						res = append(res, agent.ToolResult{CallID: c.ID, Content: "{}"})
					}
					msgs = append(msgs, agent.Message{Role: agent.RoleUser, Results: res})
				}
				runs = append(runs, srv.Stats())
				var logged agent.Usage
				answered := 0
				for _, r := range srv.Seen() {
					if r.Answered {
						answered++
					} else if r.Usage != (agent.Usage{}) {
						t.Errorf("request %+v was not answered whole yet has usage", r)
					}
					logged.InputTokens += r.Usage.InputTokens
					logged.OutputTokens += r.Usage.OutputTokens
				}
				if answered != 4 || logged != read || read.InputTokens == 0 {
					t.Errorf("the server logged %d requests answered whole reporting %+v; the client read %+v over 4 turns", answered, logged, read)
				}
			}
			if runs[0] != runs[1] {
				t.Errorf("two runs with one seed injected %+v and %+v, want the same", runs[0], runs[1])
			}
			if s := runs[0]; s.RateLimited+s.Overloaded+s.Cut+s.Stalled == 0 {
				t.Errorf("the server injected no fault (%+v); pick a seed that does", s)
			}
		})
	}
}

// TestReasoning_SentBackWithTheNextToolCall: a reasoning server answers with reasoning
// (reasoning_content; a signed thinking block) and refuses a request whose assistant
// message with tool calls does not carry it back. The real clients keep it on the
// message, never in its text, and send it back, so the conversation completes; without
// it the server refuses the request.
func TestReasoning_SentBackWithTheNextToolCall(t *testing.T) {
	js := `{"turns":[{"say":"looking","calls":[{"tool":"QueryBoard","arguments":{}}]},{"calls":[{"tool":"QueryBoard","arguments":{"b":1}}]},{"final":"done"}]}`
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := w.server(t, parse(t, js), providertest.WithReasoning())
			c, err := w.client(srv.URL, agent.Deadlines{})
			if err != nil {
				t.Fatal(err)
			}
			msgs := []agent.Message{{Role: agent.RoleUser, Text: "go"}}
			var final string
			for turn := 1; turn <= 3; turn++ {
				resp, err := c.Turn(t.Context(), agent.Request{Messages: msgs}, func(d agent.Delta) {
					if strings.Contains(d.Text, "REASONING") {
						t.Errorf("a delta shown as the answer carries the reasoning: %+v", d)
					}
				})
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				m := resp.Message
				if len(m.Reasoning) == 0 || !strings.HasPrefix(m.Reasoning[0].Text, "REASONING-") || strings.Contains(m.Text, "REASONING") {
					t.Fatalf("turn %d: message %+v, want its reasoning kept apart from its text", turn, m)
				}
				if w.name == "anthropic" && m.Reasoning[0].Signature == "" {
					t.Fatalf("turn %d: the thinking block's signature was not kept", turn)
				}
				msgs = append(msgs, m)
				if len(m.Calls) == 0 {
					final = m.Text
					break
				}
				msgs = append(msgs, agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: m.Calls[0].ID, Content: "{}"}}})
			}
			if final != "done" {
				t.Fatalf("the conversation ended %q, want done", final)
			}
			// The same conversation with its reasoning dropped is refused.
			stripped := append([]agent.Message(nil), msgs[:len(msgs)-1]...)
			for i := range stripped {
				stripped[i].Reasoning = nil
			}
			_, err = c.Turn(t.Context(), agent.Request{Messages: stripped}, nil)
			if pe, ok := errors.AsType[*agent.ProviderError](err); !ok || pe.Kind != agent.KindBadRequest || !strings.Contains(pe.Message, "reasoning") {
				t.Fatalf("without its reasoning the request = %v, want refused for it", err)
			}
			if srv.Stats().ReasoningRefuse != 1 {
				t.Errorf("the server refused %d requests for reasoning, want 1", srv.Stats().ReasoningRefuse)
			}
			b, err := json.Marshal(msgs)
			if err != nil || !strings.Contains(string(b), `"reasoning"`) {
				t.Errorf("the conversation as saved does not keep the reasoning: %s", b)
			}
		})
	}
}
