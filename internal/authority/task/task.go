// Package task keeps the tasks and messages posted to Agents' conversations in their
// project's event log: who posted them, the runtimes' leased claims, how each run ended,
// and the wakes that the log's Operation events give a conversation that waits.
package task

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// DefaultLease is how long a claim holds a task before another runtime may take it again;
// a runtime renews it while it works.
const DefaultLease = 2 * time.Minute

// Config configures [New].
type Config struct {
	Store store.Store
	Now   func() time.Time // default: time.Now
	Rand  io.Reader        // default: crypto/rand.Reader
	Lease time.Duration    // default: DefaultLease
	// MaxOpen bounds one Agent's open tasks and messages; default DefaultMaxOpen.
	MaxOpen int
	// MaxPerHour bounds the tasks and messages posted for one Agent in any hour; default
	// DefaultMaxPerHour.
	MaxPerHour int
	// CheckPin refuses a task's pin — a Case Type and business key — that the project's
	// Board cannot honour, naming what it has; nil checks nothing. The Keeper cannot read
	// a Board itself, so the authority lends it the Board's check.
	CheckPin func(ctx context.Context, project contract.ProjectID, caseType string, key contract.Args) error
	// BudgetRoom reports whether budget name of project has room for a model request: a
	// task waiting on a budget is woken once it has (docs/budgets.md). Nil: every budget
	// has room.
	BudgetRoom func(ctx context.Context, project contract.ProjectID, name string) (bool, error)
	// Log is the project log the task ledger joins ([eventlog.Join]): the authority's,
	// which the operation ledger joins too, so that an approved ask, holding the
	// operation ledger, reads the asking task through it ([Keeper.AskOpen]). Nil: a log of
	// the ledger's own over Store.
	Log *eventlog.Log
	// Logger is where a claim committed but not applied here is warned of; nil discards.
	Logger *slog.Logger
}

// Keeper keeps the tasks of one store's projects. It is safe for concurrent use.
type Keeper struct {
	store store.Store
	now   func() time.Time
	rand  io.Reader
	lease time.Duration
	// maxOpen and maxPerHour are the bounds of [Config.MaxOpen] and [Config.MaxPerHour].
	maxOpen, maxPerHour int
	// pin is [Config.CheckPin].
	pin func(ctx context.Context, project contract.ProjectID, caseType string, key contract.Args) error
	// room is [Config.BudgetRoom].
	room func(ctx context.Context, project contract.ProjectID, name string) (bool, error)
	// ledgers keeps each project's ledger, and is the one path the Keeper reads and
	// writes a log through (docs/architecture.md, "The project state and its driver").
	ledgers *eventlog.Driver[*ledger]
	log     *slog.Logger
}

// New returns the Keeper over cfg.Store.
func New(cfg Config) *Keeper {
	log := cfg.Log
	if log == nil {
		log = eventlog.NewLog(cfg.Store)
	}
	k := &Keeper{store: cfg.Store, now: cfg.Now, rand: cfg.Rand, lease: cfg.Lease, ledgers: eventlog.Join(log, newLedger),
		maxOpen: cmp.Or(max(cfg.MaxOpen, 0), DefaultMaxOpen), maxPerHour: cmp.Or(max(cfg.MaxPerHour, 0), DefaultMaxPerHour), pin: cfg.CheckPin, room: cfg.BudgetRoom}
	if k.now == nil {
		k.now = time.Now
	}
	if k.rand == nil {
		k.rand = rand.Reader
	}
	if k.lease <= 0 {
		k.lease = DefaultLease
	}
	if k.log = cfg.Logger; k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.ledgers.Publish(func(l *ledger) any { return l.publish() })
	return k
}

// Lease is how long a claim holds its task.
func (k *Keeper) Lease() time.Duration { return k.lease }

func (k *Keeper) nowUTC() time.Time { return k.now().UTC().Round(0) }

// PostTask posts req as a task for an Agent of project: a member names the Agent (id or
// name) in req.Agent; an Agent's own runtime posts for itself. It returns the task,
// queued, with its conversation (made when req names none).
func (k *Keeper) PostTask(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.TaskRequest) (contract.Task, error) {
	return k.post(ctx, c, project, contract.TaskKindTask, req)
}

