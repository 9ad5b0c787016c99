package authority_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// TestScenarios plays the multi-instance scenarios of testdata/scenarios: two authorities
// ("a" and "b", two docket serve) over one store, each with its own clock, stepped one
// command at a time, so that an interleaving a race only sometimes hits is written down
// and played every time. Each script runs on SQLite, and on PostgreSQL when
// DOCKET_TEST_POSTGRES names a server, and wants the same output on both. A script's
// commands (see scenario.run) make the agent's calls and a member's decisions, play
// workers on either instance, move a clock, make the COMMITs that append an event of a
// type fail, and print an Operation, or a Board's facts, as each instance sees them. go test -run TestScenarios -rewrite rewrites the
// expected output (review its diff).
func TestScenarios(t *testing.T) {
	for _, be := range scenarioBackends {
		t.Run(be.name, func(t *testing.T) {
			datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
				s := newScenario(t, be)
				datadriven.RunTest(t, path, s.run)
			})
		})
	}
}

// scenarioBackends are the stores a scenario runs on: SQLite always, PostgreSQL when
// DOCKET_TEST_POSTGRES names a server.
var scenarioBackends = []scenarioBackend{
	{"sqlite", func(t *testing.T) (store.Store, store.Store, func(string)) {
		path := filepath.Join(t.TempDir(), "docket.db")
		s1, s2 := openSQLite(t, path), openSQLite(t, path)
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return s1, s2, func(q string) {
			t.Helper()
			if _, err := db.ExecContext(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}, []string{
		`CREATE TABLE fail_at_commit (type TEXT PRIMARY KEY)`,
		`CREATE TABLE lost_parent (id TEXT PRIMARY KEY)`,
		`CREATE TABLE lost_child (parent TEXT REFERENCES lost_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE TRIGGER lost_at_commit AFTER INSERT ON events WHEN NEW.type IN (SELECT type FROM fail_at_commit)
		 BEGIN INSERT INTO lost_child VALUES ('none'); END`,
	}},
	{"postgres", func(t *testing.T) (store.Store, store.Store, func(string)) {
		dsn := authoritytest.PostgresDSN(t)
		return openPostgres(t, dsn), openPostgres(t, dsn), func(q string) {
			t.Helper()
			c, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}, []string{
		`CREATE TABLE fail_at_commit (type TEXT PRIMARY KEY)`,
		`CREATE FUNCTION lost_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN
		   IF EXISTS (SELECT 1 FROM fail_at_commit WHERE type = NEW.type) THEN
		     RAISE EXCEPTION 'this commit fails on purpose';
		   END IF;
		   RETURN NULL;
		 END $$`,
		`CREATE CONSTRAINT TRIGGER lost_at_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
		 FOR EACH ROW EXECUTE FUNCTION lost_at_commit()`,
	}},
}

// scenarioBackend is one kind of store a scenario runs on.
type scenarioBackend struct {
	name string
	// open returns two stores over one fresh database and a way to run SQL on it.
	open func(t *testing.T) (s1, s2 store.Store, exec func(q string))
	// failAtCommit is the SQL that makes a transaction fail at its COMMIT, after every
	// function in it returned nil, when it appended an event of a type listed in the
	// table fail_at_commit: a deferred constraint, checked only at COMMIT, fails it for
	// real.
	failAtCommit []string
}

// instance is one docket serve of a scenario.
type instance struct {
	a     *authority.Authority
	clock *authoritytest.Clock
	ops   *authority.Operations
	d     *operation.Dispatcher
}

// scenario is the hop fixture on instance a, a second instance b over the same store,
// and what the script's workers hold.
type scenario struct {
	f       *hopFixture
	exec    func(q string)
	in      map[string]*instance
	leases  map[string]*contract.Lease // by worker
	served  map[int64]contract.WorkRow // the row last served, by the Operation's ordinal
	ordinal map[string]int64           // the agent's fetches, by path
	workers map[string]*instance       // where each worker polls
	order   []string                   // the instances, in the order they print
	failing bool                       // fail-commit is armed
}

func newScenario(t *testing.T, be scenarioBackend) *scenario {
	t.Helper()
	s1, s2, exec := be.open(t)
	for _, q := range be.failAtCommit {
		exec(q)
	}
	f := newHopFixtureOn(t, opsFixtureOver(t, s1, time.Millisecond))
	b := authoritytest.NewClock(f.clock.Now())
	ab := authoritytest.Open(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: b.Now})
	opsB := authority.NewOperations(ab, operation.Config{HoldBound: time.Millisecond, RequestTTL: time.Hour})
	t.Cleanup(opsB.Operations().Close) // the follow goroutines of its driver, as serve ends them
	t.Cleanup(f.ops.Operations().Close)
	return &scenario{f: f, exec: exec,
		in: map[string]*instance{
			"a": {a: f.a, clock: f.clock, ops: f.ops, d: f.d},
			"b": {a: ab, clock: b, ops: opsB, d: authority.NewDispatcher(opsB,
				operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond})},
		},
		order:  []string{"a", "b"},
		leases: map[string]*contract.Lease{}, served: map[int64]contract.WorkRow{},
		ordinal: map[string]int64{}, workers: map[string]*instance{},
	}
}

// run plays one command of a script:
//
//	fetch path=P                  the agent, on a, calls the fetch Action of path P
//	mark topic=T                  the agent, on a, calls mark, which needs a person
//	decide on=I op=N verdict=V    a member decides Operation N's request on instance I
//	  [digest=D]                  naming digest D instead of the request's
//	lease on=I worker=W           W acquires the Connection's lease on instance I
//	poll worker=W [on=I]          W polls under its lease, where it acquired it or on I
//	claim worker=W op=N [on=I]    W claims the row of Operation N it was served
//	report worker=W op=N [on=I]   W reports Operation N done
//	release worker=W [on=I]       W releases its lease
//	reconcile op=N outcome=O      a member settles Operation N, on a
//	unlock on=I tool=T            a member unlocks Tool T on the Connection, on instance I
//	clock on=I add=D              instance I's clock moves on by D
//	fail-commit type=T            every COMMIT that appends an event of type T fails
//	heal                          COMMITs no longer fail
//	op N                          Operation N as each instance sees it
//	facts predicate=P             how many facts of P each instance's Board holds
func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	ctx := t.Context()
	f := s.f
	switch d.Cmd {
	case "fetch":
		var path string
		d.ScanArgs(t, "path", &path)
		return s.call(t, "fetch", contract.Args{"path": contract.StringValue(path)}, path)
	case "mark":
		var topic string
		d.ScanArgs(t, "topic", &topic)
		return s.call(t, "mark", contract.Args{"topic": contract.StringValue(topic)}, "")
	case "decide":
		var on, verdict string
		var n int64
		d.ScanArgs(t, "on", &on)
		d.ScanArgs(t, "op", &n)
		d.ScanArgs(t, "verdict", &verdict)
		in := s.instance(t, on)
		rs, err := in.ops.Operations().Requests(ctx, f.admin, "default")
		if err != nil {
			d.Fatalf(t, "Requests on %s: %v", on, err)
		}
		i := slices.IndexFunc(rs, func(r contract.Request) bool { return r.Ordinal == n })
		if i < 0 {
			d.Fatalf(t, "op %d raised no request", n)
		}
		dec := contract.Decision{Digest: rs[i].Digest, Verdict: contract.Verdict(verdict)}
		if d.HasArg("digest") {
			d.ScanArgs(t, "digest", &dec.Digest)
		}
		_, err = in.ops.Operations().Decide(ctx, f.admin, "default", rs[i].ID, dec)
		return s.outcome(err)
	case "lease":
		var on, worker string
		d.ScanArgs(t, "on", &on)
		d.ScanArgs(t, "worker", &worker)
		in := s.instance(t, on)
		ans, err := in.d.Poll(ctx, f.conn, contract.PollRequest{WorkerID: worker, Tools: fetchTool})
		if err != nil {
			return s.outcome(err)
		}
		s.leases[worker], s.workers[worker] = ans.Lease, in
		return fmt.Sprintf("%s holds generation %d", worker, ans.Lease.Generation)
	case "poll":
		worker, l, in := s.worker(t, d)
		gen := l.Generation
		ans, err := in.d.Poll(ctx, f.conn, contract.PollRequest{WorkerID: worker, Generation: &gen, Tools: fetchTool})
		if err != nil {
			return s.outcome(err)
		}
		if len(ans.Work) == 0 {
			return "served nothing"
		}
		var lines []string
		for _, r := range ans.Work {
			n := s.ordinalOf(t, r.ID)
			s.served[n] = r
			lines = append(lines, fmt.Sprintf("served op %d", n))
		}
		return strings.Join(lines, "\n")
	case "claim":
		worker, l, in := s.worker(t, d)
		row := s.row(t, d)
		_, err := in.d.Claim(ctx, f.conn, contract.ClaimRequest{ID: row.ID, WorkerID: worker, Generation: l.Generation, Grant: row.Grant})
		return s.outcome(err)
	case "report":
		worker, l, in := s.worker(t, d)
		row := s.row(t, d)
		_, err := in.d.Report(ctx, f.conn, okReport(l, row, worker+".txt"))
		return s.outcome(err)
	case "release":
		worker, l, in := s.worker(t, d)
		_, err := in.d.ReleaseLease(ctx, f.conn, contract.LeaseRequest{WorkerID: worker, Generation: l.Generation})
		return s.outcome(err)
	case "reconcile":
		var o string
		d.ScanArgs(t, "outcome", &o)
		row := s.row(t, d)
		_, err := f.d.Reconcile(ctx, f.admin, "default", row.ID, contract.ReconcileRequest{Outcome: o, Reason: "settled by the script"})
		return s.outcome(err)
	case "unlock":
		var on, tool string
		d.ScanArgs(t, "on", &on)
		d.ScanArgs(t, "tool", &tool)
		_, err := s.instance(t, on).a.Directory().UnlockTool(ctx, f.admin, "default", "laptop", tool)
		return s.outcome(err)
	case "clock":
		var on, add string
		d.ScanArgs(t, "on", &on)
		d.ScanArgs(t, "add", &add)
		by, err := time.ParseDuration(add)
		if err != nil {
			d.Fatalf(t, "clock add=%s: %v", add, err)
		}
		s.instance(t, on).clock.Add(by)
		return ""
	case "fail-commit":
		var typ string
		d.ScanArgs(t, "type", &typ)
		s.exec(fmt.Sprintf(`INSERT INTO fail_at_commit (type) VALUES ('%s')`, typ))
		s.failing = true
		return ""
	case "heal":
		s.exec(`DELETE FROM fail_at_commit`)
		s.failing = false
		return ""
	case "op":
		if len(d.CmdArgs) != 1 {
			d.Fatalf(t, "op wants one argument, the Operation's ordinal")
		}
		var n int64
		if _, err := fmt.Sscan(d.CmdArgs[0].Key, &n); err != nil {
			d.Fatalf(t, "op %s: %v", d.CmdArgs[0].Key, err)
		}
		var lines []string
		for _, name := range s.order {
			lines = append(lines, name+": "+s.seen(t, name, n))
		}
		return strings.Join(lines, "\n")
	case "facts":
		var pred string
		d.ScanArgs(t, "predicate", &pred)
		var lines []string
		for _, name := range s.order {
			n := 0
			if err := s.in[name].a.View(ctx, "default", func(b *board.Board) error {
				for _, nd := range b.Nodes() {
					if nd.Atom != nil && nd.Atom.Predicate == pred {
						n++
					}
				}
				return nil
			}); err != nil {
				d.Fatalf(t, "View on %s: %v", name, err)
			}
			lines = append(lines, fmt.Sprintf("%s: %d", name, n))
		}
		return strings.Join(lines, "\n")
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// outcome is what a call answered: ok, or the code of its refusal. While fail-commit
// is armed a failure is the COMMIT's, whose code is the backend's own for the constraint
// that fails it (on SQLite a foreign key, which reads as not_found), so it is said alike.
func (s *scenario) outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if s.failing {
		return "error: the COMMIT failed"
	}
	if c := contract.CodeOf(err); c != "" {
		return "error: " + string(c)
	}
	return "error (no code)"
}

// seen is Operation n's state and stage as instance name's strip shows them.
func (s *scenario) seen(t *testing.T, name string, n int64) string {
	t.Helper()
	st, err := s.in[name].ops.Operations().State(t.Context(), s.f.agent)
	if err != nil {
		t.Fatalf("State on %s: %v", name, err)
	}
	i := slices.IndexFunc(st.State, func(e contract.OperationSlot) bool { return e.Ordinal == n })
	if i < 0 {
		return fmt.Sprintf("no op %d", n)
	}
	if e := st.State[i]; e.Stage != "" {
		return fmt.Sprintf("%s/%s", e.State, e.Stage)
	}
	return string(st.State[i].State)
}

// call is the agent's call, on a, of Action action with params; path, when set, names
// the fetch so that the rows served for it are known by its ordinal.
func (s *scenario) call(t *testing.T, action string, params contract.Args, path string) string {
	t.Helper()
	f := s.f
	ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: contract.ToolApplyAction,
		Input:     &contract.ApplyActionInput{Action: action, Params: params},
		Delivered: func(int64) bool { return true }})
	if err != nil {
		return s.outcome(err)
	}
	if ans.Meta.Ordinal == 0 {
		return "refused: " + string(ans.Result.ErrorCode)
	}
	if path != "" {
		s.ordinal[path] = ans.Meta.Ordinal
	}
	return fmt.Sprintf("op %d: %s", ans.Meta.Ordinal, s.seen(t, "a", ans.Meta.Ordinal))
}

