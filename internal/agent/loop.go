package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Loop defaults.
const (
	DefaultHoldWait  = 5 * time.Minute // how long a running call is kept open for the model
	DefaultPingEvery = 2 * time.Second // how often the strip is asked while a call is kept open
)

// LoopConfig is what a [Loop] works with.
type LoopConfig struct {
	Provider Provider          // the model; required
	Gateway  Gateway           // the Agent's one MCP connection; required
	Store    ConversationStore // where conversations are kept; required
	Meter    *Meter            // the run's budget, and the model's price; nil: unbounded
	// ConversationBudget bounds each conversation over all its runs, counted in the
	// conversation's Spent (priced by Meter); the zero Budget is unbounded.
	ConversationBudget Budget
	Hook               Hook // sees each call sent to the gateway; nil: none
	// Budgets are the authority's budgets, asked before each model request (a request
	// they refuse is not sent) and charged after it; nil: none.
	Budgets Holder
	// Materials shows the text a material read returned by reference, when its
	// disclosure is allowed (docs/materials.md); nil: every such text is withheld.
	Materials Materials

	// Bounder cuts tool results shown to the model; a nil Sink is replaced by a
	// [MemoryArtifacts], whose refs the loop serves itself.
	Bounder Bounder

	// ContextWindow is the model's context window in tokens ([ContextWindow] finds it);
	// nearing it, older turns are compacted into a summary the model writes
	// (compact.go). 0: never compacted.
	ContextWindow int

	Instructions string        // the operator's standing instructions, after the system prompt
	Skills       []Skill       // the workspace's skills, listed after them and read with ReadSkill
	MaxTokens    int           // per model answer; 0: the provider's default
	HoldWait     time.Duration // how long a running call is kept open; 0: [DefaultHoldWait]
	PingEvery    time.Duration // strip polling while a call is kept open; 0: [DefaultPingEvery]

	// Waiter, when set, waits for outcomes by following the authority's events; nil: the
	// loop asks the strip every PingEvery.
	Waiter Waiter

	Now     func() time.Time               // the clock of a turn's latency; nil: time.Now
	OnDelta func(Delta)                    // streamed model output, for progress; may be nil
	OnTool  func(c ToolCall, r ToolResult) // each answered call, for progress; may be nil
	Logger  *slog.Logger                   // nil: discard
}

// Loop is the governed loop of one Agent: it serves conversations one
// at a time over the Agent's one MCP connection, offers the model exactly the gateway's
// six tools, runs a turn's calls in order, keeps a running call open while it asks the
// strip, never re-sends a call, and shows the model the outcomes of its writes it has not
// read before it decides again. It is safe for concurrent use; conversations queue.
type Loop struct {
	cfg   LoopConfig
	local *MemoryArtifacts // set when the Bounder had no sink
	log   *slog.Logger

	// mu serves one conversation at a time: the gateway serves an Agent's calls serially,
	// and the unread outcomes of one conversation must not be claimed by another.
	mu sync.Mutex
}

// Outcome is how a conversation's run ended.
type Outcome struct {
	Final string     // the model's final text
	Stop  StopReason // why the model ended its last turn
	Spent Spent      // what the run used, when it has a Meter
	// Pending are the conversation's writes whose outcome had not come when the run
	// ended (waiting for a decision, running past the hold bound): the work is not done.
	Pending []Pending
}

