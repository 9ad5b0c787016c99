// Package storecount provides a [store.Store] that counts the calls made on it and in its
// transactions, for benchmarks that report what one governed call costs the store
// (benchmarks/README.md: store calls and head reads per action).
package storecount

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// where a call was made: on the Store (committed state) or in a transaction.
type where int

const (
	onStore where = iota
	inTx
)

// Store is a store.Store that counts every call made on it and on the transactions it
// gives out. Wrap the store beneath everything else (beneath the authority's own
// wrappers), so that a call answered from memory above it is not counted.
type Store struct {
	st store.Store
	c  *counter
}

// Wrap returns st counted.
func Wrap(st store.Store) *Store {
	return &Store{st: st, c: &counter{calls: map[string]int64{}, headsFrom: map[string]int64{}, fromOf: map[fromKey]string{}}}
}

// Counts is what a Store counted since it was made or last reset.
type Counts struct {
	// Calls is every call on the Store and in its transactions, Update included.
	Calls int64
	// HeadReads is the calls that read a log's head: Head and LockHead, on the Store or
	// in a transaction, and LockLeasesHead and LeasesHead, which read one with the lease
	// rows.
	HeadReads int64
	// Txs is the Updates run.
	Txs int64
	// TxHeadReads is the HeadReads made inside transactions, and TxHeadReadsMax the most
	// any one transaction made: a call outside a transaction (a Poll's) is not in them.
	TxHeadReads, TxHeadReadsMax int64
	// ByMethod is Calls by method, "Tx." before a call made in a transaction.
	ByMethod map[string]int64
	// HeadsFrom is HeadReads by the method and the function that asked: the first caller
	// outside this package, the authority's event log wrapper (eventlog) and the
	// catch-up helpers (catchUpLocked), which read heads on behalf of their callers.
	HeadsFrom map[string]int64
}

// Top returns the n methods called most, most first, ties by name.
func (c Counts) Top(n int) []string {
	names := make([]string, 0, len(c.ByMethod))
	for k := range c.ByMethod {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if c.ByMethod[names[i]] != c.ByMethod[names[j]] {
			return c.ByMethod[names[i]] > c.ByMethod[names[j]]
		}
		return names[i] < names[j]
	})
	return names[:min(n, len(names))]
}

// Counts returns what was counted so far.
func (s *Store) Counts() Counts {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	c := Counts{Calls: s.c.total, HeadReads: s.c.heads, Txs: s.c.txs, TxHeadReads: s.c.txHeads, TxHeadReadsMax: s.c.txHeadsMax, ByMethod: maps.Clone(s.c.calls), HeadsFrom: maps.Clone(s.c.headsFrom)}
	return c
}

// Reset sets every count to zero, so that a benchmark counts its measured calls alone.
func (s *Store) Reset() {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.total, s.c.heads, s.c.txs, s.c.txHeads, s.c.txHeadsMax = 0, 0, 0, 0, 0
	clear(s.c.calls)
	clear(s.c.headsFrom)
}

// counter is shared by a Store and its transactions. A mutex, not atomics: it is bench
// support, and one lock per store call is far below what the call itself costs.
type counter struct {
	mu                                     sync.Mutex
	total, heads, txs, txHeads, txHeadsMax int64
	calls                                  map[string]int64
	headsFrom                              map[string]int64
	// fromOf names the asker of a head read by its call stack, so that each stack is
	// symbolized once: naming it on every read was about 2 % of the benchmark process's
	// CPU, a cost of the count that docket serve does not pay.
	fromOf map[fromKey]string
}

// fromKey is a head read's method and the call stack above the counter.
type fromKey struct {
	key string
	pcs [16]uintptr
}

