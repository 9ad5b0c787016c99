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
	reader // the reads, counted as made on the Store
	st     store.Store
}

// Wrap returns st counted.
func Wrap(st store.Store) *Store {
	c := &counter{calls: map[string]int64{}, headsFrom: map[string]int64{}, fromOf: map[fromKey]string{}}
	return &Store{reader: reader{r: st, c: c, w: onStore}, st: st}
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
		// 3 skips Callers, this and reader.count, the one way a head read reaches here: the
		// stack starts at the method read, and keeps its 16 frames for the callers above.
		runtime.Callers(3, fk.pcs[:])
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
		in := &tx{reader: reader{r: t, c: s.c, w: inTx}, tx: t}
		err := fn(in)
		s.c.endTx(in.heads)
		return err
	})
}

// reader is a store.Reader that counts its calls, each method written once for the
// Store and its transactions: they differ only in where a call is counted.
type reader struct {
	r     store.Reader
	c     *counter
	w     where
	heads int64 // the head reads made in a transaction; the Store (shared) keeps none
}

// count counts a call made on r, and a transaction's head read in it.
func (r *reader) count(name string) {
	if r.c.count(r.w, name) && r.w == inTx {
		r.heads++
	}
}

// tx is a store.Tx that counts its calls: its reads through reader, its writes below.
type tx struct {
	reader
	tx store.Tx
}

func (r *reader) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	r.count("Events")
	return r.r.Events(ctx, project, after, limit)
}

func (r *reader) Head(ctx context.Context, project string) (store.Head, error) {
	r.count("Head")
	return r.r.Head(ctx, project)
}

func (r *reader) Blob(ctx context.Context, hash store.Hash) ([]byte, error) {
	r.count("Blob")
	return r.r.Blob(ctx, hash)
}

func (r *reader) InstallationKey(ctx context.Context) ([]byte, error) {
	r.count("InstallationKey")
	return r.r.InstallationKey(ctx)
}

func (r *reader) Project(ctx context.Context, id string) (store.Project, error) {
	r.count("Project")
	return r.r.Project(ctx, id)
}

func (r *reader) Projects(ctx context.Context) ([]store.Project, error) {
	r.count("Projects")
	return r.r.Projects(ctx)
}

func (r *reader) Member(ctx context.Context, id string) (store.Member, error) {
	r.count("Member")
	return r.r.Member(ctx, id)
}

func (r *reader) MemberByName(ctx context.Context, name string) (store.Member, error) {
	r.count("MemberByName")
	return r.r.MemberByName(ctx, name)
}

func (r *reader) MemberProjects(ctx context.Context, member string) ([]string, error) {
	r.count("MemberProjects")
	return r.r.MemberProjects(ctx, member)
}

func (r *reader) Session(ctx context.Context, digest []byte, now time.Time) (store.Session, error) {
	r.count("Session")
	return r.r.Session(ctx, digest, now)
}

func (r *reader) LiveSessions(ctx context.Context, member string, now time.Time) (int, error) {
	r.count("LiveSessions")
	return r.r.LiveSessions(ctx, member, now)
}

func (r *reader) DelegateByToken(ctx context.Context, digest []byte, now time.Time) (store.Delegate, error) {
	r.count("DelegateByToken")
	return r.r.DelegateByToken(ctx, digest, now)
}

func (r *reader) Delegates(ctx context.Context, member string) ([]store.Delegate, error) {
	r.count("Delegates")
	return r.r.Delegates(ctx, member)
}

func (r *reader) Card(ctx context.Context, id string) (store.Card, error) {
	r.count("Card")
	return r.r.Card(ctx, id)
}

func (r *reader) Cards(ctx context.Context, f store.CardFilter) ([]store.Card, error) {
	r.count("Cards")
	return r.r.Cards(ctx, f)
}

func (r *reader) Agent(ctx context.Context, id string) (store.Agent, error) {
	r.count("Agent")
	return r.r.Agent(ctx, id)
}

func (r *reader) AgentByToken(ctx context.Context, digest []byte) (store.Agent, error) {
	r.count("AgentByToken")
	return r.r.AgentByToken(ctx, digest)
}

func (r *reader) Agents(ctx context.Context, project string) ([]store.Agent, error) {
	r.count("Agents")
	return r.r.Agents(ctx, project)
}

func (r *reader) Connection(ctx context.Context, id string) (store.Connection, error) {
	r.count("Connection")
	return r.r.Connection(ctx, id)
}

