package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// The agent's part of docket demo: the runtime in this process, what each answered call
// means, and the member's decision under --approve.

// runAgent runs the agent runtime in this process over the gateway, printing each tool
// call as it is answered; under --approve the member decides the write between turns.
func (d *demo) runAgent(ctx context.Context) error {
	f := runner.Config{
		URL: d.base + "/mcp", TokenFile: filepath.Join(d.dir, "agent-token"),
		Provider: d.cfg.Provider, ModelURL: d.cfg.ModelURL, Model: d.cfg.Model, ModelKeyFile: d.cfg.ModelKeyFile,
		HoldWait: 2 * time.Minute, LogLevel: "warn", Stderr: d.cfg.Stderr,
		// The runtime reads the model key the way docket agent run does, from the
		// caller's environment; everything else it needs is the demo's.
		Getenv: func(k string) string {
			if k == agent.KeyEnv {
				return d.cfg.Getenv(k)
			}
			return d.getenv(k)
		},
	}
	if f.ModelURL == "" && f.Provider == "" {
		f.Script = filepath.Join(d.dir, "script.json")
	} else {
		f.MaxTurns = d.cfg.MaxTurns
	}
	rt, err := runner.Open(ctx, f)
	if err != nil {
		return err
	}
	defer rt.Close()
	d.stepf("the agent runtime: %s, over %s", rt.Provider().Name(), f.URL)
	if strings.HasPrefix(rt.Provider().Name(), scripted.Banner) {
		d.say("   (a scripted model replays examples/verified-calculation/script.json; it runs no inference)")
	}
	onTool := func(c agent.ToolCall, r agent.ToolResult) { d.onTool(ctx, rt, c, r) }
	l, err := rt.Loop(onTool, d.onDelta)
	if err != nil {
		return err
	}
	out, err := l.Send(ctx, runner.NewConversationID(), demoTask)
	if d.said.Len() == 0 && out.Final != "" {
		d.said.WriteString(out.Final)
	}
	d.flushSaid()
	if err == nil {
		err = d.approveErr
	}
	if err != nil {
		return rt.Failure(err)
	}
	return nil
}

func (d *demo) onDelta(x agent.Delta) {
	if x.Kind == agent.DeltaText {
		d.said.WriteString(x.Text)
	}
}

func (d *demo) flushSaid() {
	if s := strings.TrimSpace(d.said.String()); s != "" {
		d.say("   model: %s", runner.Clip(s, 300))
	}
	d.said.Reset()
}

// onTool prints an answered call: what was asked, and what the authority and the Board
// answered. Under --approve it plays the member for a call that waits on a decision,
// with the ctx and runtime of the agent's run.
func (d *demo) onTool(ctx context.Context, rt *runner.Runtime, c agent.ToolCall, r agent.ToolResult) {
	d.flushSaid()
	d.say("   -> %s %s", c.Name, runner.Clip(string(c.Arguments), 200))
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(r.Content), &tr); err != nil {
		d.say("      %s", runner.Clip(r.Content, 300))
		return
	}
	for _, line := range describeResult(c.Name, tr, d.fresh) {
		d.say("      %s", line)
	}
	var in contract.ApplyActionInput
	if c.Name == contract.ToolApplyAction && json.Unmarshal(c.Arguments, &in) == nil &&
		len(tr.Operations) > 0 && tr.Operations[0].State == contract.OpDone {
		if tool := d.tools[in.Action]; tool != "" {
			d.say("      %s ran on the worker as %s", in.Action, tool)
		}
	}
	if len(tr.Operations) > 0 && tr.Operations[0].State == contract.OpWaitingForDecision && d.approveErr == nil {
		d.approveErr = d.decide(ctx, rt, contract.RequestID(tr.Operations[0].Decision))
	}
}

// fresh reports whether key is news: true the first time it is asked.
func (d *demo) fresh(key string) bool {
	if d.shown == nil {
		d.shown = map[string]bool{}
	}
	if d.shown[key] {
		return false
	}
	d.shown[key] = true
	return true
}