// count counts a call and reports whether it read a log's head.
func (c *counter) count(w where, name string) (head bool) {
	key := name
	if w == inTx {
		key = "Tx." + name
	}
	var fk fromKey
	if name == "Head" || name == "LockHead" || name == "LockLeasesHead" || name == "LeasesHead" {
		fk.key = key
		runtime.Callers(2, fk.pcs[:])
	}
	c.mu.Lock()
	c.total++
	switch name {
	case "Head", "LockHead", "LockLeasesHead", "LeasesHead":
		c.heads++
		from, ok := c.fromOf[fk]
		if !ok {
			pcs := fk.pcs // CallersFrames keeps the slice: a copy, so that fk stays on the stack
			from = key + " ← " + caller(pcs[:])
			c.fromOf[fk] = from
		}
		c.headsFrom[from]++
		head = true
	case "Update":
		c.txs++
	}
	c.calls[key]++
	c.mu.Unlock()
	return head
}

// endTx counts what one transaction that ended read of a log's head.
func (c *counter) endTx(heads int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txHeads += heads
	c.txHeadsMax = max(c.txHeadsMax, heads)
}

// caller names the first function of the call stack pcs (zeros past its end) outside
// this package, eventlog and the catch-up helpers.
func caller(pcs []uintptr) string {
	if i := slices.Index(pcs, 0); i >= 0 {
		pcs = pcs[:i]
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if !strings.Contains(f.Function, "/store/storecount.") && !strings.Contains(f.Function, "/authority/eventlog.") &&
			!strings.HasSuffix(f.Function, ".catchUpLocked") {
			return strings.TrimPrefix(f.Function, "github.com/docketrun/docket/internal/")
		}
		if !more {
			return "?"
		}
	}
}

// Update implements [store.Store.Update]: fn sees a transaction that counts its calls.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	s.c.count(onStore, "Update")
	return s.st.Update(ctx, func(t store.Tx) error {
		in := &tx{tx: t, c: s.c}
		err := fn(in)
		s.c.endTx(in.heads)
		return err
	})
}

// tx is a store.Tx that counts its calls.
type tx struct {
	tx    store.Tx
	c     *counter
	heads int64 // the head reads made in this transaction
}

// count counts a call made in the transaction.
func (t *tx) count(name string) {
	if t.c.count(inTx, name) {
		t.heads++
	}
}

func (s *Store) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	s.c.count(onStore, "Events")
	return s.st.Events(ctx, project, after, limit)
}

func (t *tx) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	t.count("Events")
	return t.tx.Events(ctx, project, after, limit)
}

func (s *Store) Head(ctx context.Context, project string) (store.Head, error) {
	s.c.count(onStore, "Head")
	return s.st.Head(ctx, project)
}

func (t *tx) Head(ctx context.Context, project string) (store.Head, error) {
	t.count("Head")
	return t.tx.Head(ctx, project)
}

func (s *Store) Blob(ctx context.Context, hash store.Hash) ([]byte, error) {
	s.c.count(onStore, "Blob")
	return s.st.Blob(ctx, hash)
}

func (t *tx) Blob(ctx context.Context, hash store.Hash) ([]byte, error) {
	t.count("Blob")
	return t.tx.Blob(ctx, hash)
}

func (s *Store) InstallationKey(ctx context.Context) ([]byte, error) {
	s.c.count(onStore, "InstallationKey")
	return s.st.InstallationKey(ctx)
}

func (t *tx) InstallationKey(ctx context.Context) ([]byte, error) {
	t.count("InstallationKey")
	return t.tx.InstallationKey(ctx)
}

func (s *Store) Project(ctx context.Context, id string) (store.Project, error) {
	s.c.count(onStore, "Project")
	return s.st.Project(ctx, id)
}

func (t *tx) Project(ctx context.Context, id string) (store.Project, error) {
	t.count("Project")
	return t.tx.Project(ctx, id)
}

func (s *Store) Projects(ctx context.Context) ([]store.Project, error) {
	s.c.count(onStore, "Projects")
	return s.st.Projects(ctx)
}

func (t *tx) Projects(ctx context.Context) ([]store.Project, error) {
	t.count("Projects")
	return t.tx.Projects(ctx)
}