func (r *reader) Connections(ctx context.Context, project string) ([]store.Connection, error) {
	r.count("Connections")
	return r.r.Connections(ctx, project)
}

func (r *reader) Sources(ctx context.Context, connection string) ([]store.Source, error) {
	r.count("Sources")
	return r.r.Sources(ctx, connection)
}

func (r *reader) ToolLocks(ctx context.Context, connection string) ([]store.ToolLock, error) {
	r.count("ToolLocks")
	return r.r.ToolLocks(ctx, connection)
}

func (r *reader) Release(ctx context.Context, id string, version string) (store.Release, error) {
	r.count("Release")
	return r.r.Release(ctx, id, version)
}

func (r *reader) Installs(ctx context.Context, project string) ([]store.Install, error) {
	r.count("Installs")
	return r.r.Installs(ctx, project)
}

func (r *reader) Nodes(ctx context.Context, project string) ([]store.Node, error) {
	r.count("Nodes")
	return r.r.Nodes(ctx, project)
}

func (r *reader) Decisions(ctx context.Context, project string) ([]store.Decision, error) {
	r.count("Decisions")
	return r.r.Decisions(ctx, project)
}

func (r *reader) NodeCount(ctx context.Context, project string) (int, error) {
	r.count("NodeCount")
	return r.r.NodeCount(ctx, project)
}

func (r *reader) Lease(ctx context.Context, connection string) (store.Lease, error) {
	r.count("Lease")
	return r.r.Lease(ctx, connection)
}

func (r *reader) LeasesHead(ctx context.Context, project, connection string) ([]store.Lease, store.Head, error) {
	r.count("LeasesHead")
	return r.r.LeasesHead(ctx, project, connection)
}

func (r *reader) Leases(ctx context.Context, connection string) ([]store.Lease, error) {
	r.count("Leases")
	return r.r.Leases(ctx, connection)
}

func (r *reader) Schedule(ctx context.Context, id string) (store.Schedule, error) {
	r.count("Schedule")
	return r.r.Schedule(ctx, id)
}

func (r *reader) Schedules(ctx context.Context, project string) ([]store.Schedule, error) {
	r.count("Schedules")
	return r.r.Schedules(ctx, project)
}

func (r *reader) DueSchedules(ctx context.Context, before time.Time, limit int) ([]store.Schedule, error) {
	r.count("DueSchedules")
	return r.r.DueSchedules(ctx, before, limit)
}

func (r *reader) ScheduleFires(ctx context.Context, schedule string, limit int) ([]store.ScheduleFire, error) {
	r.count("ScheduleFires")
	return r.r.ScheduleFires(ctx, schedule, limit)
}

func (r *reader) OpenScheduleFires(ctx context.Context, limit int) ([]store.ScheduleFire, error) {
	r.count("OpenScheduleFires")
	return r.r.OpenScheduleFires(ctx, limit)
}

func (r *reader) Budgets(ctx context.Context, project string) ([]store.Budget, error) {
	r.count("Budgets")
	return r.r.Budgets(ctx, project)
}

func (r *reader) BudgetSpend(ctx context.Context, project string, budget string, window time.Time) (store.BudgetSpend, error) {
	r.count("BudgetSpend")
	return r.r.BudgetSpend(ctx, project, budget, window)
}

func (r *reader) BudgetHolds(ctx context.Context, project string, budget string) ([]store.BudgetHold, error) {
	r.count("BudgetHolds")
	return r.r.BudgetHolds(ctx, project, budget)
}

func (r *reader) NoticeSubscription(ctx context.Context, id string) (store.NoticeSubscription, error) {
	r.count("NoticeSubscription")
	return r.r.NoticeSubscription(ctx, id)
}

func (r *reader) NoticeSubscriptions(ctx context.Context, project string, member string) ([]store.NoticeSubscription, error) {
	r.count("NoticeSubscriptions")
	return r.r.NoticeSubscriptions(ctx, project, member)
}

func (r *reader) NoticeCursor(ctx context.Context, project string) (int64, error) {
	r.count("NoticeCursor")
	return r.r.NoticeCursor(ctx, project)
}

func (r *reader) Notices(ctx context.Context, subscription string, limit int) ([]store.Notice, error) {
	r.count("Notices")
	return r.r.Notices(ctx, subscription, limit)
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