// describeResult says, in a few lines, what a tool result means for a reader of the
// demo. Nodes and roots are described only when fresh says they are news.
func describeResult(tool string, tr contract.ToolResult, fresh func(key string) bool) []string {
	var lines []string
	if !tr.Accepted {
		lines = append(lines, fmt.Sprintf("refused: %s: %s", tr.ErrorCode, tr.Teaching))
	}
	if len(tr.Operations) > 0 && tool != contract.ToolQueryBoard {
		op := tr.Operations[0]
		line := fmt.Sprintf("operation %s: %s", op.Label, op.State)
		if op.Decision != "" {
			line += ", decision " + op.Decision
		}
		if op.Reason != "" {
			line += " (" + op.Reason + ")"
		}
		lines = append(lines, line)
	}
	var res struct {
		Case    *contract.Case                   `json:"case"`
		Receipt *contract.ClosureReceipt         `json:"receipt"`
		Matches *contract.Bounded[contract.Node] `json:"matches"`
	}
	if len(tr.Result) > 0 && json.Unmarshal(tr.Result, &res) == nil {
		switch {
		case res.Receipt != nil:
			lines = append(lines, fmt.Sprintf("case %s closed %s; certified %v", res.Receipt.CaseID, res.Receipt.Disposition, res.Receipt.Certified))
			if a := res.Receipt.Acceptance; a != nil {
				lines = append(lines, fmt.Sprintf("certified by %s (%s, %s)", atomText(a.Atom), a.Kind, a.Tier))
			}
			if b, err := json.MarshalIndent(res.Receipt, "      ", "  "); err == nil {
				lines = append(lines, "receipt: "+string(b))
			}
		case res.Case != nil && tool == contract.ToolOpenCase:
			lines = append(lines, fmt.Sprintf("case %s opened, root %s", res.Case.CaseID, res.Case.Root))
		case res.Matches != nil:
			for _, n := range res.Matches.Items {
				lines = append(lines, fmt.Sprintf("matches %s (%s, %s)", atomText(n.Atom), n.Kind, n.Tier))
			}
		}
	}
	for _, n := range tr.View.Nodes.Items {
		if (n.Kind == contract.NodeDerived || strings.HasPrefix(string(n.CreatedBy), "tool:")) && fresh("node "+n.NodeID) {
			lines = append(lines, fmt.Sprintf("the Board holds %s (%s, %s, by %s)", atomText(n.Atom), n.Kind, n.Tier, n.CreatedBy))
		}
	}
	for _, root := range tr.View.Roots.Items {
		if fresh(fmt.Sprintf("root %s %v", root.Root, root.Certified)) {
			lines = append(lines, fmt.Sprintf("root %s certified: %v", root.Root, root.Certified))
		}
	}
	return lines
}

func atomText(a *contract.Atom) string {
	if a == nil {
		return "<none>"
	}
	b, err := json.Marshal(a.Args)
	if err != nil {
		return a.Predicate + "(unprintable)"
	}
	return a.Predicate + string(b)
}

// decide plays the member under --approve, between the model's turns: it shows the
// request with its canonical vector and digest, approves it through docket decide, and
// waits for the approved call to settle so that the model's next turn sees its outcome.
func (d *demo) decide(ctx context.Context, rt *runner.Runtime, id contract.RequestID) error {
	var rs []contract.Request
	if err := d.docketJSON(ctx, &rs, "requests"); err != nil {
		return err
	}
	i := slices.IndexFunc(rs, func(r contract.Request) bool { return r.ID == id })
	if i < 0 {
		return fmt.Errorf("docket requests does not list %s, which the operation waits on", id)
	}
	r := rs[i]
	canon, err := apiclient.CanonicalVector(r.Vector)
	if err != nil {
		return err
	}
	d.say("   a person must decide: request %s by %s", r.ID, r.RequestedBy)
	d.say("      vector %s", canon)
	d.say("      digest %s", r.Digest)
	out, err := d.docket(ctx, "decide", string(r.ID), "approve", "--digest", r.Digest, "--reason", "the demo's member read the vector above")
	if err != nil {
		return err
	}
	d.say("      docket decide: %s", strings.TrimSpace(string(out)))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		slots, err := rt.Gateway().Strip(ctx)
		if err != nil {
			return fmt.Errorf("ask the state of the approved call: %w", err)
		}
		if j := slices.IndexFunc(slots, func(s contract.OperationSlot) bool { return s.Ordinal == r.Ordinal }); j >= 0 && slots[j].State != contract.OpWaitingForDecision && slots[j].State != contract.OpRunning {
			d.say("      the approved call ran on the worker: %s %s", slots[j].Label, slots[j].State)
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}
