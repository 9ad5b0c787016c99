package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
)

// taskCmd posts and reads the tasks and messages of Agents' conversations, which their
// runtimes take from the authority.
type taskCmd struct {
	Post    taskPostCmd    `cmd:"" help:"Post a task for an Agent; its runtime (docket agent serve) takes it by long-poll."`
	Message taskMessageCmd `cmd:"" help:"Add a message to an Agent's conversation; its runtime takes it like a task."`
	List    taskListCmd    `cmd:"" help:"List the project's tasks and messages with their state."`
	Show    taskShowCmd    `cmd:"" help:"Show one task: its state, what it waits on, its result, the Cases it closed, and its model turns that were retried or failed."`
	Cancel  taskCancelCmd  `cmd:"" help:"Cancel a task: its runtime sends no further model request or tool call; admitted Operations still settle."`
	Tree    taskTreeCmd    `cmd:"" help:"Show who asked whom: a task's tree of docket.ask tasks, with states."`
}

type taskPostCmd struct {
	clientFlags
	Agent        string `help:"The Agent the task is for (a name or an id)." required:""`
	Conversation string `help:"The conversation to start or continue (default: a new one)."`
	CaseType     string `help:"Pin the conversation's work to this Case Type (with --key): the authority refuses its calls on any other." name:"case-type"`
	Key          string `help:"The pinned Case's business key: a JSON object, or name=value pairs separated by commas."`
	Case         string `help:"A Case to bring into the conversation's focus."`
	ClientKey    string `help:"An idempotency key: posting again with the same key and task returns the task already posted." name:"client-key"`
	Text         string `arg:"" help:"The task, in words for the Agent."`
}

func (c *taskPostCmd) Run(ctx context.Context, e *env) error {
	key, err := parseKey(c.Key)
	if err != nil {
		return &usageError{err: err}
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	t, err := cl.api.PostTask(ctx, c.Project, c.Agent, contract.TaskRequest{Text: c.Text, Conversation: c.Conversation,
		CaseType: c.CaseType, BusinessKey: key, CaseID: contract.CaseID(c.Case), ClientKey: c.ClientKey})
	if err = credential(err); err != nil {
		return err
	}
	return printTask(e, c.json(), t)
}

type taskMessageCmd struct {
	clientFlags
	Agent        string `help:"The Agent whose conversation it is (a name or an id)." required:""`
	Conversation string `help:"The conversation." required:""`
	ClientKey    string `help:"An idempotency key: posting again with the same key and text returns the message already posted." name:"client-key"`
	Text         string `arg:"" help:"The message."`
}

func (c *taskMessageCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	t, err := cl.api.PostMessage(ctx, c.Project, c.Agent, c.Conversation, contract.MessageRequest{Text: c.Text, ClientKey: c.ClientKey})
	if err = credential(err); err != nil {
		return err
	}
	return printTask(e, c.json(), t)
}

type taskListCmd struct {
	clientFlags
	Agent string `help:"Only this Agent's tasks (a name or an id)."`
}

func (c *taskListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	ts, err := cl.api.Tasks(ctx, c.Project, c.Agent)
	if err = credential(err); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, ts)
	}
	rows := make([][]string, 0, len(ts))
	for _, t := range ts {
		rows = append(rows, []string{string(t.ID), string(t.Agent), string(t.Conversation), string(t.Kind), string(t.State),
			t.PostedAt.Format(time.RFC3339), runner.Clip(t.Text, 48)})
	}
	return writeList(e, []string{"task", "agent", "conversation", "kind", "state", "posted", "text"}, rows,
		"no tasks in project "+c.Project+"; docket task post --agent NAME TEXT posts one")
}

type taskShowCmd struct {
	clientFlags
	ID string `arg:"" help:"The task's id (docket task list shows them)."`
}

func (c *taskShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	t, err := cl.api.Task(ctx, c.Project, c.ID)
	if err = credential(err); err != nil {
		return err
	}
	if err := printTask(e, c.json(), t); err != nil || c.json() {
		return err
	}
	return writeAttempts(ctx, e, cl, c.Project, t)
}

// printTask prints t as JSON or as lines a person reads.
func printTask(e *env, asJSON bool, t contract.Task) error {
	if asJSON {
		return printJSON(e.Stdout, t)
	}
	return writeTask(e.Stdout, t)
}

func writeTask(w io.Writer, t contract.Task) error {
	var b strings.Builder
	fmt.Fprintf(&b, "task %s (%s) for agent %s in conversation %s: %s", t.ID, t.Kind, t.Agent, t.Conversation, t.State)
	if t.Attempt > 0 {
		fmt.Fprintf(&b, " (attempt %d)", t.Attempt)
	}
	b.WriteString("\n")
	if t.CaseType != "" {
		fmt.Fprintf(&b, "  pinned to %s %s\n", t.CaseType, t.BusinessKey.JSON())
	}
	if t.CaseID != "" {
		fmt.Fprintf(&b, "  focus %s\n", t.CaseID)
	}
	for _, wt := range t.Waiting {
		if wt.Budget != "" {
			fmt.Fprintf(&b, "  waits on budget %s: it goes on once a member raises or resets it, or its window turns\n", wt.Budget)
			continue
		}
		fmt.Fprintf(&b, "  waits on %s call %s (operation %d)\n", wt.Tool, dash(wt.CallID), wt.Ordinal)
	}
	if text, _ := runWaitText(t, time.Now()); text != "" {
		fmt.Fprintf(&b, "  %s\n", text)
	}
	writeCancel(&b, t)
	if r := t.Result; r != nil {
		for _, cc := range r.ClosedCases {
			fmt.Fprintf(&b, "  closed %s %s root %s\n", cc.CaseID, cc.Disposition, dash(cc.Root))
		}
		if r.ErrorCode != "" {
			fmt.Fprintf(&b, "  %s: %s\n", r.ErrorCode, r.Teaching)
		}
		switch {
		case r.Final == "":
		case t.State == contract.TaskWaiting:
			// Not a final answer: the work waits on the calls above, and the task goes on
			// when they have an outcome (docs/workbench.md).
			fmt.Fprintf(&b, "  said before the wait: %s\n", r.Final)
		default:
			fmt.Fprintf(&b, "  final: %s\n", r.Final)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// parseKey reads a business key: a JSON object, or name=value pairs separated by commas
// (values are strings, or numbers when they read as one).
func parseKey(s string) (contract.Args, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("--key is not valid UTF-8 text")
	}
	var key contract.Args
	if strings.HasPrefix(s, "{") {
		if err := contract.DecodeStrict([]byte(s), &key); err != nil {
			return nil, fmt.Errorf("--key %s is not a JSON object of the key's arguments: %w", s, err)
		}
		return key, nil
	}
	key = contract.Args{}
	for pair := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("--key %q is not name=value pairs separated by commas, nor a JSON object", s)
		}
		value = strings.TrimSpace(value)
		key[name] = contract.StringValue(value)
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			if v, err := contract.IntValue(n); err == nil {
				key[name] = v
			}
		}
	}
	return key, nil
}
