package authority

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/budget"
	"github.com/docketrun/docket/internal/authority/conversation"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/materials"
	"github.com/docketrun/docket/internal/authority/policy"
	"github.com/docketrun/docket/internal/authority/profile"
	"github.com/docketrun/docket/internal/authority/task"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// Config holds what an [Authority] needs. Store and Key are required.
type Config struct {
	Store  store.Store
	Key    identity.Key
	Logger *slog.Logger     // default: discards
	Now    func() time.Time // default: time.Now
	Rand   io.Reader        // default: crypto/rand.Reader

	// SessionTTL is how long a browser or login session lives; default
	// identity.DefaultSessionTTL.
	SessionTTL time.Duration

	// Signer is the installation's signing keys, which sign the checkpoints of each
	// project's log; nil signs none.
	Signer *signing.Keyring
	// CheckpointEvery is how many events a log moves before a Board write signs its head;
	// default boards.DefaultCheckpointEvery.
	CheckpointEvery int64
	// TaskLease is how long a runtime's claim holds a task before another may take it;
	// default task.DefaultLease.
	TaskLease time.Duration
	// MaxOpenTasks and MaxTasksPerHour bound what is posted for one Agent; defaults
	// task.DefaultMaxOpen and task.DefaultMaxPerHour.
	MaxOpenTasks, MaxTasksPerHour int
}

// Authority is Docket's authority over identities, capabilities and project Boards: the
// facade over its parts. The principals and their credentials are its
// [identity.Directory], which [Authority.Directory] returns; its own methods are those
// that need more than one part: Boards, capabilities, conversations, tasks and the rest.
// It is safe for concurrent use.
type Authority struct {
	dir *identity.Directory

	store store.Store
	log   *slog.Logger
	now   func() time.Time
	rand  io.Reader

	boards        *boards.Cache
	budgets       *budget.Keeper
	conversations *conversation.Keeper
	policies      *policy.Book
	// projectLog is the project log the Board, the policies, the conversation index, the
	// profiles, the materials, the held credentials' log, the task ledger and the operation
	// ledger join: one lock and one cursor per project for all (eventlog.Log).
	projectLog *eventlog.Log
	profiles   *profile.Keeper
	materials  *materials.Keeper
	tasks      *task.Keeper
	signer     *signing.Keyring // nil: nothing is signed
	// adverts is what workers last offered this serve: set once by [NewDispatcher],
	// before anything is served; nil without a Dispatcher (tools.go).
	adverts advertiser
}

// New returns an Authority over cfg.Store. It does not load Boards; [Authority.Restore]
// does.
func New(cfg Config) (*Authority, error) {
	if cfg.Store == nil {
		return nil, errors.New("authority: config needs a store")
	}
	if cfg.Key == (identity.Key{}) {
		return nil, errors.New("authority: config needs the installation key")
	}
	a := &Authority{log: cfg.Logger, now: cfg.Now, rand: cfg.Rand, signer: cfg.Signer}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = a.log.With(logComponent, "authority")
	// Every part shares one store that remembers what this process committed, so their
	// catch-ups read back from memory (eventlog.Remember).
	a.store = eventlog.Remember(cfg.Store, a.log)
	if a.now == nil {
		a.now = time.Now
	}
	if a.rand == nil {
		a.rand = rand.Reader
	}
	// The Board, the policies, the conversation index, the profiles, the materials, the
	// held credentials' log, the task ledger and the operation ledger ([NewOperations])
	// are parts of one project log: one lock, one cursor (docs/architecture.md, "The
	// project state and its driver"), so a Board write reads the ledger, a decision the
	// policy in force, and an approved ask its asking task, under the one lock it holds,
	// and one catch-up steps every part. A token's proof reads the credentials' log from
	// its published state, never waiting for that lock.
	a.projectLog = eventlog.NewLog(a.store)
	dir, err := identity.New(identity.Config{Store: a.store, Key: cfg.Key, Logger: a.log, Now: a.now, Rand: a.rand,
		SessionTTL: cfg.SessionTTL, ProjectLog: a.projectLog})
	if err != nil {
		return nil, fmt.Errorf("authority: %w", err)
	}
	a.dir = dir
	a.boards = boards.Join(a.projectLog, a.log, a.now, cfg.Signer, cfg.CheckpointEvery)
	a.policies = policy.Join(a.projectLog, a.now)
	a.conversations = conversation.Join(a.projectLog, a.now)
	a.profiles = profile.Join(a.projectLog, a.now)
	a.budgets = newBudgets(a)
	a.materials = materials.Join(a.projectLog, a.now)
	a.tasks = task.New(task.Config{Store: a.store, Log: a.projectLog, Logger: a.log, Now: a.now, Rand: a.rand, Lease: cfg.TaskLease,
		MaxOpen: cfg.MaxOpenTasks, MaxPerHour: cfg.MaxTasksPerHour,
		CheckPin: func(ctx context.Context, project contract.ProjectID, caseType string, key contract.Args) error {
			return a.boards.View(ctx, project, func(b *board.Board) error { return b.CheckPin(caseType, key) })
		},
		BudgetRoom: a.budgetRoom})
	return a, nil
}

