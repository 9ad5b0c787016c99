package store

import (
	"context"
	"time"
)

// Reader is the read half of a [Store]; a [Tx] is one too. Lookups of a single record
// return [ErrNotFound] when it does not exist. Lists return an empty slice, never
// ErrNotFound, and are ordered by id unless said otherwise.
type Reader interface {
	// Events returns up to limit events of project with Seq > after, in Seq order; the
	// Seq of the last one is the cursor for the next page. limit <= 0 means 100.
	Events(ctx context.Context, project string, after int64, limit int) ([]Event, error)
	// Head returns the last sequence number and hash of project's log (zero when empty).
	Head(ctx context.Context, project string) (Head, error)
	// Blob returns the content stored under hash.
	Blob(ctx context.Context, hash Hash) ([]byte, error)

	// InstallationKey returns the bytes given to [Tx.SetInstallationKey].
	InstallationKey(ctx context.Context) ([]byte, error)
	// Project returns a project by id.
	Project(ctx context.Context, id string) (Project, error)
	// Projects returns every project.
	Projects(ctx context.Context) ([]Project, error)

	// Member returns a member by id, revoked or not; check RevokedAt.
	Member(ctx context.Context, id string) (Member, error)
	// MemberByName returns a member by name, revoked or not; check RevokedAt.
	MemberByName(ctx context.Context, name string) (Member, error)
	// MemberProjects returns the ids of the projects member belongs to.
	MemberProjects(ctx context.Context, member string) ([]string, error)
	// Session returns the live session whose token digest is digest: [ErrRevoked] when it
	// or its member is revoked, [ErrExpired] when now is at or past its expiry.
	Session(ctx context.Context, digest []byte, now time.Time) (Session, error)
	// LiveSessions returns how many of member's sessions are neither revoked nor expired at now.
	LiveSessions(ctx context.Context, member string, now time.Time) (int, error)
	// DelegateByToken returns the live delegate whose token digest is digest: [ErrRevoked]
	// when it or its member is revoked, [ErrExpired] when now is at or past its expiry.
	DelegateByToken(ctx context.Context, digest []byte, now time.Time) (Delegate, error)
	// Delegates returns member's delegates, revoked and expired ones included.
	Delegates(ctx context.Context, member string) ([]Delegate, error)
	// Card returns a card by id.
	Card(ctx context.Context, id string) (Card, error)
	// Cards returns the cards f selects, oldest first.
	Cards(ctx context.Context, f CardFilter) ([]Card, error)

	// Agent returns an agent, revoked or not; check RevokedAt.
	Agent(ctx context.Context, id string) (Agent, error)
	// AgentByToken returns the agent whose token digest is digest, or [ErrRevoked].
	AgentByToken(ctx context.Context, digest []byte) (Agent, error)
	// Agents returns project's agents, revoked ones included.
	Agents(ctx context.Context, project string) ([]Agent, error)

	// Connection returns a connection, revoked or not; check RevokedAt.
	Connection(ctx context.Context, id string) (Connection, error)
	// Connections returns project's connections, revoked ones included.
	Connections(ctx context.Context, project string) ([]Connection, error)
	// Sources returns the sources bound on connection.
	Sources(ctx context.Context, connection string) ([]Source, error)
	// ToolLocks returns the tools locked on connection, by tool.
	ToolLocks(ctx context.Context, connection string) ([]ToolLock, error)

	// Release returns a release with its content.
	Release(ctx context.Context, id, version string) (Release, error)
	// Installs returns project's installed releases, by release id.
	Installs(ctx context.Context, project string) ([]Install, error)

	// Nodes returns every Board node of project, for rebuilding the Board.
	Nodes(ctx context.Context, project string) ([]Node, error)
	// Decisions returns every decision recorded on project's Requests, by request id, for
	// a verifier to compare with the log.
	Decisions(ctx context.Context, project string) ([]Decision, error)
	// NodeCount returns how many Board nodes project keeps, without reading them.
	NodeCount(ctx context.Context, project string) (int, error)

	// Lease returns the lease of connection granted last (the highest generation of its
	// slots), or [ErrNotFound] when none was ever granted.
	Lease(ctx context.Context, connection string) (Lease, error)
	// Leases returns every lease row of connection, by slot; none when none was granted.
	Leases(ctx context.Context, connection string) ([]Lease, error)
	// LeasesHead is Leases of connection and Head of project read in one call, at one
	// moment of the store: the rows and the head agree with each other, and a caller
	// that wants both pays one round trip.
	LeasesHead(ctx context.Context, project, connection string) ([]Lease, Head, error)

	// Schedule returns a schedule, deleted or not; check DeletedAt.
	Schedule(ctx context.Context, id string) (Schedule, error)
	// Schedules returns project's schedules that are not deleted.
	Schedules(ctx context.Context, project string) ([]Schedule, error)
	// DueSchedules returns up to limit schedules of every project that are neither paused
	// nor deleted and whose NextDue is at or before before, earliest NextDue first.
	DueSchedules(ctx context.Context, before time.Time, limit int) ([]Schedule, error)
	// ScheduleFires returns up to limit fires of schedule, latest Due first.
	ScheduleFires(ctx context.Context, schedule string, limit int) ([]ScheduleFire, error)
	// OpenScheduleFires returns up to limit fires of every project whose outcome is
	// "posting" or "posted", earliest FiredAt first.
	OpenScheduleFires(ctx context.Context, limit int) ([]ScheduleFire, error)

	// Budgets returns project's budgets, by name.
	Budgets(ctx context.Context, project string) ([]Budget, error)
	// BudgetSpend returns what was charged to budget of project in the window starting at
	// window; [ErrNotFound] when nothing was.
	BudgetSpend(ctx context.Context, project, budget string, window time.Time) (BudgetSpend, error)
	// BudgetHolds returns the holds on budget of project, expired ones included, by id.
	BudgetHolds(ctx context.Context, project, budget string) ([]BudgetHold, error)
	// NoticeSubscription returns a notice subscription, deleted or not; check DeletedAt.
	NoticeSubscription(ctx context.Context, id string) (NoticeSubscription, error)
	// NoticeSubscriptions returns project's subscriptions that are not deleted; member ""
	// means every member's.
	NoticeSubscriptions(ctx context.Context, project, member string) ([]NoticeSubscription, error)
	// NoticeCursor returns the sequence number of project's log up to which notices were
	// made (0 when none were).
	NoticeCursor(ctx context.Context, project string) (int64, error)
	// Notices returns up to limit notices of subscription, newest first.
	Notices(ctx context.Context, subscription string, limit int) ([]Notice, error)
}

