package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// Provider replays a [Script]. It keeps no state: the turn to play is the number of
// assistant messages already in the conversation, and references are resolved from the
// tool results in it, so a resumed conversation continues where it stopped. It is safe
// for concurrent use.
type Provider struct {
	script *Script
	name   string
}

var _ agent.Provider = (*Provider)(nil)

// New returns a Provider for s, which must be valid; name says where it came from
// (usually the file) and appears in [Provider.Name].
func New(s *Script, name string) (*Provider, error) {
	if s == nil {
		return nil, contract.Errorf(contract.CodeScriptInvalid, "no script was given; pass --script FILE")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Provider{script: s, name: name}, nil
}

// Name is "scripted model (no inference): <name>".
func (p *Provider) Name() string { return Banner + ": " + p.name }

// Turn plays the script's next turn. Its text always starts with [Banner]. When a call of
// the turn before is waiting (for a decision, or still running) and its outcome has not
// been shown, Turn ends the turn instead, saying what it waits on ([agent.Awaiting]); the
// next Turn after the outcome is shown plays the script's next turn. Call ids are
// "scripted_<turn>_<call>", counting from 1. A turn past the script's end is a final
// answer saying the script ended. A reference that cannot be resolved (its result is
// missing, not JSON because it was cut, or lacks the path) is a *contract.Error with
// [contract.CodeScriptInvalid]. Usage is always zero: no tokens are spent.
func (p *Provider) Turn(_ context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	if err := req.Validate(); err != nil {
		return agent.Response{}, err
	}
	if onDelta == nil {
		onDelta = func(agent.Delta) {}
	}
	if req.System == agent.CompactionSystem {
		text := summaryText(req.Messages)
		onDelta(agent.Delta{Kind: agent.DeltaText, Text: text})
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: text}, Stop: agent.StopEnd}, nil
	}
	if waits := agent.Awaiting(req.Messages); len(waits) > 0 {
		// As a model's turn would: with a call still waiting there is nothing to go on, so
		// the turn ends and says what it waits on; the runtime wakes the conversation with
		// the outcome, and the script goes on from the turn after the waiting call's.
		text := waitText(waits)
		onDelta(agent.Delta{Kind: agent.DeltaText, Text: text})
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: text}, Stop: agent.StopEnd}, nil
	}
	n := played(req.Messages)
	if n >= len(p.script.Turns) {
		text := fmt.Sprintf("%s: the script has %d turns and all were played; nothing more will be called", Banner, len(p.script.Turns))
		onDelta(agent.Delta{Kind: agent.DeltaText, Text: text})
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: text}, Stop: agent.StopEnd}, nil
	}
	turn := p.script.Turns[n]
	if turn.Final != "" {
		text := Banner + ": " + turn.Final
		onDelta(agent.Delta{Kind: agent.DeltaText, Text: text})
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: text}, Stop: agent.StopEnd}, nil
	}
	results := p.results(req.Messages)
	msg := agent.Message{Role: agent.RoleAssistant, Text: Banner}
	if turn.Say != "" {
		msg.Text += ": " + turn.Say
	}
	onDelta(agent.Delta{Kind: agent.DeltaText, Text: msg.Text})
	for ci, c := range turn.Calls {
		args, err := resolve(c.Arguments, results)
		if err != nil {
			return agent.Response{}, &contract.Error{Code: contract.CodeScriptInvalid,
				Teaching: fmt.Sprintf("%s: turn %d call %d (%s): %v", Banner, n+1, ci+1, c.Tool, err)}
		}
		call := agent.ToolCall{ID: callID(n, ci), Name: c.Tool, Arguments: args}
		msg.Calls = append(msg.Calls, call)
		onDelta(agent.Delta{Kind: agent.DeltaToolCall, Index: ci, ID: call.ID, Name: call.Name})
		onDelta(agent.Delta{Kind: agent.DeltaToolArgs, Index: ci, Text: string(args)})
	}
	return agent.Response{Message: msg, Stop: agent.StopToolUse}, nil
}

// waitPrefix starts the text of a turn the provider ended because a call waits. It is not
// "Banner: ", which starts every scripted turn, so such a turn is never counted as one of
// the script's.
const waitPrefix = Banner + " ends its turn: "