func (s *Store) Member(ctx context.Context, id string) (store.Member, error) {
	s.c.count(onStore, "Member")
	return s.st.Member(ctx, id)
}

func (t *tx) Member(ctx context.Context, id string) (store.Member, error) {
	t.count("Member")
	return t.tx.Member(ctx, id)
}

func (s *Store) MemberByName(ctx context.Context, name string) (store.Member, error) {
	s.c.count(onStore, "MemberByName")
	return s.st.MemberByName(ctx, name)
}

func (t *tx) MemberByName(ctx context.Context, name string) (store.Member, error) {
	t.count("MemberByName")
	return t.tx.MemberByName(ctx, name)
}

func (s *Store) MemberProjects(ctx context.Context, member string) ([]string, error) {
	s.c.count(onStore, "MemberProjects")
	return s.st.MemberProjects(ctx, member)
}

func (t *tx) MemberProjects(ctx context.Context, member string) ([]string, error) {
	t.count("MemberProjects")
	return t.tx.MemberProjects(ctx, member)
}

func (s *Store) Session(ctx context.Context, digest []byte, now time.Time) (store.Session, error) {
	s.c.count(onStore, "Session")
	return s.st.Session(ctx, digest, now)
}

func (t *tx) Session(ctx context.Context, digest []byte, now time.Time) (store.Session, error) {
	t.count("Session")
	return t.tx.Session(ctx, digest, now)
}

func (s *Store) LiveSessions(ctx context.Context, member string, now time.Time) (int, error) {
	s.c.count(onStore, "LiveSessions")
	return s.st.LiveSessions(ctx, member, now)
}

func (t *tx) LiveSessions(ctx context.Context, member string, now time.Time) (int, error) {
	t.count("LiveSessions")
	return t.tx.LiveSessions(ctx, member, now)
}

func (s *Store) DelegateByToken(ctx context.Context, digest []byte, now time.Time) (store.Delegate, error) {
	s.c.count(onStore, "DelegateByToken")
	return s.st.DelegateByToken(ctx, digest, now)
}

func (t *tx) DelegateByToken(ctx context.Context, digest []byte, now time.Time) (store.Delegate, error) {
	t.count("DelegateByToken")
	return t.tx.DelegateByToken(ctx, digest, now)
}

func (s *Store) Delegates(ctx context.Context, member string) ([]store.Delegate, error) {
	s.c.count(onStore, "Delegates")
	return s.st.Delegates(ctx, member)
}

func (t *tx) Delegates(ctx context.Context, member string) ([]store.Delegate, error) {
	t.count("Delegates")
	return t.tx.Delegates(ctx, member)
}

func (s *Store) Card(ctx context.Context, id string) (store.Card, error) {
	s.c.count(onStore, "Card")
	return s.st.Card(ctx, id)
}

func (t *tx) Card(ctx context.Context, id string) (store.Card, error) {
	t.count("Card")
	return t.tx.Card(ctx, id)
}

func (s *Store) Cards(ctx context.Context, f store.CardFilter) ([]store.Card, error) {
	s.c.count(onStore, "Cards")
	return s.st.Cards(ctx, f)
}

func (t *tx) Cards(ctx context.Context, f store.CardFilter) ([]store.Card, error) {
	t.count("Cards")
	return t.tx.Cards(ctx, f)
}

func (s *Store) Agent(ctx context.Context, id string) (store.Agent, error) {
	s.c.count(onStore, "Agent")
	return s.st.Agent(ctx, id)
}

func (t *tx) Agent(ctx context.Context, id string) (store.Agent, error) {
	t.count("Agent")
	return t.tx.Agent(ctx, id)
}

func (s *Store) AgentByToken(ctx context.Context, digest []byte) (store.Agent, error) {
	s.c.count(onStore, "AgentByToken")
	return s.st.AgentByToken(ctx, digest)
}

func (t *tx) AgentByToken(ctx context.Context, digest []byte) (store.Agent, error) {
	t.count("AgentByToken")
	return t.tx.AgentByToken(ctx, digest)
}

