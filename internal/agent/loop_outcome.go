package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// This file holds how the loop learns outcomes it did not read in a call's answer: by
// keeping a running call open and asking the strip, and by watching operations across
// turns until their outcome can be shown.

// hold keeps a running call open, asking the strip every PingEvery until the operation
// leaves running or HoldWait passes. It returns the last state seen.
func (l *Loop) hold(ctx context.Context, c *Conversation, p Pending) (contract.OperationSlot, error) {
	last := contract.OperationSlot{Ordinal: p.Ordinal, OperationEntry: contract.OperationEntry{Tool: p.Tool, State: contract.OpRunning}}
	deadline := time.NewTimer(l.cfg.HoldWait)
	defer deadline.Stop()
	tick := time.NewTicker(l.cfg.PingEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("hold %s call %s: %w", p.Tool, p.CallID, ctx.Err())
		case <-deadline.C:
			l.log.Info("call still running at the hold bound", logConversation, c.ID, logCall, p.CallID, logOrdinal, p.Ordinal)
			return last, nil
		case <-tick.C:
		}
		strip, err := l.cfg.Gateway.Strip(ctx)
		if err != nil {
			return last, fmt.Errorf("hold %s call %s: ask the strip: %w", p.Tool, p.CallID, err)
		}
		if op, ok := find(strip, p); ok {
			c.LastOrdinal = max(c.LastOrdinal, op.Ordinal)
			last = op
			if op.State != contract.OpRunning {
				return op, nil
			}
		}
	}
}

// find looks p up in a strip: by ordinal when it is known, else the newest entry of the
// same tool above p.After.
func find(strip []contract.OperationSlot, p Pending) (contract.OperationSlot, bool) {
	for _, op := range strip {
		if p.Ordinal > 0 && op.Ordinal == p.Ordinal {
			return op, true
		}
		if p.Ordinal == 0 && op.Tool == p.Tool && (op.Ordinal == 0 || op.Ordinal > p.After) {
			return op, true
		}
	}
	return contract.OperationSlot{}, false
}

// showUnread asks the strip for the outcomes of watched operations and adds every
// outcome the model has not read to the user message it is about to answer.
func (l *Loop) showUnread(ctx context.Context, c *Conversation) error {
	if len(c.Watching) > 0 {
		strip, err := l.cfg.Gateway.Strip(ctx)
		if err != nil {
			return fmt.Errorf("conversation %s: ask the strip for unread outcomes: %w", c.ID, err)
		}
		var still, foundFor []Pending
		var found []contract.OperationSlot
		for _, p := range c.Watching {
			op, ok := find(strip, p)
			if !ok || !reported(op.State) {
				if ok && p.Ordinal == 0 {
					p.Ordinal = op.Ordinal // pin it, so a newer call of the same tool is not taken for it
				}
				still = append(still, p)
				continue
			}
			c.LastOrdinal = max(c.LastOrdinal, op.Ordinal)
			found = append(found, op)
			foundFor = append(foundFor, p)
		}
		if len(found) > 0 {
			entries, err := l.deliver(ctx)
			if err != nil {
				return err
			}
			for i, op := range found {
				c.Unread = append(c.Unread, describeOutcome(foundFor[i], modelForm(op, entries)))
			}
		}
		c.Watching = still
	}
	if len(c.Unread) == 0 {
		return nil
	}
	text := "[docket: outcomes you have not read yet]\n" + strings.Join(c.Unread, "\n")
	shown, err := l.cfg.Bounder.Bound(ctx, "outcomes", "unread", []byte(text))
	if err != nil {
		return fmt.Errorf("conversation %s: bound unread outcomes: %w", c.ID, err)
	}
	last := &c.Messages[len(c.Messages)-1]
	last.Text = joinText(last.Text, shown)
	c.Unread = nil
	return l.save(ctx, c)
}

