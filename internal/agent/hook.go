package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Hook sees the loop's governed tool calls. The loop calls BeforeTool for
// each call it is about to send to the gateway (not for calls it answers itself because
// the turn stopped or the tool is not one of the six), and AfterTool with the bounded
// result the model is about to be shown. Calls of one conversation come one at a time.
type Hook interface {
	// BeforeTool may refuse call locally: a non-empty refusal keeps the call from being
	// sent, and the model is shown it as the call's result with code hook_refused. An
	// error refuses the call too (a hook that cannot decide does not let a call through);
	// the loop logs it and goes on with the turn.
	BeforeTool(ctx context.Context, conversation string, call ToolCall) (refusal string, err error)
	// AfterTool sees the result the model will be shown. Its error is logged; the call
	// has happened and its result stands.
	AfterTool(ctx context.Context, conversation string, call ToolCall, res ToolResult) error
}

// HookFuncs is a [Hook] of two functions; a nil one allows every call or sees nothing.
type HookFuncs struct {
	Before func(ctx context.Context, conversation string, call ToolCall) (string, error)
	After  func(ctx context.Context, conversation string, call ToolCall, res ToolResult) error
}

var (
	_ Hook = HookFuncs{}
	_ Hook = CommandHook{}
)

// BeforeTool calls Before.
func (h HookFuncs) BeforeTool(ctx context.Context, conversation string, call ToolCall) (string, error) {
	if h.Before == nil {
		return "", nil
	}
	return h.Before(ctx, conversation, call)
}

// AfterTool calls After.
func (h HookFuncs) AfterTool(ctx context.Context, conversation string, call ToolCall, res ToolResult) error {
	if h.After == nil {
		return nil
	}
	return h.After(ctx, conversation, call, res)
}

// DefaultHookTimeout bounds one run of a [CommandHook].
const DefaultHookTimeout = 10 * time.Second

// HookEvent is the JSON a [CommandHook] reads on stdin.
type HookEvent struct {
	Phase        string          `json:"phase"` // "pre" or "post"
	Conversation string          `json:"conversation"`
	CallID       string          `json:"callId"`
	Tool         string          `json:"tool"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Result       *ToolResult     `json:"result,omitempty"` // post only: the bounded result
}

// HookVerdict is what a [CommandHook] may print on stdout in the pre phase; empty output
// allows the call.
type HookVerdict struct {
	Refuse string `json:"refuse"` // non-empty: the call is not sent, and the model reads this
}

// CommandHook is a [Hook] that runs a program for each call with a [HookEvent] on stdin.
// In the pre phase it allows the call by exiting 0 with no output, and refuses it by
// printing a [HookVerdict]; any other exit refuses the call. In the post phase its output
// is ignored. The program runs without the model key and agent token in its environment.
type CommandHook struct {
	Argv    []string      // program and arguments; required
	Timeout time.Duration // per run; 0: [DefaultHookTimeout]
}

// BeforeTool runs the program in the pre phase.
func (h CommandHook) BeforeTool(ctx context.Context, conversation string, call ToolCall) (string, error) {
	out, err := h.run(ctx, HookEvent{Phase: "pre", Conversation: conversation, CallID: call.ID, Tool: call.Name, Arguments: call.Arguments})
	if err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "", nil
	}
	var v HookVerdict
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return "", contract.Errorf(contract.CodeHookRefused, "the pre-tool hook printed something other than {\"refuse\": \"reason\"} or nothing")
	}
	return v.Refuse, nil
}

// AfterTool runs the program in the post phase.
func (h CommandHook) AfterTool(ctx context.Context, conversation string, call ToolCall, res ToolResult) error {
	_, err := h.run(ctx, HookEvent{Phase: "post", Conversation: conversation, CallID: call.ID, Tool: call.Name, Arguments: call.Arguments, Result: &res})
	return err
}

// maxHookOutput bounds what a hook may print.
const maxHookOutput = 64 << 10

func (h CommandHook) run(ctx context.Context, ev HookEvent) ([]byte, error) {
	if len(h.Argv) == 0 {
		return nil, contract.Errorf(contract.CodeModelConfig, "the hook command is empty; pass a program")
	}
	in, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode hook event: %w", err)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Argv[0], h.Argv[1:]...)
	cmd.Env = hookEnv(os.Environ())
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxHookOutput, 1<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s hook %s: %w: %s", ev.Phase, h.Argv[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// agentTokenEnv is where the runtime finds the Agent's token (mcpclient.TokenEnv, which
// imports this package).
const agentTokenEnv = "DOCKET_AGENT_TOKEN"

// hookEnv is env without the secrets the runtime holds: a hook is outside code.
func hookEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == KeyEnv || name == agentTokenEnv {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