func (s *Store) Agents(ctx context.Context, project string) ([]store.Agent, error) {
	s.c.count(onStore, "Agents")
	return s.st.Agents(ctx, project)
}

func (t *tx) Agents(ctx context.Context, project string) ([]store.Agent, error) {
	t.count("Agents")
	return t.tx.Agents(ctx, project)
}

func (s *Store) Connection(ctx context.Context, id string) (store.Connection, error) {
	s.c.count(onStore, "Connection")
	return s.st.Connection(ctx, id)
}

func (t *tx) Connection(ctx context.Context, id string) (store.Connection, error) {
	t.count("Connection")
	return t.tx.Connection(ctx, id)
}

func (s *Store) Connections(ctx context.Context, project string) ([]store.Connection, error) {
	s.c.count(onStore, "Connections")
	return s.st.Connections(ctx, project)
}

func (t *tx) Connections(ctx context.Context, project string) ([]store.Connection, error) {
	t.count("Connections")
	return t.tx.Connections(ctx, project)
}

func (s *Store) Sources(ctx context.Context, connection string) ([]store.Source, error) {
	s.c.count(onStore, "Sources")
	return s.st.Sources(ctx, connection)
}

func (t *tx) Sources(ctx context.Context, connection string) ([]store.Source, error) {
	t.count("Sources")
	return t.tx.Sources(ctx, connection)
}

func (s *Store) ToolLocks(ctx context.Context, connection string) ([]store.ToolLock, error) {
	s.c.count(onStore, "ToolLocks")
	return s.st.ToolLocks(ctx, connection)
}

func (t *tx) ToolLocks(ctx context.Context, connection string) ([]store.ToolLock, error) {
	t.count("ToolLocks")
	return t.tx.ToolLocks(ctx, connection)
}

func (s *Store) Release(ctx context.Context, id string, version string) (store.Release, error) {
	s.c.count(onStore, "Release")
	return s.st.Release(ctx, id, version)
}

func (t *tx) Release(ctx context.Context, id string, version string) (store.Release, error) {
	t.count("Release")
	return t.tx.Release(ctx, id, version)
}

func (s *Store) Installs(ctx context.Context, project string) ([]store.Install, error) {
	s.c.count(onStore, "Installs")
	return s.st.Installs(ctx, project)
}

func (t *tx) Installs(ctx context.Context, project string) ([]store.Install, error) {
	t.count("Installs")
	return t.tx.Installs(ctx, project)
}

func (s *Store) Nodes(ctx context.Context, project string) ([]store.Node, error) {
	s.c.count(onStore, "Nodes")
	return s.st.Nodes(ctx, project)
}

func (t *tx) Nodes(ctx context.Context, project string) ([]store.Node, error) {
	t.count("Nodes")
	return t.tx.Nodes(ctx, project)
}

func (s *Store) Decisions(ctx context.Context, project string) ([]store.Decision, error) {
	s.c.count(onStore, "Decisions")
	return s.st.Decisions(ctx, project)
}

func (t *tx) Decisions(ctx context.Context, project string) ([]store.Decision, error) {
	t.count("Decisions")
	return t.tx.Decisions(ctx, project)
}

func (s *Store) NodeCount(ctx context.Context, project string) (int, error) {
	s.c.count(onStore, "NodeCount")
	return s.st.NodeCount(ctx, project)
}

func (t *tx) NodeCount(ctx context.Context, project string) (int, error) {
	t.count("NodeCount")
	return t.tx.NodeCount(ctx, project)
}

func (s *Store) Lease(ctx context.Context, connection string) (store.Lease, error) {
	s.c.count(onStore, "Lease")
	return s.st.Lease(ctx, connection)
}

func (t *tx) Lease(ctx context.Context, connection string) (store.Lease, error) {
	t.count("Lease")
	return t.tx.Lease(ctx, connection)
}

func (s *Store) LeasesHead(ctx context.Context, project, connection string) ([]store.Lease, store.Head, error) {
	s.c.count(onStore, "LeasesHead")
	return s.st.LeasesHead(ctx, project, connection)
}