// describeOutcome is one line telling the model how one of its calls ended.
func describeOutcome(p Pending, op contract.OperationEntry) string {
	b, err := json.Marshal(struct {
		CallID string `json:"callId"`
		contract.OperationEntry
	}{p.CallID, op})
	if err != nil {
		return fmt.Sprintf("call %s (%s): %s", p.CallID, p.Tool, op.State)
	}
	return string(b)
}

// withOutcome returns the answer text with the settled operation's result and state in
// place of the running ones, so the model reads one answer for its one call.
func withOutcome(text string, op contract.OperationEntry) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &m) != nil {
		return text
	}
	if op.Result != nil {
		m["result"] = op.Result
	}
	var ops []contract.OperationEntry
	if raw, ok := m["operations"]; ok && json.Unmarshal(raw, &ops) != nil {
		ops = nil // a strip that does not decode is left as it was sent
	}
	for i := range ops {
		if ops[i].Tool == op.Tool {
			ops[i] = op
			break
		}
	}
	if b, err := json.Marshal(ops); err == nil && ops != nil {
		m["operations"] = b
	}
	b, err := json.Marshal(m)
	if err != nil {
		return text
	}
	return string(b)
}

// deliver reads the strip through QueryBoard, which always runs and is never an
// operation. The gateway counts an outcome as delivered only once a tool result carried
// it; without this, the model's next write after an outcome learned by
// ping would be refused with previous_result_undelivered. It returns that strip.
func (l *Loop) deliver(ctx context.Context) ([]contract.OperationEntry, error) {
	r, err := l.cfg.Gateway.Call(ctx, "QueryBoard", json.RawMessage(`{}`))
	if errors.Is(err, ErrOutcomeUnknown) {
		// A query changes nothing; the next write's refusal delivers the outcome instead.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deliver outcomes: %w", err)
	}
	var head answerHead
	if json.Unmarshal([]byte(r.Text), &head) != nil {
		// Not a tool result (a plain-text refusal): no strip was delivered; as with an
		// unknown outcome, the next write's refusal delivers it instead.
		return nil, nil
	}
	return head.Operations, nil
}

// modelForm is the strip entry of op as the model reads it, without the host-only
// ordinal: the delivering QueryBoard's entry for the same call when it has one (it
// carries the result while unacknowledged), else op's own.
func modelForm(op contract.OperationSlot, entries []contract.OperationEntry) contract.OperationEntry {
	for _, e := range entries {
		if e.Tool == op.Tool && e.State == op.State && e.At.Equal(op.At) && (e.Result != nil || op.Result == nil) {
			return e
		}
	}
	return op.OperationEntry
}

// Wake resumes conversation id because the outcomes it waited for have come: with
// [WakeText] under the name wake (see [Loop.SendTask]). A conversation that watches no
// Operation and has no outcome unread — an earlier wake, or a message, already showed
// them — is not run again: its model has nothing new to read, and the outcome is its last
// answer.
func (l *Loop) Wake(ctx context.Context, id, wake string) (Outcome, error) {
	c, err := l.cfg.Store.Load(WithConversation(ctx, id), id)
	if err != nil {
		return Outcome{}, err
	}
	if len(c.Watching) == 0 && len(c.Unread) == 0 && c.InFlight == nil && len(c.Messages) > 0 {
		if last := c.Messages[len(c.Messages)-1]; last.Role == RoleAssistant && len(last.Calls) == 0 {
			return Outcome{Final: last.Text, Stop: StopEnd}, nil
		}
	}
	return l.SendTask(ctx, id, wake, WakeText)
}

// WakeText is the user message that resumes a conversation once the outcomes it waited
// for have come; the outcomes follow it, as unread outcomes do.
const WakeText = "[docket: the operations you were waiting for have an outcome now; read it below and go on]"

