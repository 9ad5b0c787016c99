package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// soakCap is the budget TestStart_SoakThroughModelFaults sets on one of its Agents: in
// tokens, over its whole life, sized from the soak's task count so that it stops the Agent
// halfway through its tasks.
type soakCap struct {
	name, agent, model string
	limit              int64
}

// newSoakCap sizes the budget of agent, whose runtime asks for model, for n tasks spread
// over agents Agents: each task takes three model turns of 110 tokens (100 in, 10 out, as
// the test servers report them), and the limit falls halfway into the Agent's turns, not
// on a turn's edge.
func newSoakCap(n, agents int, agent, model string) soakCap {
	mine := (n + agents - 1) / agents
	turns := int64(3*mine) / 2
	return soakCap{name: "soak-cap", agent: agent, model: model, limit: 110*(turns-1) + 55}
}

// set sets the budget as a member does.
func (c soakCap) set(t *testing.T, s *startEnv, maxTokens int64) {
	t.Helper()
	s.docket(t, nil, "budget", "set", c.name, "--agent", c.agent, "--window", "total", "--max-tokens", strconv.FormatInt(maxTokens, 10))
}

// stopped reports whether the soak stands still on the budget: every task of the other
// Agents finished, and every unfinished task of c's Agent waiting on c.
func (c soakCap) stopped(tasks []contract.Task, agent contract.AgentID) bool {
	for _, tk := range tasks {
		if tk.State.Finished() {
			continue
		}
		if tk.Agent != agent || tk.State != contract.TaskWaiting || len(tk.Waiting) != 1 || tk.Waiting[0].Budget != c.name {
			return false
		}
	}
	return true
}

// requests are the requests the server logged for c's model, in the order they came.
func (c soakCap) requests(srv *providertest.Server) []providertest.Seen {
	var out []providertest.Seen
	for _, r := range srv.Seen() {
		if r.Model == c.model {
			out = append(out, r)
		}
	}
	return out
}

// checkStop checks, from the model server's own log, that the budget stopped its Agent
// exactly at its limit. The Agent's runtime takes one task at a time, so its requests
// reach the server one after another, and the budget counts what the answers reported
// (docs/budgets.md, Reserve, send, charge). Exactly means: every request sent — each
// attempt of a retried one too — was sent while the answers before it had used less than
// the limit, and the answers used the limit or more, so the request that would come next
// was refused and not sent. The budget's own figures must be the server's: spent is the
// usage the answers reported (a retried request charged once, by its answer), and nothing
// stays held.
func (c soakCap) checkStop(t *testing.T, s *startEnv, srv *providertest.Server) int {
	t.Helper()
	reqs := c.requests(srv)
	var used int64
	for i, r := range reqs {
		if used >= c.limit {
			t.Errorf("request %d of %d for %s came when its answers had used %d tokens of the %d limit: sent past the budget", i+1, len(reqs), c.agent, used, c.limit)
		}
		used += r.Usage.InputTokens + r.Usage.OutputTokens
	}
	if used < c.limit {
		t.Errorf("the answers for %s used %d tokens, below the %d limit, yet its tasks wait on the budget", c.agent, used, c.limit)
	}
	b := c.show(t, s)
	if b.Spend.Tokens != used || b.Spend.HeldTokens != 0 || !b.Spend.Exhausted {
		t.Errorf("budget %s spent %d and holds %d tokens (exhausted %v); want the %d its answers reported, nothing held, exhausted", c.name, b.Spend.Tokens, b.Spend.HeldTokens, b.Spend.Exhausted, used)
	}
	t.Logf("budget %s: %d requests for %s (%d retried attempts) used %d tokens of its %d limit, then stopped it", c.name, len(reqs), c.agent, len(reqs)-answered(reqs), used, c.limit)
	return len(reqs)
}

// checkWaits checks that a task of the stopped Agent says it waits on the budget, and that
// docket ops and docket doctor name the wait: the budget, its limit and spend, and who
// raises it.
func (c soakCap) checkWaits(t *testing.T, s *startEnv, tasks []contract.Task, agent contract.AgentID) {
	t.Helper()
	var waiting *contract.Task
	for i, tk := range tasks {
		if tk.Agent == agent && tk.State == contract.TaskWaiting {
			waiting = &tasks[i]
			break
		}
	}
	if waiting == nil {
		t.Fatalf("no task of %s waits on budget %s; size it so that it stops the Agent mid-soak", c.agent, c.name)
	}
	if waiting.Result == nil || waiting.Result.ErrorCode != contract.CodeBudgetExhausted {
		t.Errorf("waiting task %s has result %+v, want budget_exhausted", waiting.ID, waiting.Result)
	}
	if text := s.docket(t, nil, "task", "show", string(waiting.ID)); !strings.Contains(text, "waits on budget "+c.name) {
		t.Errorf("docket task show %s =\n%s\nwant the wait on budget %s", waiting.ID, text, c.name)
	}
	want := "of agent " + string(agent) + ": waits on budget " + c.name + " (exhausted, agent " + c.agent
	if text := s.docket(t, nil, "ops"); !strings.Contains(text, want) {
		t.Errorf("docket ops =\n%s\nwant %q", text, want)
	}
	if text := s.docket(t, nil, "doctor"); !strings.Contains(text, want) {
		t.Errorf("docket doctor =\n%s\nwant %q", text, want)
	}
}

// checkCharged checks, once every task ended, that the budget charged each answer once
// and holds nothing: no retried attempt charged twice, no reservation left behind.
func (c soakCap) checkCharged(t *testing.T, s *startEnv, srv *providertest.Server) {
	t.Helper()
	var used int64
	for _, r := range c.requests(srv) {
		used += r.Usage.InputTokens + r.Usage.OutputTokens
	}
	if b := c.show(t, s); b.Spend.Tokens != used || b.Spend.HeldTokens != 0 {
		t.Errorf("budget %s spent %d and holds %d tokens after the soak; want the %d its answers reported and nothing held", c.name, b.Spend.Tokens, b.Spend.HeldTokens, used)
	}
}

func (c soakCap) show(t *testing.T, s *startEnv) contract.Budget {
	t.Helper()
	var b contract.Budget
	s.docketJSON(t, &b, "budget", "show", c.name)
	return b
}

// answered counts the requests answered whole.
func answered(reqs []providertest.Seen) int {
	n := 0
	for _, r := range reqs {
		if r.Answered {
			n++
		}
	}
	return n
}

// soakWait polls the posted tasks until done says the soak reached what it waits for.
func soakWait(t *testing.T, cl *apiclient.Client, posted map[contract.TaskID]string, what string, within time.Duration, done func([]contract.Task) bool) []contract.Task {
	t.Helper()
	var tasks []contract.Task
	for deadline := time.Now().Add(within); ; time.Sleep(500 * time.Millisecond) {
		all, err := cl.Tasks(t.Context(), "default", "")
		if err != nil {
			t.Fatal(err)
		}
		tasks = tasks[:0]
		for _, tk := range all {
			if _, ok := posted[tk.ID]; ok {
				tasks = append(tasks, tk)
			}
		}
		if len(tasks) == len(posted) && done(tasks) {
			return tasks
		}
		if time.Now().After(deadline) {
			open := 0
			for _, tk := range tasks {
				if !tk.State.Finished() {
					open++
				}
			}
			t.Fatalf("%s: not reached after %s (%d of %d tasks open)", what, within, open, len(posted))
		}
	}
}

// allFinished says every task ended.
func allFinished(tasks []contract.Task) bool {
	for _, tk := range tasks {
		if !tk.State.Finished() {
			return false
		}
	}
	return true
}