func (t *tx) LeasesHead(ctx context.Context, project, connection string) ([]store.Lease, store.Head, error) {
	t.count("LeasesHead")
	return t.tx.LeasesHead(ctx, project, connection)
}

func (s *Store) Leases(ctx context.Context, connection string) ([]store.Lease, error) {
	s.c.count(onStore, "Leases")
	return s.st.Leases(ctx, connection)
}

func (t *tx) Leases(ctx context.Context, connection string) ([]store.Lease, error) {
	t.count("Leases")
	return t.tx.Leases(ctx, connection)
}

func (s *Store) Schedule(ctx context.Context, id string) (store.Schedule, error) {
	s.c.count(onStore, "Schedule")
	return s.st.Schedule(ctx, id)
}

func (t *tx) Schedule(ctx context.Context, id string) (store.Schedule, error) {
	t.count("Schedule")
	return t.tx.Schedule(ctx, id)
}

func (s *Store) Schedules(ctx context.Context, project string) ([]store.Schedule, error) {
	s.c.count(onStore, "Schedules")
	return s.st.Schedules(ctx, project)
}

func (t *tx) Schedules(ctx context.Context, project string) ([]store.Schedule, error) {
	t.count("Schedules")
	return t.tx.Schedules(ctx, project)
}

func (s *Store) DueSchedules(ctx context.Context, before time.Time, limit int) ([]store.Schedule, error) {
	s.c.count(onStore, "DueSchedules")
	return s.st.DueSchedules(ctx, before, limit)
}

func (t *tx) DueSchedules(ctx context.Context, before time.Time, limit int) ([]store.Schedule, error) {
	t.count("DueSchedules")
	return t.tx.DueSchedules(ctx, before, limit)
}

func (s *Store) ScheduleFires(ctx context.Context, schedule string, limit int) ([]store.ScheduleFire, error) {
	s.c.count(onStore, "ScheduleFires")
	return s.st.ScheduleFires(ctx, schedule, limit)
}

func (t *tx) ScheduleFires(ctx context.Context, schedule string, limit int) ([]store.ScheduleFire, error) {
	t.count("ScheduleFires")
	return t.tx.ScheduleFires(ctx, schedule, limit)
}

func (s *Store) OpenScheduleFires(ctx context.Context, limit int) ([]store.ScheduleFire, error) {
	s.c.count(onStore, "OpenScheduleFires")
	return s.st.OpenScheduleFires(ctx, limit)
}

func (t *tx) OpenScheduleFires(ctx context.Context, limit int) ([]store.ScheduleFire, error) {
	t.count("OpenScheduleFires")
	return t.tx.OpenScheduleFires(ctx, limit)
}

func (s *Store) Budgets(ctx context.Context, project string) ([]store.Budget, error) {
	s.c.count(onStore, "Budgets")
	return s.st.Budgets(ctx, project)
}

func (t *tx) Budgets(ctx context.Context, project string) ([]store.Budget, error) {
	t.count("Budgets")
	return t.tx.Budgets(ctx, project)
}

func (s *Store) BudgetSpend(ctx context.Context, project string, budget string, window time.Time) (store.BudgetSpend, error) {
	s.c.count(onStore, "BudgetSpend")
	return s.st.BudgetSpend(ctx, project, budget, window)
}

func (t *tx) BudgetSpend(ctx context.Context, project string, budget string, window time.Time) (store.BudgetSpend, error) {
	t.count("BudgetSpend")
	return t.tx.BudgetSpend(ctx, project, budget, window)
}

func (s *Store) BudgetHolds(ctx context.Context, project string, budget string) ([]store.BudgetHold, error) {
	s.c.count(onStore, "BudgetHolds")
	return s.st.BudgetHolds(ctx, project, budget)
}

func (t *tx) BudgetHolds(ctx context.Context, project string, budget string) ([]store.BudgetHold, error) {
	t.count("BudgetHolds")
	return t.tx.BudgetHolds(ctx, project, budget)
}