// Directory returns the identity part: the principals, their credentials, sessions,
// sources, tool locks and cards, which the facade adds nothing to. Wiring hands it to the
// callers that authenticate or manage principals (docs/architecture.md, "Packages and
// what each owns").
func (a *Authority) Directory() *identity.Directory { return a.dir }

// nowUTC is the authority's clock, in UTC, at the precision the event log keeps.
func (a *Authority) nowUTC() time.Time { return a.now().UTC().Round(0) }

// Restore builds the Board of every project from the store: its installed releases and
// its persisted nodes and Cases. A project whose Board does not build stops the start,
// because serving it would show a Board that is not what the log says.
func (a *Authority) Restore(ctx context.Context) error { return a.boards.Restore(ctx) }

// Cases lists project's Cases, oldest first.
func (a *Authority) Cases(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Case, error) {
	return a.boards.Cases(ctx, c, project)
}

// Case returns one Case of project.
func (a *Authority) Case(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID) (contract.Case, error) {
	return a.boards.Case(ctx, c, project, id)
}

// HoldCase pauses Case id of project with a member's hold; see [boards.Cache.HoldCase].
func (a *Authority) HoldCase(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, reason string) (contract.Case, error) {
	return a.boards.HoldCase(ctx, c, project, id, reason)
}

// ResumeCase releases a member's hold on Case id of project (every member's hold when
// holdID is empty); see [boards.Cache.ResumeCase].
func (a *Authority) ResumeCase(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, holdID string) (contract.Case, error) {
	return a.boards.ResumeCase(ctx, c, project, id, holdID)
}

// InstallCapability checks a capability package, stores it as a release and installs it
// into project; see [boards.Cache.InstallCapability].
func (a *Authority) InstallCapability(ctx context.Context, c identity.Caller, project contract.ProjectID, up contract.CapabilityUpload) (contract.Installed, error) {
	return a.boards.InstallCapability(ctx, c, project, up)
}

// Installs lists the releases installed in project.
func (a *Authority) Installs(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Release, error) {
	return a.boards.Installs(ctx, c, project)
}

// Ping reports whether the store answers.
func (a *Authority) Ping(ctx context.Context) error {
	_, err := a.store.Projects(ctx)
	return err
}

// SaveConversation appends s to conversation id of the calling Agent and returns where the
// conversation now stands; see [conversation.Keeper.SaveConversation].
func (a *Authority) SaveConversation(ctx context.Context, c identity.Caller, id contract.ConversationID, s contract.ConversationSave) (contract.ConversationHead, error) {
	return a.conversations.SaveConversation(ctx, c, id, s)
}

// RecordBudgetExhausted records that a budget stopped a run of conversation id of the
// calling Agent.
func (a *Authority) RecordBudgetExhausted(ctx context.Context, c identity.Caller, id contract.ConversationID, b contract.BudgetExhausted) error {
	return a.conversations.RecordBudgetExhausted(ctx, c, id, b)
}

// OwnConversation returns conversation id of the calling Agent.
func (a *Authority) OwnConversation(ctx context.Context, c identity.Caller, id contract.ConversationID) (contract.Conversation, error) {
	return a.conversations.OwnConversation(ctx, c, id)
}

// Conversation returns conversation id of agent (an id or a name) in project, for a
// member of project.
func (a *Authority) Conversation(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID) (contract.Conversation, error) {
	return a.conversations.Conversation(ctx, c, project, agent, id)
}

// Conversations lists the conversations of project's Agents for a member of project, by
// agent then id; agent narrows it to one Agent when not empty.
func (a *Authority) Conversations(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.ConversationSummary, error) {
	return a.conversations.Conversations(ctx, c, project, agent)
}

// ProjectionRebuilds returns how many of this authority's projections were rebuilt from
// the log because their cursors found them off it: events a failed COMMIT lost, or a
// Board made at a seq the log's next event does not link to (see eventlog.Remember).
func (a *Authority) ProjectionRebuilds() int64 { return eventlog.Rebuilds(a.store) }