// waitText says what the turn waits on.
func waitText(waits []agent.Awaited) string {
	var b strings.Builder
	b.WriteString(waitPrefix)
	for i, w := range waits {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (call %s) is %s", w.Label, w.CallID, strings.ReplaceAll(string(w.State), "_", " "))
		if w.Decision != "" && w.State == contract.OpWaitingForDecision {
			fmt.Fprintf(&b, " on request %s", w.Decision)
		}
	}
	b.WriteString("; the script goes on when the outcome comes")
	return b.String()
}

// played counts the script's turns msgs hold: its assistant messages but the turns it
// ended because a call waited, and the turns a summary of the runtime replaced.
func played(msgs []agent.Message) int {
	n := 0
	for _, m := range msgs {
		switch {
		case m.Role == agent.RoleAssistant && !isWait(m):
			n++
		case m.Role == agent.RoleUser:
			// A summary this provider wrote names the script's turns it holds, its waits
			// left out; another names the model turns the runtime replaced.
			if sm := summaryForm().FindStringSubmatch(m.Text); sm != nil {
				t, err := strconv.Atoi(sm[1])
				if err == nil {
					n += t
				}
			} else if t, ok := agent.CompactedTurns(m.Text); ok {
				n += t
			}
		}
	}
	return n
}

// summaryForm finds the count of script turns in a summary of summaryText.
var summaryForm = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\n` + regexp.QuoteMeta(Banner) + `: summary of \d+ messages holding (\d+) script turns`)
})

// summaryText is the scripted model's summary of msgs, asked for by the runtime to
// compact a long conversation: deterministic, it names how many of the script's turns
// msgs hold and the calls they made.
func summaryText(msgs []agent.Message) string {
	calls := 0
	for _, m := range msgs {
		calls += len(m.Calls)
	}
	return fmt.Sprintf("%s: summary of %d messages holding %d script turns and %d calls.", Banner, len(msgs), played(msgs), calls)
}

// isWait reports whether m is a turn the provider ended because a call waited.
func isWait(m agent.Message) bool {
	return len(m.Calls) == 0 && strings.HasPrefix(m.Text, waitPrefix)
}

func callID(turn, call int) string { return fmt.Sprintf("scripted_%d_%d", turn+1, call+1) }

// results maps each label to the text of its call's result in the conversation.
func (p *Provider) results(msgs []agent.Message) map[string]*string {
	byID := map[string]string{}
	for _, m := range msgs {
		for _, r := range m.Results {
			byID[r.CallID] = r.Content
		}
	}
	out := map[string]*string{}
	for ti, t := range p.script.Turns {
		for ci, c := range t.Calls {
			if c.As == "" {
				continue
			}
			if text, ok := byID[callID(ti, ci)]; ok {
				out[c.As] = &text
			}
		}
	}
	return out
}

// resolve replaces every reference in args with the value it names.
func resolve(args json.RawMessage, results map[string]*string) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	v, err := decode(args)
	if err != nil {
		return nil, err
	}
	v, err = substitute(v, results)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func substitute(v any, results map[string]*string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if ref, isRef, err := refOf(v); isRef {
			if err != nil {
				return nil, err
			}
			return lookup(ref, results)
		}
		// Sorted, so that of several bad references the same one is reported every time.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			r, err := substitute(v[k], results)
			if err != nil {
				return nil, err
			}
			v[k] = r
		}
	case []any:
		for i, e := range v {
			r, err := substitute(e, results)
			if err != nil {
				return nil, err
			}
			v[i] = r
		}
	}
	return v, nil
}

// lookup follows ref ("label.a.0.b") into the JSON of the labelled call's result.
func lookup(ref string, results map[string]*string) (any, error) {
	segs := strings.Split(ref, ".")
	text := results[segs[0]]
	if text == nil {
		return nil, fmt.Errorf("$ref %q: the call labelled %s has no result in the conversation yet", ref, segs[0])
	}
	cur, err := decode([]byte(*text))
	if err != nil {
		return nil, fmt.Errorf("$ref %q: the result of %s is not JSON (it may have been cut to the output bound): %v", ref, segs[0], err)
	}
	for i, seg := range segs[1:] {
		at := strings.Join(segs[:i+1], ".")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				return nil, fmt.Errorf("$ref %q: %s has no field %q", ref, at, seg)
			}
			cur = next
		case []any:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(c) {
				return nil, fmt.Errorf("$ref %q: %s is a list of %d; %q is not an index in it", ref, at, len(c), seg)
			}
			cur = c[idx]
		default:
			return nil, fmt.Errorf("$ref %q: %s is a scalar and has no field %q", ref, at, seg)
		}
	}
	return cur, nil
}