func (s *Store) NoticeSubscription(ctx context.Context, id string) (store.NoticeSubscription, error) {
	s.c.count(onStore, "NoticeSubscription")
	return s.st.NoticeSubscription(ctx, id)
}

func (t *tx) NoticeSubscription(ctx context.Context, id string) (store.NoticeSubscription, error) {
	t.count("NoticeSubscription")
	return t.tx.NoticeSubscription(ctx, id)
}

func (s *Store) NoticeSubscriptions(ctx context.Context, project string, member string) ([]store.NoticeSubscription, error) {
	s.c.count(onStore, "NoticeSubscriptions")
	return s.st.NoticeSubscriptions(ctx, project, member)
}

func (t *tx) NoticeSubscriptions(ctx context.Context, project string, member string) ([]store.NoticeSubscription, error) {
	t.count("NoticeSubscriptions")
	return t.tx.NoticeSubscriptions(ctx, project, member)
}

func (s *Store) NoticeCursor(ctx context.Context, project string) (int64, error) {
	s.c.count(onStore, "NoticeCursor")
	return s.st.NoticeCursor(ctx, project)
}

func (t *tx) NoticeCursor(ctx context.Context, project string) (int64, error) {
	t.count("NoticeCursor")
	return t.tx.NoticeCursor(ctx, project)
}

func (s *Store) Notices(ctx context.Context, subscription string, limit int) ([]store.Notice, error) {
	s.c.count(onStore, "Notices")
	return s.st.Notices(ctx, subscription, limit)
}

func (t *tx) Notices(ctx context.Context, subscription string, limit int) ([]store.Notice, error) {
	t.count("Notices")
	return t.tx.Notices(ctx, subscription, limit)
}

func (t *tx) Append(ctx context.Context, e store.NewEvent) (store.Event, error) {
	t.count("Append")
	return t.tx.Append(ctx, e)
}

// AppendAll is one call, however many events it appends: what it costs the store is one
// statement (a chunk of rows each), not one per event.
func (t *tx) AppendAll(ctx context.Context, es []store.NewEvent) ([]store.Event, error) {
	t.count("AppendAll")
	return t.tx.AppendAll(ctx, es)
}

func (t *tx) LockHead(ctx context.Context, project string) (store.Head, error) {
	t.count("LockHead")
	return t.tx.LockHead(ctx, project)
}

func (t *tx) PutBlob(ctx context.Context, b []byte) (store.Hash, error) {
	t.count("PutBlob")
	return t.tx.PutBlob(ctx, b)
}

func (t *tx) SetInstallationKey(ctx context.Context, key []byte) error {
	t.count("SetInstallationKey")
	return t.tx.SetInstallationKey(ctx, key)
}

func (t *tx) CreateProject(ctx context.Context, p store.Project) error {
	t.count("CreateProject")
	return t.tx.CreateProject(ctx, p)
}

func (t *tx) CreateMember(ctx context.Context, m store.Member) error {
	t.count("CreateMember")
	return t.tx.CreateMember(ctx, m)
}

func (t *tx) AddMembership(ctx context.Context, project string, member string) error {
	t.count("AddMembership")
	return t.tx.AddMembership(ctx, project, member)
}

func (t *tx) RevokeMember(ctx context.Context, id string, at time.Time) error {
	t.count("RevokeMember")
	return t.tx.RevokeMember(ctx, id, at)
}

func (t *tx) CreateSession(ctx context.Context, s store.Session) error {
	t.count("CreateSession")
	return t.tx.CreateSession(ctx, s)
}

func (t *tx) RevokeSession(ctx context.Context, digest []byte, at time.Time) error {
	t.count("RevokeSession")
	return t.tx.RevokeSession(ctx, digest, at)
}

func (t *tx) CreateDelegate(ctx context.Context, d store.Delegate) error {
	t.count("CreateDelegate")
	return t.tx.CreateDelegate(ctx, d)
}