// Waiter waits for the outcomes of an Agent's Operations: the authority's long-poll,
// which follows its event log (POST /api/v1/operations/wait). It reports whether each of
// ws had one (settled, or needs a person) before wait passed.
type Waiter interface {
	WaitOperations(ctx context.Context, ws []Pending, wait time.Duration) (bool, error)
}

// Await waits until each of pending has an outcome the model can be shown (settled, or
// needs a person), or bound passes: through the Waiter when the loop has one, which
// wakes on the authority's events; else by asking the strip every PingEvery. It reports
// whether all did; it sends nothing. The strip stays the source of the outcomes
// themselves, which the next Send shows.
func (l *Loop) Await(ctx context.Context, pending []Pending, bound time.Duration) (bool, error) {
	if l.cfg.Waiter != nil {
		return l.awaitEvents(ctx, pending, bound)
	}
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	tick := time.NewTicker(l.cfg.PingEvery)
	defer tick.Stop()
	for {
		strip, err := l.cfg.Gateway.Strip(ctx)
		if err != nil {
			return false, fmt.Errorf("wait for outcomes: ask the strip: %w", err)
		}
		done := true
		for _, p := range pending {
			if op, ok := find(strip, p); !ok || !reported(op.State) {
				done = false
			}
		}
		if done {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("wait for outcomes: %w", ctx.Err())
		case <-deadline.C:
			return false, nil
		case <-tick.C:
		}
	}
}

// awaitEvents is Await through the Waiter, in long-polls of at most
// [contract.MaxTaskClaimWait].
func (l *Loop) awaitEvents(ctx context.Context, pending []Pending, bound time.Duration) (bool, error) {
	deadline := time.Now().Add(bound)
	for {
		left := time.Until(deadline)
		ok, err := l.cfg.Waiter.WaitOperations(ctx, pending, max(min(left, contract.MaxTaskClaimWait), 0))
		if err != nil {
			return false, fmt.Errorf("wait for outcomes: %w", err)
		}
		if ok || time.Until(deadline) <= 0 {
			return ok, nil
		}
	}
}

// Awaited is one call whose Operation has no outcome the model was shown yet: it waits for
// a decision, or was still running when its answer was given.
type Awaited struct {
	CallID string
	contract.OperationEntry
}

// Awaiting lists the calls answered by the last message of msgs whose Operations the
// model was shown waiting (their answer's strip entry not settled and not handed to a
// person), less those whose outcome that message's text already carries (an unread
// outcome shown before the model's turn). A model with nothing else to do ends its turn
// on them; the runtime wakes the conversation with their outcomes (docs/workbench.md).
// It reads what the model reads, the same way the loop does (ownOperation, reported).
func Awaiting(msgs []Message) []Awaited {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != RoleUser || len(msgs[n-1].Results) == 0 {
		return nil
	}
	calls := map[string]ToolCall{}
	for _, c := range msgs[n-2].Calls {
		calls[c.ID] = c
	}
	shown := shownOutcomes(msgs[n-1].Text)
	var out []Awaited
	for _, res := range msgs[n-1].Results {
		call, ok := calls[res.CallID]
		if !ok || shown[res.CallID] {
			continue
		}
		var head answerHead
		if json.Unmarshal([]byte(res.Content), &head) != nil {
			continue // cut or not a tool result: nothing says it waits
		}
		if op, ok := ownOperation(call, head); ok && !reported(op.State) {
			out = append(out, Awaited{CallID: call.ID, OperationEntry: op})
		}
	}
	return out
}

// shownOutcomes reads the outcome lines ([describeOutcome]) in a user message's text and
// returns the calls they report.
func shownOutcomes(text string) map[string]bool {
	shown := map[string]bool{}
	for line := range strings.Lines(text) {
		var o struct {
			CallID string                  `json:"callId"`
			State  contract.OperationState `json:"state"`
		}
		if json.Unmarshal([]byte(line), &o) == nil && o.CallID != "" && reported(o.State) {
			shown[o.CallID] = true
		}
	}
	return shown
}
