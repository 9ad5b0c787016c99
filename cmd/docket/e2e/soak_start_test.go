package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/contract"
)

// soakTasks is how many tasks TestStart_SoakThroughModelFaults posts: DOCKET_SOAK_TASKS,
// else 40 (200 is the full size; docs/workbench.md, Model retries).
func soakTasks(t *testing.T) int {
	if v := os.Getenv("DOCKET_SOAK_TASKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4 {
			t.Fatalf("DOCKET_SOAK_TASKS=%q is not a count of 4 or more", v)
		}
		return n
	}
	return 40
}

// TestStart_SoakThroughModelFaults: under docket start, tasks spread over four Agents,
// two on the OpenAI-compatible test server and two on the Anthropic-compatible one,
// each of which answers 429 (Retry-After) to one request in five, stalls past the idle
// deadline on one in twenty and cuts one stream in twenty (by seed). One Agent has a
// budget a member set (docket budget set) that stops it halfway through its tasks: the
// server's own log shows no request for it sent past the limit, its tasks wait on the
// budget (docket task show, ops and doctor say so), and once the member raises it they go
// on. Every task ends completed, or failed with its cause named; each conversation's
// write reached the gateway once (one result per call, and no more ApplyBatch Operations
// than tasks); the retries are recorded on the conversations; the budget charged each
// answer once and holds nothing.
func TestStart_SoakThroughModelFaults(t *testing.T) {
	n := soakTasks(t)
	s := newStartEnv(t)
	s.run(t, "--listen", "127.0.0.1:0")
	script, err := scripted.ParseJSON([]byte(`{"turns":[
	  {"calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"soaked","args":{"x":"1"}}}]}}]},
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"final":"soaked"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	faults := providertest.WithFaults(providertest.Faults{Seed: 26, RateLimit: 0.2, Stall: 0.05, Cut: 0.05, RetryAfter: 200 * time.Millisecond})
	oa := providertest.NewOpenAI(t, script, "", faults)
	const secret = "sk-ant-soak-key"
	an := providertest.NewAnthropic(t, script, secret, faults)
	keyFile := writeKey(t, secret)

	names := []string{"soak-oa-1", "soak-oa-2", "soak-an-1", "soak-an-2"}
	// The budgeted Agent asks for a model of its own name, so that the server's log tells
	// its requests apart.
	capped := newSoakCap(n, len(names), "soak-oa-1", "soak-capped")
	agents := map[string]contract.AgentID{}
	for i, name := range names {
		var at contract.AgentToken
		s.docketJSON(t, &at, "agent", "create", name)
		agents[name] = at.Agent.ID
		args := []string{"agent", "profile", "set", name, "--no-check", "--model-idle-seconds", "1", "--model-attempts", "8", "--model-retry-wait-seconds", "60"}
		switch {
		case name == capped.agent:
			args = append(args, "--provider", "openai", "--model-url", oa.URL+"/v1", "--model", capped.model)
		case i < 2:
			args = append(args, "--provider", "openai", "--model-url", oa.URL+"/v1", "--model", "soak")
		default:
			args = append(args, "--provider", "anthropic", "--model-url", an.URL, "--model", "soak", "--key-file", keyFile)
		}
		s.docket(t, nil, args...)
	}
	capped.set(t, s, capped.limit)
	s.profiles(t, "the four runtimes running", running(names...))

	began := time.Now()
	posted := map[contract.TaskID]string{}
	for i := range n {
		var tk contract.Task
		name := names[i%len(names)]
		s.docketJSON(t, &tk, "task", "post", "--agent", name, "soak "+strconv.Itoa(i))
		posted[tk.ID] = name
	}
	t.Logf("%d tasks posted in %s (one docket task post each)", n, time.Since(began).Round(time.Millisecond))
	cl := s.member(t)
	capID := agents[capped.agent]
	tasks := soakWait(t, cl, posted, "every task ended but those waiting on budget "+capped.name, 10*time.Minute,
		func(ts []contract.Task) bool { return capped.stopped(ts, capID) })
	t.Logf("every task ended or waits on the budget %s after the first was posted", time.Since(began).Round(time.Millisecond))
	sent := capped.checkStop(t, s, oa)
	capped.checkWaits(t, s, tasks, capID)
	if now := len(capped.requests(oa)); now != sent {
		t.Errorf("the server got %d requests for %s while its tasks waited on the budget, want none", now-sent, capped.agent)
	}
	// A member's raise: the Agent goes on.
	capped.set(t, s, 1<<40)
	raised := time.Now()
	tasks = soakWait(t, cl, posted, "every task ended", 10*time.Minute, allFinished)
	t.Logf("%d tasks finished %s after the first was posted, %s after the raise; OpenAI-compatible server: %+v; Anthropic-compatible: %+v",
		n, time.Since(began).Round(time.Millisecond), time.Since(raised).Round(time.Millisecond), oa.Stats(), an.Stats())
	capped.checkCharged(t, s, oa)

	completed, retried, batches := 0, 0, map[contract.AgentID]int{}
	var retriedTask contract.TaskID
	for _, tk := range tasks {
		switch {
		case tk.State == contract.TaskCompleted:
			completed++
		case tk.State == contract.TaskFailed && tk.Result != nil && tk.Result.ErrorCode != "" && tk.Result.Teaching != "":
			t.Logf("task %s failed: %s: %s", tk.ID, tk.Result.ErrorCode, tk.Result.Teaching)
		default:
			t.Errorf("task %s ended %s with %+v, want completed or failed with its cause named", tk.ID, tk.State, tk.Result)
			continue
		}
		conv, err := cl.Conversation(t.Context(), "default", string(tk.Agent), string(tk.Conversation))
		if err != nil {
			t.Fatal(err)
		}
		answered := map[string]int{}
		for _, raw := range conv.Messages {
			var m agent.Message
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			for _, r := range m.Results {
				answered[r.CallID]++
			}
			for _, c := range m.Calls {
				if c.Name == contract.ToolApplyBatch {
					batches[tk.Agent]++
				}
			}
			if m.Turn != nil && len(m.Turn.Retries) > 0 {
				retried++
				retriedTask = tk.ID
			}
		}
		for id, k := range answered {
			if k != 1 {
				t.Errorf("task %s: call %s has %d results, want one", tk.ID, id, k)
			}
		}
	}
	for name, id := range agents {
		ops, err := cl.Operations(t.Context(), "default", string(id), false)
		if err != nil {
			t.Fatal(err)
		}
		sent := 0
		for _, op := range ops {
			if op.Tool == contract.ToolApplyBatch {
				sent++
			}
		}
		if sent != batches[id] {
			t.Errorf("agent %s: the gateway made %d ApplyBatch Operations for %d proposed in its conversations, want one each", name, sent, batches[id])
		}
	}
	st := oa.Stats()
	sa := an.Stats()
	if st.RateLimited+sa.RateLimited == 0 || st.Stalled+sa.Stalled+st.Cut+sa.Cut == 0 || retried == 0 {
		t.Errorf("the servers injected %+v and %+v and %d turns recorded a retry; want faults of each kind met and retried", st, sa, retried)
	}
	if retriedTask != "" {
		if text := s.docket(t, nil, "task", "show", string(retriedTask)); !regexp.MustCompile(`model turn \d+ was sent \d+ times: .*, waited [0-9.]+ s`).MatchString(text) {
			t.Errorf("docket task show %s =\n%s\nwant its retried model turn said, each attempt and its wait", retriedTask, text)
		}
	}
	if completed < n*9/10 {
		t.Errorf("%d of %d tasks completed; with retries nearly all should", completed, n)
	}
}

// writeKey writes a model key to a 0600 file and returns its path.
func writeKey(t *testing.T, key string) string {
	t.Helper()
	p := t.TempDir() + "/model.key"
	writeFile(t, p, key+"\n", 0o600)
	return p
}