func (t *tx) RevokeDelegate(ctx context.Context, member string, id string, at time.Time) error {
	t.count("RevokeDelegate")
	return t.tx.RevokeDelegate(ctx, member, id, at)
}

func (t *tx) RevokeDelegates(ctx context.Context, member string, at time.Time) error {
	t.count("RevokeDelegates")
	return t.tx.RevokeDelegates(ctx, member, at)
}

func (t *tx) CreateCard(ctx context.Context, c store.Card) error {
	t.count("CreateCard")
	return t.tx.CreateCard(ctx, c)
}

func (t *tx) UpdateCard(ctx context.Context, c store.Card, from string) error {
	t.count("UpdateCard")
	return t.tx.UpdateCard(ctx, c, from)
}

func (t *tx) CreateAgent(ctx context.Context, a store.Agent) error {
	t.count("CreateAgent")
	return t.tx.CreateAgent(ctx, a)
}

func (t *tx) SetAgentToken(ctx context.Context, id string, digest []byte) error {
	t.count("SetAgentToken")
	return t.tx.SetAgentToken(ctx, id, digest)
}

func (t *tx) RevokeAgent(ctx context.Context, id string, at time.Time) error {
	t.count("RevokeAgent")
	return t.tx.RevokeAgent(ctx, id, at)
}

func (t *tx) CreateConnection(ctx context.Context, c store.Connection) error {
	t.count("CreateConnection")
	return t.tx.CreateConnection(ctx, c)
}

func (t *tx) RevokeConnection(ctx context.Context, id string, at time.Time) error {
	t.count("RevokeConnection")
	return t.tx.RevokeConnection(ctx, id, at)
}

func (t *tx) PutSource(ctx context.Context, s store.Source) error {
	t.count("PutSource")
	return t.tx.PutSource(ctx, s)
}

func (t *tx) DeleteSource(ctx context.Context, connection string, id string) error {
	t.count("DeleteSource")
	return t.tx.DeleteSource(ctx, connection, id)
}

func (t *tx) LockTool(ctx context.Context, l store.ToolLock) error {
	t.count("LockTool")
	return t.tx.LockTool(ctx, l)
}

func (t *tx) UnlockTool(ctx context.Context, connection string, tool string) error {
	t.count("UnlockTool")
	return t.tx.UnlockTool(ctx, connection, tool)
}

func (t *tx) PutRelease(ctx context.Context, r store.Release) (created bool, err error) {
	t.count("PutRelease")
	return t.tx.PutRelease(ctx, r)
}

func (t *tx) Install(ctx context.Context, in store.Install) error {
	t.count("Install")
	return t.tx.Install(ctx, in)
}

func (t *tx) PutNode(ctx context.Context, project string, n store.Node) error {
	t.count("PutNode")
	return t.tx.PutNode(ctx, project, n)
}

// PutNodes is one call, however many nodes it writes, as AppendAll is.
func (t *tx) PutNodes(ctx context.Context, project string, ns []store.Node) error {
	t.count("PutNodes")
	return t.tx.PutNodes(ctx, project, ns)
}

func (t *tx) DeleteNode(ctx context.Context, project string, id string) error {
	t.count("DeleteNode")
	return t.tx.DeleteNode(ctx, project, id)
}

func (t *tx) LockLease(ctx context.Context, project string, connection string) (store.Lease, error) {
	t.count("LockLease")
	return t.tx.LockLease(ctx, project, connection)
}

func (t *tx) LockLeases(ctx context.Context, project string, connection string) ([]store.Lease, error) {
	t.count("LockLeases")
	return t.tx.LockLeases(ctx, project, connection)
}

func (t *tx) LockLeasesHead(ctx context.Context, project string, connection string) ([]store.Lease, store.Head, error) {
	t.count("LockLeasesHead")
	return t.tx.LockLeasesHead(ctx, project, connection)
}