// NewLoop checks cfg and returns a Loop.
func NewLoop(cfg LoopConfig) (*Loop, error) {
	if cfg.Provider == nil || cfg.Gateway == nil || cfg.Store == nil {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the loop needs a provider, a gateway and a conversation store")
	}
	if err := cfg.ConversationBudget.Validate(); err != nil {
		return nil, err
	}
	if cfg.HoldWait <= 0 {
		cfg.HoldWait = DefaultHoldWait
	}
	if cfg.PingEvery <= 0 {
		cfg.PingEvery = DefaultPingEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := &Loop{cfg: cfg, log: cfg.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.log = l.log.With("component", "agent.loop")
	if cfg.Bounder.Sink == nil {
		l.local = &MemoryArtifacts{}
		l.cfg.Bounder.Sink = l.local
	}
	return l, nil
}

// Send adds text (when not empty) to conversation id as the user's words, creating the
// conversation when it does not exist, and runs it until the model gives a final
// answer. With empty text it resumes a conversation where it stopped: a call that was in
// flight when the runtime stopped is reported as unknown and never re-sent.
//
// Errors: a budget reached, the run's or the conversation's, is a *[BudgetError] (the
// conversation is kept and can be resumed with a larger budget; a store that is a
// [BudgetRecorder] records it as an event); a gateway error that ends the session (credential
// rejected, connection replaced) is returned wrapped; ctx's error when ctx ends.
func (l *Loop) Send(ctx context.Context, id, text string) (Outcome, error) {
	return l.SendTask(ctx, id, "", text)
}

// SendTask is [Loop.Send] for the authority's task named task: the conversation keeps the
// names of the tasks whose text it holds, so a task taken again (its runtime stopped
// before it reported) resumes the conversation where it stopped rather than adding its
// text twice. An empty task is Send.
func (l *Loop) SendTask(ctx context.Context, id, task, text string) (Outcome, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx = WithConversation(ctx, id)
	c, err := l.cfg.Store.Load(ctx, id)
	switch {
	case errors.Is(err, ErrNoConversation):
		if strings.TrimSpace(text) == "" {
			return Outcome{}, contract.Errorf(contract.CodeConversation, "conversation %s does not exist and no task was given; give a task to start it", id)
		}
		c = &Conversation{ID: id}
	case err != nil:
		return Outcome{}, err
	}
	if task != "" && slices.Contains(c.Tasks, task) {
		text = "" // the conversation has it: resume where it stopped
	} else if task != "" {
		c.Tasks = append(c.Tasks, task)
	}
	if text = strings.TrimSpace(text); text != "" {
		if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == RoleUser {
			c.Messages[n-1].Text = joinText(c.Messages[n-1].Text, text)
		} else if n > 0 && len(c.Messages[n-1].Calls) > 0 {
			// The turn still has calls to answer; the words follow their results.
			c.Unread = append(c.Unread, "The user says: "+text)
		} else {
			c.Messages = append(c.Messages, Message{Role: RoleUser, Text: text})
		}
	}
	if len(c.Messages) == 0 {
		return Outcome{}, contract.Errorf(contract.CodeConversation, "conversation %s is empty; give a task to start it", id)
	}
	if err := l.save(ctx, c); err != nil {
		return Outcome{}, err
	}
	out, err := l.run(ctx, c)
	out.Pending = append([]Pending(nil), c.Watching...)
	if l.cfg.Meter != nil {
		out.Spent = l.cfg.Meter.Spent()
	}
	if be, ok := errors.AsType[*BudgetError](err); ok {
		l.recordBudget(ctx, c.ID, be)
	}
	return out, err
}

// recordBudget records a budget that stopped a run, when the store can.
// A failure to record is logged: the run stops with its budget error either way.
func (l *Loop) recordBudget(ctx context.Context, id string, be *BudgetError) {
	r, ok := l.cfg.Store.(BudgetRecorder)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.RecordBudget(ctx, id, be); err != nil {
		l.log.Warn("budget not recorded", logConversation, id, logErr, err)
	}
}

// spend counts one model turn's usage against the run and the conversation, and returns
// the first budget it reached: the run's, then the conversation's.
func (l *Loop) spend(c *Conversation, u Usage) error {
	var price Price
	var run error
	if l.cfg.Meter != nil {
		price = l.cfg.Meter.price
		run = l.cfg.Meter.Record(u)
	}
	c.Spent.add(u, price)
	if run != nil {
		return run
	}
	if be := l.cfg.ConversationBudget.check(ScopeConversation, c.Spent); be != nil {
		return be
	}
	return nil
}

func (l *Loop) run(ctx context.Context, c *Conversation) (Outcome, error) {
	if last := c.Messages[len(c.Messages)-1]; last.Role == RoleAssistant && len(last.Calls) > 0 {
		// A turn was being answered when the runtime stopped.
		stop := ""
		if p := c.InFlight; p != nil {
			if isWrite(p.Tool) {
				c.Partial = append(c.Partial, ToolResult{CallID: p.CallID, IsError: true, Content: notice(contract.CodeOutcomeUnknown,
					"the runtime stopped while this call was in flight; it was not sent again, and its outcome will be shown to you as soon as the gateway's strip has it")})
				c.Watching = append(c.Watching, *p)
				stop = "the runtime restarted while an earlier call of this turn was in flight"
			} else {
				c.Partial = append(c.Partial, ToolResult{CallID: p.CallID, IsError: true, Content: notice(contract.CodeOutcomeUnknown,
					"the runtime stopped before this read was answered; it changed nothing; call it again if you still need it")})
			}
			c.InFlight = nil
		}
		if err := l.answer(ctx, c, last.Calls, stop); err != nil {
			return Outcome{}, err
		}
	}
	tools := l.cfg.Gateway.Tools()
	if len(l.cfg.Skills) > 0 {
		tools = append(slices.Clone(tools), readSkillDef)
	}
	system := withSkills(SystemPrompt(l.cfg.Instructions), l.cfg.Skills)
	for {
		last := c.Messages[len(c.Messages)-1]
		if last.Role == RoleAssistant {
			return Outcome{Final: last.Text, Stop: StopEnd}, nil
		}
		if err := l.showUnread(ctx, c); err != nil {
			return Outcome{}, err
		}
		if cancelled(ctx) {
			return Outcome{}, l.stopCancelled(ctx, c)
		}
		if be := l.cfg.ConversationBudget.check(ScopeConversation, c.Spent); be != nil {
			// An earlier run spent the conversation's budget: no further model turn.
			return Outcome{}, be
		}
		if err := l.fit(ctx, c, func() Request {
			return Request{System: system, Messages: c.Messages, Tools: tools, MaxTokens: l.cfg.MaxTokens}
		}); err != nil {
			return Outcome{}, err
		}
		shown, err := revealMaterials(ctx, l.cfg.Materials, c.Messages)
		if err != nil {
			return Outcome{}, fmt.Errorf("model turn %d of conversation %s: %w", countAssistant(c.Messages)+1, c.ID, err)
		}
		req := Request{System: system, Messages: shown, Tools: tools, MaxTokens: l.cfg.MaxTokens}
		sent, err := json.Marshal(req)
		if err != nil {
			return Outcome{}, fmt.Errorf("model turn %d of conversation %s: encode request: %w", countAssistant(c.Messages)+1, c.ID, err)
		}
		hold, err := l.reserve(ctx, c.ID, len(sent))
		if err != nil {
			return Outcome{}, err
		}
		began := l.cfg.Now()
		turnCtx, endTurn := turnContext(ctx)
		resp, err := l.cfg.Provider.Turn(turnCtx, req, l.cfg.OnDelta)
		endTurn()
		l.charge(ctx, c.ID, hold, resp.Usage, err)
		if err != nil && cancelled(ctx) {
			return Outcome{}, l.stopCancelled(ctx, c)
		}
		if err != nil {
			if pe, ok := errors.AsType[*ProviderError](err); ok {
				// The turn writes no message: the conversation keeps each attempt of its
				// request, as a turn that succeeded after retries keeps them on its message.
				c.Failed = keepFailed(c.Failed, failedTurn(l.cfg.Provider.Name(), l.cfg.Now(), digest(sent), len(c.Messages), pe))
				var berr error
				if pe.Usage != (Usage{}) {
					berr = l.spend(c, pe.Usage)
				}
				if serr := l.save(ctx, c); serr != nil {
					return Outcome{}, serr
				}
				if berr != nil {
					return Outcome{}, berr
				}
			}
			return Outcome{}, fmt.Errorf("model turn %d of conversation %s: %w", countAssistant(c.Messages)+1, c.ID, err)
		}
		budget := l.spend(c, resp.Usage)
		msg := resp.Message
		msg.Role, msg.Results = RoleAssistant, nil
		msg.Turn = &Turn{Model: l.cfg.Provider.Name(), RequestID: resp.RequestID, Stop: resp.Stop, Usage: resp.Usage,
			LatencyMS: l.cfg.Now().Sub(began).Milliseconds(), Sent: digest(sent), Retries: resp.Retries}
		if msg.Text == "" && len(msg.Calls) == 0 {
			msg.Text = "(the model gave an empty answer)"
		}
		c.Messages = append(c.Messages, msg)
		c.Context = counted(resp.Usage, len(c.Messages))
		if err := l.save(ctx, c); err != nil {
			return Outcome{}, err
		}
		if len(msg.Calls) == 0 {
			// The model finished; a budget reached by its last answer stopped nothing.
			return Outcome{Final: msg.Text, Stop: resp.Stop}, nil
		}
		if budget != nil {
			// The budget stops the run: the calls of this last turn are not sent.
			if err := l.answer(ctx, c, msg.Calls, "the run's budget is spent"); err != nil {
				return Outcome{}, err
			}
			return Outcome{Final: msg.Text, Stop: resp.Stop}, budget
		}
		if err := l.answer(ctx, c, msg.Calls, ""); err != nil {
			return Outcome{}, err
		}
	}
}

// answer runs calls in order from the first one without a result, and closes the turn
// with their results. Once stop is set (a write-gate refusal, a lost answer, a restart),
// the rest are answered as not executed and never sent.
func (l *Loop) answer(ctx context.Context, c *Conversation, calls []ToolCall, stop string) error {
	for _, call := range calls[len(c.Partial):] {
		var res ToolResult
		if stop == "" && cancelled(ctx) {
			stop = cancelStop
		}
		switch {
		case stop != "":
			res = ToolResult{CallID: call.ID, IsError: true, Content: notice(contract.CodeNotExecuted, "this call was not sent: "+stop+"; read the results above and propose it again if it is still needed")}
		case call.Name == ReadSkillTool && len(l.cfg.Skills) > 0:
			// A read of the operator's own files on this machine: no gateway call, nothing
			// on the Board, so neither the hook nor the write gate sees it.
			text, err := readSkill(l.cfg.Skills, call.Arguments)
			if err != nil {
				res = ToolResult{CallID: call.ID, IsError: true, Content: l.errorNotice(c.ID, call, err)}
				break
			}
			if res, err = l.bound(ctx, call, text, false); err != nil {
				return err
			}
		case !IsGovernedTool(call.Name):
			res = ToolResult{CallID: call.ID, IsError: true, Content: notice(contract.CodeToolNotOffered,
				fmt.Sprintf("%q is not one of your tools and was not sent; use one of %s", call.Name, strings.Join(ToolNames(), ", ")))}
		default:
			if refusal := l.before(ctx, c.ID, call); refusal != "" {
				res = ToolResult{CallID: call.ID, IsError: true, Content: notice(contract.CodeHookRefused, "a pre-tool hook refused this call and it was not sent: "+refusal)}
				break
			}
			var err error
			res, stop, err = l.call(ctx, c, call)
			if err != nil {
				return err
			}
			l.after(ctx, c.ID, call, res)
		}
		c.InFlight = nil
		c.Partial = append(c.Partial, res)
		if err := l.save(ctx, c); err != nil {
			return err
		}
		if l.cfg.OnTool != nil {
			l.cfg.OnTool(call, res)
		}
	}
	c.Messages = append(c.Messages, Message{Role: RoleUser, Results: c.Partial})
	c.Partial = nil
	return l.save(ctx, c)
}

// before asks the hook about call and returns its refusal ("" to send the call). A hook
// that fails refuses: a call it could not judge is not sent.
func (l *Loop) before(ctx context.Context, id string, call ToolCall) string {
	if l.cfg.Hook == nil {
		return ""
	}
	refusal, err := l.cfg.Hook.BeforeTool(ctx, id, call)
	if err != nil {
		l.log.Warn("pre-tool hook failed", logConversation, id, logCall, call.ID, logTool, call.Name, logErr, err)
		return "the hook failed, so the call was not judged"
	}
	return refusal
}

// after shows the hook the result of a sent call.
func (l *Loop) after(ctx context.Context, id string, call ToolCall, res ToolResult) {
	if l.cfg.Hook == nil {
		return
	}
	if err := l.cfg.Hook.AfterTool(ctx, id, call, res); err != nil {
		l.log.Warn("post-tool hook failed", logConversation, id, logCall, call.ID, logTool, call.Name, logErr, err)
	}
}

// answerHead is the part of a tool result the loop reads.
type answerHead struct {
	ErrorCode  contract.Code             `json:"errorCode"`
	Operations []contract.OperationEntry `json:"operations"`
}

// call sends one call and returns what the model is shown, and why the rest of the
// turn must stop ("" to go on).
func (l *Loop) call(ctx context.Context, c *Conversation, call ToolCall) (ToolResult, string, error) {
	if call.Name == "ReadArtifact" && l.local != nil {
		if text, ok, err := l.local.read(call.Arguments); ok {
			if err != nil {
				return ToolResult{CallID: call.ID, IsError: true, Content: l.errorNotice(c.ID, call, err)}, "", nil
			}
			res, err := l.bound(ctx, call, text, false)
			return res, "", err
		}
	}
	// InFlight is saved before the call is sent and cleared by answer together with the
	// call's result, so a runtime killed at any point in between never sends it again.
	before := c.LastOrdinal
	c.InFlight = &Pending{CallID: call.ID, Tool: call.Name, After: before}
	if err := l.save(ctx, c); err != nil {
		return ToolResult{}, "", err
	}
	// The call says which View the model holds; an answer dropped below (sent again)
	// never reached the model, so the second call says the same.
	ctx = WithView(ctx, c.View)
	r, err := l.cfg.Gateway.Call(ctx, call.Name, call.Arguments)
	if err == nil && len(c.Watching) == 0 && refusedUndelivered(r.Text) {
		// The unread outcome is not one this conversation waits for: an earlier run of
		// the Agent, or another conversation, left it. The refusal delivered it and ran
		// nothing, so the call is sent once more instead of failing this conversation.
		l.log.Info("an earlier run's outcome delivered; call sent again", logConversation, c.ID, logCall, call.ID, logTool, call.Name)
		r, err = l.cfg.Gateway.Call(ctx, call.Name, call.Arguments)
	}
	if errors.Is(err, ErrOutcomeUnknown) {
		l.log.Warn("call answer lost", logConversation, c.ID, logCall, call.ID, logTool, call.Name)
		if !isWrite(call.Name) {
			// A read changes nothing: there is no outcome to learn and no reason to stop.
			return ToolResult{CallID: call.ID, IsError: true, Content: l.errorNotice(c.ID, call, err)}, "", nil
		}
		c.Watching = append(c.Watching, *c.InFlight)
		return ToolResult{CallID: call.ID, IsError: true, Content: l.errorNotice(c.ID, call, err)}, "the answer to an earlier call of this turn was lost", nil
	}
	if err != nil {
		// The session ended (credential, replacement) or ctx did: InFlight stays saved,
		// so a resumed run reports this call as unknown and never sends it again.
		return ToolResult{}, "", fmt.Errorf("call %s (%s): %w", call.ID, call.Name, err)
	}
	c.LastOrdinal = max(c.LastOrdinal, r.Ordinal)
	text, stop := r.Text, ""
	var head answerHead
	if json.Unmarshal([]byte(r.Text), &head) != nil {
		head = answerHead{} // an answer that does not decode is shown as it is, and stops nothing
	}
	if head.ErrorCode == contract.CodeOperationRunning || head.ErrorCode == contract.CodePreviousResultUndelivered {
		stop = fmt.Sprintf("the gateway refused %s with %s", call.Name, head.ErrorCode)
	}
	var opOrdinal int64
	if own, ok := ownOperation(call, head); ok {
		opOrdinal = r.Ordinal
		p := Pending{CallID: call.ID, Tool: call.Name, Ordinal: r.Ordinal, After: before}
		// A docket.ask runs until another Agent's task reports (docs/agents.md): it is
		// watched, not held, so the model may ask several Agents in one turn.
		if own.State == contract.OpRunning && own.Stage != contract.StageAsked {
			c.InFlight = &p
			if err := l.save(ctx, c); err != nil {
				return ToolResult{}, "", err
			}
			held, err := l.hold(ctx, c, p)
			if err != nil {
				return ToolResult{}, "", err
			}
			if held.State != contract.OpRunning {
				entries, err := l.deliver(ctx)
				if err != nil {
					return ToolResult{}, "", err
				}
				text = withOutcome(r.Text, modelForm(held, entries))
			}
			own = held.OperationEntry
		}
		if !reported(own.State) {
			// Still running at the bound, or waiting for a decision: the model is told
			// now and shown the outcome when it comes; nothing is cancelled. The turn's
			// other calls are not sent: the gateway's write gate would refuse them while
			// this one is open, and the model decides again once it has the outcome
			// (docs/mcp.md, one call at a time).
			c.Watching = append(c.Watching, p)
			// A docket.ask is watched and does not stop the turn: the gateway's write gate
			// lets an Agent's other writes through while its asks run (docs/agents.md).
			if own.Stage != contract.StageAsked {
				stop = fmt.Sprintf("an earlier call of this turn (%s %s) is %s", call.Name, call.ID, heldWords(own.State))
			}
		}
	}
	res, err := l.bound(ctx, call, text, r.IsError)
	res.Ordinal = opOrdinal
	switch {
	case res.Content != text:
		// Cut: the model holds only part of this View, so the next answer sends it whole.
		c.View = contract.Digest{}
	case r.ViewDigest != (contract.Digest{}):
		c.View = r.ViewDigest
	}
	return res, stop, err
}

// heldWords says what an open Operation waits on, for a call not sent after it.
func heldWords(s contract.OperationState) string {
	if s == contract.OpWaitingForDecision {
		return "waiting for a decision"
	}
	return "still running"
}

// refusedUndelivered reports whether a call's answer refused it with
// previous_result_undelivered.
func refusedUndelivered(text string) bool {
	var head answerHead
	return json.Unmarshal([]byte(text), &head) == nil && head.ErrorCode == contract.CodePreviousResultUndelivered
}

// isWrite reports whether tool's calls become operations: all but QueryBoard and
// ReadArtifact.
func isWrite(tool string) bool {
	spec, ok := contract.Tool(tool)
	return ok && spec.Write
}

// ownOperation finds the call's own operation in its answer: the newest entry of the
// strip for the same tool. QueryBoard and refused calls have none.
func ownOperation(call ToolCall, head answerHead) (contract.OperationEntry, bool) {
	if !isWrite(call.Name) || head.ErrorCode != "" {
		return contract.OperationEntry{}, false
	}
	for _, op := range head.Operations {
		if op.Tool == call.Name {
			return op, true
		}
	}
	return contract.OperationEntry{}, false
}

// bound cuts text to what the model is shown.
func (l *Loop) bound(ctx context.Context, call ToolCall, text string, isError bool) (ToolResult, error) {
	shown, err := l.cfg.Bounder.Bound(ctx, call.Name, call.ID, []byte(text))
	if err != nil {
		return ToolResult{}, fmt.Errorf("bound the result of %s: %w", call.ID, err)
	}
	return ToolResult{CallID: call.ID, Content: shown, IsError: isError}, nil
}

func (l *Loop) save(ctx context.Context, c *Conversation) error {
	// A save that must land even while ctx ends: losing InFlight would allow a re-send.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := l.cfg.Store.Save(ctx, c); err != nil {
		return fmt.Errorf("conversation %s: %w", c.ID, err)
	}
	return nil
}

// notice is a runtime-made tool result in the gateway's answer shape: a refusal of a
// call that was never sent, so nothing ran.
func notice(code contract.Code, teaching string) string {
	notRun := false
	return toolResultText(contract.ToolResult{ErrorCode: code, Teaching: teaching, RequestExecuted: &notRun})
}

// errorNotice is notice for err, which carries its code and teaching when it is a
// *contract.Error. Any other error is not the model's to read: it is logged, and the model
// is told what it can do. RequestExecuted is left out when the outcome is unknown.
func (l *Loop) errorNotice(conversation string, call ToolCall, err error) string {
	ce, ok := errors.AsType[*contract.Error](err)
	if !ok {
		l.log.Warn("call failed in the runtime", logConversation, conversation, logCall, call.ID, logTool, call.Name, logErr, err)
		ce = &contract.Error{Code: contract.CodeInternal, Teaching: "the runtime could not complete this call, and its log holds the cause; do not assume it ran, and ask the person running the agent before you retry it"}
	}
	tr := contract.ToolResult{ErrorCode: ce.Code, Teaching: ce.Teaching}
	if ce.Code != contract.CodeOutcomeUnknown {
		notRun := false
		tr.RequestExecuted = &notRun
	}
	return toolResultText(tr)
}

// toolResultText is tr as the one text block of a tool result.
func toolResultText(tr contract.ToolResult) string {
	b, err := json.Marshal(tr)
	if err != nil {
		// A ToolResult holds only strings, bools and raw JSON the runtime made itself.
		panic(fmt.Sprintf("agent: encode a tool result: %v", err))
	}
	return string(b)
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

func countAssistant(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			n++
		}
	}
	return n
}

// digest is the record's digest of a request as sent: "sha256:<hex>".
func digest(sent []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(sent)) }