// Tx is one write transaction, given to the function passed to [Store.Update]. It is not
// safe for concurrent use and must not be used after that function returns. Writes that
// would break uniqueness return [ErrConflict]; writes naming a missing record (a member
// of a session, a project of an agent, a row to revoke) return [ErrNotFound]. Revoking
// sets RevokedAt once; revoking again keeps the first time and is not an error.
type Tx interface {
	Reader

	// Append adds e to its project's log as the next event: it allocates the sequence
	// number, stores large data once as a blob and links the hash chain (see [EventHash]).
	// It returns the event as stored. An empty e.ID is minted from the event's seq and random
	// bytes (so that the ids minted in one log sort as its events); an ID
	// already in the project's log returns [ErrConflict], so a retried write is refused,
	// not doubled. An invalid event (see [Link]) returns [ErrInvalid].
	Append(ctx context.Context, e NewEvent) (Event, error)
	// AppendAll appends es, in order, as the next events of their project's log, exactly as
	// that many Appends would (the same sequence numbers, ids, blobs and hash chain), in
	// one call: a transaction that appends several events costs the store one statement
	// rather than one each. Every event must be of the same project ([ErrInvalid]
	// otherwise). It returns the events as stored, in order; none of them is appended when
	// it fails (an id already in the log, or one given twice, returns [ErrConflict]). An
	// empty es appends nothing.
	AppendAll(ctx context.Context, es []NewEvent) ([]Event, error)
	// LockHead returns the head of project's log, the Tx's own appends included, and keeps
	// every other writer from appending to that log until the transaction ends. So a
	// write that is valid only if nobody else appended since a known head (a cached Board)
	// checks that inside the transaction it commits in.
	LockHead(ctx context.Context, project string) (Head, error)
	// PutBlob stores b under its sha256 (once; storing it again is a no-op).
	PutBlob(ctx context.Context, b []byte) (Hash, error)

	// SetInstallationKey stores the installation key; a second call returns [ErrConflict].
	SetInstallationKey(ctx context.Context, key []byte) error
	// CreateProject creates a project; its id must be new.
	CreateProject(ctx context.Context, p Project) error

	// CreateMember creates a member; its id and name must be new.
	CreateMember(ctx context.Context, m Member) error
	// AddMembership makes member a member of project; adding it again is a no-op.
	AddMembership(ctx context.Context, project, member string) error
	// RevokeMember revokes a member and with it every session of that member.
	RevokeMember(ctx context.Context, id string, at time.Time) error
	// CreateSession records a session of an existing member; its digest must be new.
	CreateSession(ctx context.Context, s Session) error
	// RevokeSession revokes the session whose token digest is digest.
	RevokeSession(ctx context.Context, digest []byte, at time.Time) error
	// CreateDelegate records a delegate of an existing member in an existing project; its
	// id, digest and (member, name) must be new.
	CreateDelegate(ctx context.Context, d Delegate) error
	// RevokeDelegate revokes delegate id of member ([ErrNotFound] for another member's).
	RevokeDelegate(ctx context.Context, member, id string, at time.Time) error
	// RevokeDelegates revokes every delegate of member not yet revoked.
	RevokeDelegates(ctx context.Context, member string, at time.Time) error
	// CreateCard records an open card of an existing delegate in an existing project; its
	// id must be new.
	CreateCard(ctx context.Context, c Card) error
	// UpdateCard moves card c.ID from state from to c.State, never open, with c.Record:
	// [ErrConflict] when it is no longer in from, so an open card closes once.
	UpdateCard(ctx context.Context, c Card, from string) error

	// CreateAgent creates an agent in an existing project; its id, its name in the
	// project and its token digest must be new, and its kind one of the AgentKind values.
	CreateAgent(ctx context.Context, a Agent) error
	// SetAgentToken replaces an agent's token digest; the old token stops working.
	SetAgentToken(ctx context.Context, id string, digest []byte) error
	// RevokeAgent revokes an agent: its token stops working.
	RevokeAgent(ctx context.Context, id string, at time.Time) error

	// CreateConnection creates a connection in an existing project; its id and its name
	// in the project must be new.
	CreateConnection(ctx context.Context, c Connection) error
	// RevokeConnection revokes a connection. Its sources and tool locks stay, for audit.
	RevokeConnection(ctx context.Context, id string, at time.Time) error
	// PutSource binds or rebinds a source on its connection.
	PutSource(ctx context.Context, s Source) error
	// DeleteSource removes a source from its connection.
	DeleteSource(ctx context.Context, connection, id string) error
	// LockTool locks a tool at a digest on its connection, replacing an earlier lock.
	LockTool(ctx context.Context, l ToolLock) error
	// UnlockTool removes a tool's lock from a connection.
	UnlockTool(ctx context.Context, connection, tool string) error

	// PutRelease stores an immutable release. Storing the same id, version, digest and
	// content again is a no-op that returns created == false; a different digest or
	// content under the same id and version returns [ErrConflict].
	PutRelease(ctx context.Context, r Release) (created bool, err error)
	// Install installs a stored release into a project, replacing another version.
	Install(ctx context.Context, in Install) error

	// PutNode creates or replaces a Board node of project.
	PutNode(ctx context.Context, project string, n Node) error
	// PutNodes creates or replaces the Board nodes ns of project, leaving the rows that
	// many PutNodes, in order, would (a node whose id an earlier one of ns has replaces
	// it), in one call: a Board change that writes several nodes costs the store one
	// statement rather than one each. Every node is checked before any is written
	// ([ErrInvalid]); a missing project returns [ErrNotFound]. An empty ns writes nothing.
	PutNodes(ctx context.Context, project string, ns []Node) error
	// DeleteNode deletes a Board node of project.
	DeleteNode(ctx context.Context, project, id string) error

	// LockLease returns the lease of connection in project — Generation 0 when none was
	// ever granted — and keeps every other writer from locking or writing that lease until the
	// transaction ends (PostgreSQL: SELECT … FOR UPDATE; SQLite's single writer already
	// does). A decision made on the lease it returns holds when the transaction commits.
	LockLease(ctx context.Context, project, connection string) (Lease, error)
	// LockLeases locks slot 0 of connection as LockLease does, then every other slot of
	// it, and returns them all by slot (slot 0 first, Generation 0 when never granted).
	LockLeases(ctx context.Context, project, connection string) ([]Lease, error)
	// LockLeasesHead is LockLeases followed by Head of project's log (the Tx's own appends
	// included), the head read once the lease rows are locked, in one call: a write that a
	// Connection's lease rows serialize reads the head it decides at without a call of
	// its own (on PostgreSQL, the locks and the head read travel in one round trip). So
	// whatever another writer of those rows committed before the lock is within the head.
	LockLeasesHead(ctx context.Context, project, connection string) ([]Lease, Head, error)
	// PutLease creates or replaces the lease of l.Connection in slot l.Slot in an existing project. A
	// generation below the stored one, or a Connection of another project, returns
	// [ErrConflict]: generations never go back.
	PutLease(ctx context.Context, l Lease) error

	// RecordRequest records a Request a decision may reference; its project must exist
	// and its id be new in it, and it needs a digest and a requester ([ErrInvalid]).
	RecordRequest(ctx context.Context, r Request) error
	// CreateSchedule records a schedule of an existing agent in an existing project; its id
	// must be new, and it needs a text, a creator, a policy and Cron or Every ([ErrInvalid]).
	CreateSchedule(ctx context.Context, s Schedule) error
	// UpdateSchedule stores s's PausedAt, DeletedAt and NextDue when the stored NextDue is
	// still was: [ErrConflict] when another writer moved it, [ErrNotFound] for no schedule.
	UpdateSchedule(ctx context.Context, s Schedule, was time.Time) error
	// RecordFire records a fire of an existing schedule; a fire of the same schedule and
	// due time returns [ErrConflict].
	RecordFire(ctx context.Context, f ScheduleFire) error
	// SettleFire stores f's Task, Outcome, ErrorCode and Teaching on the fire of f's
	// schedule and due time ([ErrNotFound] for none).
	SettleFire(ctx context.Context, f ScheduleFire) error

	// PutBudget creates or replaces budget (b.Project, b.Name) of an existing project; it
	// needs a name, a scope, a window, a zone and a setter ([ErrInvalid]). The store does
	// not order budget writes: a caller that checks a budget and writes it holds the
	// project's head ([Tx.LockHead]) from the read to the commit.
	PutBudget(ctx context.Context, b Budget) error
	// PutBudgetSpend creates or replaces the spend of (s.Project, s.Budget, s.Window) of an
	// existing budget ([ErrNotFound] for none).
	PutBudgetSpend(ctx context.Context, s BudgetSpend) error
	// PutBudgetHold records a hold on an existing budget. One reservation holds a part of
	// each budget it counts against under one id; (project, id, budget) must be new
	// ([ErrConflict]).
	PutBudgetHold(ctx context.Context, h BudgetHold) error
	// DeleteBudgetHold removes every hold of reservation id in project and returns them, by
	// budget ([ErrNotFound] for none).
	DeleteBudgetHold(ctx context.Context, project, id string) ([]BudgetHold, error)
	// DeleteBudget removes budget name of project with every window's spend and every
	// hold on it ([ErrNotFound] for none). A reservation that held other budgets keeps
	// its holds on them.
	DeleteBudget(ctx context.Context, project, name string) error

	// RecordDecision records a decision on a Request; see [Decision] for the rules it
	// enforces. A Decision naming a missing project returns [ErrNotFound].
	RecordDecision(ctx context.Context, d Decision) error

	// CreateNoticeSubscription records a member's subscription in an existing project; its
	// id must be new.
	CreateNoticeSubscription(ctx context.Context, s NoticeSubscription) error
	// DeleteNoticeSubscription marks a subscription deleted at at; its pending notices
	// are not sent. Deleting it again keeps the first time.
	DeleteNoticeSubscription(ctx context.Context, id string, at time.Time) error
	// AdvanceNoticeCursor moves project's notice cursor from from to to: [ErrConflict]
	// when it is no longer at from, so two instances never both make one event's notices.
	AdvanceNoticeCursor(ctx context.Context, project string, from, to int64) error
	// AddNotice records a pending notice of an existing subscription; its id must be new.
	AddNotice(ctx context.Context, n Notice) error
	// ClaimNotices claims up to limit pending notices whose DueAt is at or before now and
	// whose claim (if any) ended before now, of subscriptions not deleted, earliest DueAt
	// first: each is marked claimed by by until until and returned so.
	ClaimNotices(ctx context.Context, now time.Time, by string, until time.Time, limit int) ([]Notice, error)
	// SettleNotice records the outcome of a notice claimed by n.ClaimedBy: its State,
	// Attempts, DueAt, SettledAt and LastError, and the claim ended. [ErrConflict] when the
	// claim is no longer n.ClaimedBy's. A settled notice (delivered or failed) also sets
	// its subscription's last delivery.
	SettleNotice(ctx context.Context, n Notice) error
}