func (t *tx) PutLease(ctx context.Context, l store.Lease) error {
	t.count("PutLease")
	return t.tx.PutLease(ctx, l)
}

func (t *tx) RecordRequest(ctx context.Context, r store.Request) error {
	t.count("RecordRequest")
	return t.tx.RecordRequest(ctx, r)
}

func (t *tx) CreateSchedule(ctx context.Context, s store.Schedule) error {
	t.count("CreateSchedule")
	return t.tx.CreateSchedule(ctx, s)
}

func (t *tx) UpdateSchedule(ctx context.Context, s store.Schedule, was time.Time) error {
	t.count("UpdateSchedule")
	return t.tx.UpdateSchedule(ctx, s, was)
}

func (t *tx) RecordFire(ctx context.Context, f store.ScheduleFire) error {
	t.count("RecordFire")
	return t.tx.RecordFire(ctx, f)
}

func (t *tx) SettleFire(ctx context.Context, f store.ScheduleFire) error {
	t.count("SettleFire")
	return t.tx.SettleFire(ctx, f)
}

func (t *tx) DeleteBudget(ctx context.Context, project, name string) error {
	t.count("DeleteBudget")
	return t.tx.DeleteBudget(ctx, project, name)
}

func (t *tx) PutBudget(ctx context.Context, b store.Budget) error {
	t.count("PutBudget")
	return t.tx.PutBudget(ctx, b)
}

func (t *tx) PutBudgetSpend(ctx context.Context, s store.BudgetSpend) error {
	t.count("PutBudgetSpend")
	return t.tx.PutBudgetSpend(ctx, s)
}

func (t *tx) PutBudgetHold(ctx context.Context, h store.BudgetHold) error {
	t.count("PutBudgetHold")
	return t.tx.PutBudgetHold(ctx, h)
}

func (t *tx) DeleteBudgetHold(ctx context.Context, project string, id string) ([]store.BudgetHold, error) {
	t.count("DeleteBudgetHold")
	return t.tx.DeleteBudgetHold(ctx, project, id)
}

func (t *tx) RecordDecision(ctx context.Context, d store.Decision) error {
	t.count("RecordDecision")
	return t.tx.RecordDecision(ctx, d)
}

func (t *tx) CreateNoticeSubscription(ctx context.Context, s store.NoticeSubscription) error {
	t.count("CreateNoticeSubscription")
	return t.tx.CreateNoticeSubscription(ctx, s)
}

func (t *tx) DeleteNoticeSubscription(ctx context.Context, id string, at time.Time) error {
	t.count("DeleteNoticeSubscription")
	return t.tx.DeleteNoticeSubscription(ctx, id, at)
}

func (t *tx) AdvanceNoticeCursor(ctx context.Context, project string, from int64, to int64) error {
	t.count("AdvanceNoticeCursor")
	return t.tx.AdvanceNoticeCursor(ctx, project, from, to)
}

func (t *tx) AddNotice(ctx context.Context, n store.Notice) error {
	t.count("AddNotice")
	return t.tx.AddNotice(ctx, n)
}

func (t *tx) ClaimNotices(ctx context.Context, now time.Time, by string, until time.Time, limit int) ([]store.Notice, error) {
	t.count("ClaimNotices")
	return t.tx.ClaimNotices(ctx, now, by, until, limit)
}

func (t *tx) SettleNotice(ctx context.Context, n store.Notice) error {
	t.count("SettleNotice")
	return t.tx.SettleNotice(ctx, n)
}

func (s *Store) Verify(ctx context.Context, project string) (store.Head, error) {
	s.c.count(onStore, "Verify")
	return s.st.Verify(ctx, project)
}

func (s *Store) Wait(ctx context.Context, project string, after int64) (int64, error) {
	s.c.count(onStore, "Wait")
	return s.st.Wait(ctx, project, after)
}

func (s *Store) Close() error {
	s.c.count(onStore, "Close")
	return s.st.Close()
}

var (
	_ store.Store = (*Store)(nil)
	_ store.Tx    = (*tx)(nil)
)