// PostMessage adds req's words to conversation id of agent in project, for a member; the
// Agent's runtime takes it as it takes a task.
func (k *Keeper) PostMessage(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID, req contract.MessageRequest) (contract.Task, error) {
	return k.post(ctx, c, project, contract.TaskKindMessage, contract.TaskRequest{Agent: agent, Text: req.Text, Conversation: string(id), ClientKey: req.ClientKey})
}

func (k *Keeper) post(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.TaskKind, req contract.TaskRequest) (contract.Task, error) {
	agentRef, err := poster(c, project, req.Agent)
	if err != nil {
		return contract.Task{}, err
	}
	if err := checkRequest(kind, req); err != nil {
		return contract.Task{}, err
	}
	if req.CaseType != "" && k.pin != nil {
		// At the door: a pin the project has no Case Type or key for would be queued and
		// fail later in the model's run, with nothing to say it was the pin.
		if err := k.pin(ctx, project, req.CaseType, req.BusinessKey); err != nil {
			return contract.Task{}, fmt.Errorf("post a task: %w", err)
		}
	}
	ag, err := identity.FindAgent(ctx, k.store, project, agentRef)
	if err != nil {
		return contract.Task{}, fmt.Errorf("post a task: %w", eventlog.Refuse(err, "agent "+agentRef))
	}
	if ag.RevokedAt != nil {
		return contract.Task{}, contract.Errorf(contract.CodeForbidden, "agent %s is revoked and takes no tasks; post to a live Agent", ag.Name)
	}
	agent := contract.AgentID(ag.ID)
	conv := contract.ConversationID(req.Conversation)
	if conv == "" {
		made, err := k.newID("c-")
		if err != nil {
			return contract.Task{}, err
		}
		conv = contract.ConversationID(made)
	}
	id, err := k.newID("t-")
	if err != nil {
		return contract.Task{}, err
	}
	now := k.nowUTC()
	t := contract.Task{ID: contract.TaskID(id), Project: project, Agent: agent, Kind: kind, Text: strings.TrimSpace(req.Text),
		Conversation: conv, CasePin: contract.CasePin{CaseType: req.CaseType, BusinessKey: req.BusinessKey, CaseID: req.CaseID},
		ClientKey: req.ClientKey, PostedBy: c.Principal(), PostedAt: now, State: contract.TaskQueued, UpdatedAt: now}
	var out contract.Task
	err = k.ledgers.Write(ctx, project, func(tx store.Tx, l *ledger) error {
		if prev, ok := l.byClientKey[clientKey{agent, req.ClientKey}]; ok && req.ClientKey != "" {
			p := l.tasks[prev]
			if p.Kind != kind || p.Text != t.Text || (req.Conversation != "" && p.Conversation != conv) || !samePin(p.CasePin, t.CasePin) || p.CaseID != t.CaseID {
				return contract.Errorf(contract.CodeTaskConflict, "client key %q already names task %s, posted with other content; send that task's request again, or pick a new key", req.ClientKey, p.ID)
			}
			out = *p
			return nil
		}
		kc := convKey{agent, conv}
		if kind == contract.TaskKindMessage && !l.known[kc] {
			return contract.Errorf(contract.CodeNotFound, "agent %s has no conversation %s yet; post a task to start it", ag.Name, conv)
		}
		if err := l.checkBounds(agent, ag.Name, now, k.maxOpen, k.maxPerHour); err != nil {
			return err
		}
		if pin, ok := l.pins[kc]; ok && t.CaseType != "" && !samePin(pin, t.CasePin) {
			return contract.Errorf(contract.CodeTaskConflict, "conversation %s is pinned to Case Type %q with business key %s; post this task to a new conversation", conv, pin.CaseType, pin.BusinessKey.JSON())
		}
		out = t
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.TaskPostedData{Task: t})
	})
	if err != nil {
		return contract.Task{}, fmt.Errorf("post a task for %s: %w", ag.Name, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, nil
}

// poster returns the Agent a post is for: a member (or its delegate) names one; an Agent
// posts only for itself.
func poster(c identity.Caller, project contract.ProjectID, agent string) (string, error) {
	if c.Kind == contract.PrincipalAgent {
		if len(c.Projects) != 1 || c.Projects[0] != project || (agent != "" && agent != c.ID && agent != c.Name) {
			return "", contract.Errorf(contract.CodeForbidden, "an Agent posts tasks only for itself; leave agent out or name your own")
		}
		return c.ID, nil
	}
	if err := c.RequireMember(project); err != nil {
		return "", err
	}
	if agent == "" {
		return "", contract.Errorf(contract.CodeInvalidArgument, "name the Agent the task is for")
	}
	return agent, nil
}

// checkRequest refuses a post the authority cannot keep.
func checkRequest(kind contract.TaskKind, req contract.TaskRequest) error {
	text := strings.TrimSpace(req.Text)
	if text == "" || len(text) > contract.MaxTaskText {
		return contract.Errorf(contract.CodeInvalidArgument, "the %s's text is empty or over %d bytes; send words for the Agent", kind, contract.MaxTaskText)
	}
	if req.Conversation != "" {
		if _, err := contract.ParseConversationID(req.Conversation); err != nil {
			return err
		}
	}
	if err := contract.CheckClientKey(req.ClientKey); err != nil {
		return err
	}
	if (req.CaseType == "") != (len(req.BusinessKey) == 0) {
		return contract.Errorf(contract.CodeInvalidArgument, "a pin names both a Case Type and its business key (caseType %q, businessKey %s); send both, or neither", req.CaseType, req.BusinessKey.JSON())
	}
	return nil
}

func (k *Keeper) newID(prefix string) (string, error) {
	b := make([]byte, 8)
	if _, err := io.ReadFull(k.rand, b); err != nil {
		return "", fmt.Errorf("mint an id: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}

// Task returns task id of project for a member.
func (k *Keeper) Task(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error) {
	if err := readable(c, project); err != nil {
		return contract.Task{}, err
	}
	var out contract.Task
	err := k.ledgers.Read(ctx, project, func(l *ledger) error {
		t, ok := l.tasks[id]
		if !ok || (c.Kind == contract.PrincipalAgent && string(t.Agent) != c.ID) {
			return contract.Errorf(contract.CodeNotFound, "project %s has no task %s; docket task list shows its tasks", project, id)
		}
		out = k.view(t)
		return nil
	})
	if err != nil {
		return contract.Task{}, readErr(err, "read task "+string(id), project)
	}
	return out, nil
}

// Tasks lists project's tasks, oldest first, for a member; agent (an id or a name)
// narrows it to one Agent when not empty.
func (k *Keeper) Tasks(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Task, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	var only contract.AgentID
	if agent != "" {
		ag, err := identity.FindAgent(ctx, k.store, project, agent)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", eventlog.Refuse(err, "agent "+agent))
		}
		only = contract.AgentID(ag.ID)
	}
	out := []contract.Task{}
	err := k.ledgers.Read(ctx, project, func(l *ledger) error {
		for _, id := range l.order {
			if t := l.tasks[id]; only == "" || t.Agent == only {
				out = append(out, k.view(t))
			}
		}
		return nil
	})
	if err != nil {
		return nil, readErr(err, "list tasks", project)
	}
	return out, nil
}

// readErr is the error of a read of project's ledger that failed with err, doing what:
// a refusal of the read's own comes back as it is, a failure to catch the ledger up
// through [eventlog.Refuse].
func readErr(err error, doing string, project contract.ProjectID) error {
	if _, ok := errors.AsType[*contract.Error](err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", doing, eventlog.Refuse(err, "project "+string(project)))
}

// view is t as a reader sees it now: a claim whose lease ran out reads as queued.
func (k *Keeper) view(t *contract.Task) contract.Task {
	v := *t
	if v.State == contract.TaskClaimed && v.LeaseUntil != nil && !k.nowUTC().Before(*v.LeaseUntil) {
		v.State, v.LeaseUntil = contract.TaskQueued, nil
	}
	return v
}

func readable(c identity.Caller, project contract.ProjectID) error {
	if c.Kind == contract.PrincipalAgent && len(c.Projects) == 1 && c.Projects[0] == project {
		return nil
	}
	return c.RequireMember(project)
}

// agentOnly refuses callers other than an Agent: claims and reports are its runtime's.
func agentOnly(c identity.Caller) (contract.ProjectID, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return "", contract.Errorf(contract.CodeForbidden, "only an Agent's runtime takes and reports its tasks; use the agent token the runtime was given")
	}
	return c.Projects[0], nil
}

// samePin reports whether a and b hold work to the same Case Type and key.
func samePin(a, b contract.CasePin) bool {
	return a.CaseType == b.CaseType && a.BusinessKey.JSON() == b.BusinessKey.JSON()
}