func (s *scenario) instance(t *testing.T, name string) *instance {
	t.Helper()
	in, ok := s.in[name]
	if !ok {
		t.Fatalf("no instance %q: the scenario has a and b", name)
	}
	return in
}

// worker returns the worker the command names, its lease and the instance it polls.
func (s *scenario) worker(t *testing.T, d *datadriven.TestData) (string, *contract.Lease, *instance) {
	t.Helper()
	var w string
	d.ScanArgs(t, "worker", &w)
	l, ok := s.leases[w]
	if !ok {
		d.Fatalf(t, "worker %s holds no lease: lease it first", w)
	}
	if d.HasArg("on") { // a worker's request may reach any serve
		var on string
		d.ScanArgs(t, "on", &on)
		return w, l, s.instance(t, on)
	}
	return w, l, s.workers[w]
}

// row returns the row last served for the Operation the command names (op=N).
func (s *scenario) row(t *testing.T, d *datadriven.TestData) contract.WorkRow {
	t.Helper()
	var n int64
	d.ScanArgs(t, "op", &n)
	r, ok := s.served[n]
	if !ok {
		d.Fatalf(t, "op %d was never served", n)
	}
	return r
}

// ordinalOf is the ordinal of the agent's Operation whose work id is id.
func (s *scenario) ordinalOf(t *testing.T, id string) int64 {
	t.Helper()
	for _, n := range s.ordinal {
		if operation.WorkID(s.f.agent.ID, n) == id {
			return n
		}
	}
	t.Fatalf("work %s is none of the script's fetches", id)
	return 0
}
