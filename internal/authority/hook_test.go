package authority_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// hookFixture is a project with the coding-agent Agent coder and the orchestrator boss,
// under the policies of testdata/hook.
type hookFixture struct {
	a           *authority.Authority
	st          store.Store
	ops         *authority.Operations
	admin       identity.Caller
	coder, boss identity.Caller
}

func newHookFixture(t *testing.T) *hookFixture {
	t.Helper()
	return newHookFixtureOver(t, openSQLite(t, filepath.Join(t.TempDir(), "docket.db")))
}

// newHookFixtureOver is newHookFixture over st.
func newHookFixtureOver(t *testing.T, st store.Store) *hookFixture {
	t.Helper()
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{9}, Agent: "coder"})
	f := &hookFixture{a: p.A, st: st, admin: p.Admin, coder: hookToken(t, p.A, p.Admin, "coder"), ops: authority.NewOperations(p.A, operation.Config{})}
	at, err := p.A.Directory().CreateAgent(t.Context(), p.Admin, "default", contract.CreateAgentRequest{Name: "boss", Kind: "orchestrator"})
	if err != nil {
		t.Fatal(err)
	}
	if f.boss, err = p.A.Directory().Authenticate(t.Context(), identity.Token(at.Token)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"delegation.toml", "hook.toml"} {
		text, err := os.ReadFile(filepath.Join("testdata", "hook", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.A.PublishPolicy(t.Context(), p.Admin, "default", contract.PublishPolicyRequest{File: name, Text: string(text)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// hookToken gives the Agent name a hook token, as docket hook install does, and returns
// the Agent as that token proves it.
func hookToken(t testing.TB, a *authority.Authority, admin identity.Caller, name string) identity.Caller {
	t.Helper()
	at, err := a.Directory().ReplaceHookToken(t.Context(), admin, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// orchView returns the orchestrator's View, as QueryBoard answers it.
func (f *hookFixture) orchView(t *testing.T) contract.View {
	t.Helper()
	ans, err := f.ops.Call(t.Context(), f.boss, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}})
	if err != nil {
		t.Error(err)
	}
	return ans.Result.View
}

func hookCall(id, tool, input, path, command string, wait time.Duration) contract.HookCall {
	return contract.HookCall{CLI: "claude-code", CallID: id, Tool: tool, Input: json.RawMessage(input), Path: path, Command: command, WaitMillis: wait.Milliseconds()}
}

// decideWhenRaised decides, as decide says, the first pending request the authority
// lists while the hook waits; it returns once it has.
func (f *hookFixture) decideWhenRaised(t *testing.T, decide func(r contract.Request)) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		for ctx.Err() == nil {
			head, err := f.st.Head(ctx, "default")
			if err != nil {
				t.Error(err)
				return
			}
			rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
			if err != nil {
				t.Error(err)
				return
			}
			for _, r := range rs {
				if r.State == contract.RequestPending {
					decide(r)
					return
				}
			}
			if _, err := f.st.Wait(ctx, "default", head.Seq); err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
		}
	})
	return &wg
}

func TestOperations_Hook(t *testing.T) {
	type want struct {
		allow     bool
		mode      string
		code      contract.Code
		decidedBy string // "boss", "admin" or ""
		decision  string
	}
	tests := []struct {
		name string
		call contract.HookCall
		// decider, when set, decides the raised request: "boss" through docket.decide, "admin" as a member.
		decider, verdict string
		want             want
	}{
		{name: "free tool runs at once", call: hookCall("c1", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0),
			want: want{allow: true, mode: contract.HookFree, decision: "free"}},
		{name: "refused tool never waits", call: hookCall("c1", "WebFetch", `{"url":"https://example.org"}`, "", "", time.Minute),
			want: want{mode: contract.HookRefuse, code: contract.CodeHookProfileRefuses, decision: "refused"}},
		{name: "docs edit decided by the orchestrator", call: hookCall("c1", "Edit", `{"file_path":"/r/docs/x.md","old_string":"a","new_string":"b"}`, "docs/x.md", "", time.Minute),
			decider: "boss", verdict: "approve", want: want{allow: true, mode: contract.HookDecide, decidedBy: "boss", decision: "approved"}},
		{name: "go test decided by the orchestrator", call: hookCall("c1", "Bash", `{"command":"go test ./..."}`, "", "go test ./...", time.Minute),
			decider: "boss", verdict: "approve", want: want{allow: true, mode: contract.HookDecide, decidedBy: "boss", decision: "approved"}},
		{name: "shell syntax goes to a member who denies", call: hookCall("c1", "Bash", `{"command":"go test ./... && curl x"}`, "", "go test ./... && curl x", time.Minute),
			decider: "admin", verdict: "deny", want: want{mode: contract.HookDecide, code: contract.CodeHookDenied, decidedBy: "admin", decision: "denied"}},
		{name: "edit outside docs goes to a member", call: hookCall("c1", "Edit", `{"file_path":"/r/main.go","old_string":"a","new_string":"b"}`, "main.go", "", time.Minute),
			decider: "admin", verdict: "approve", want: want{allow: true, mode: contract.HookDecide, decidedBy: "admin", decision: "approved"}},
		{name: "a path that left the repository through a link goes to a member", call: hookCall("c1", "Edit", `{"file_path":"/r/docs/link.md"}`, "/etc/passwd", "", time.Minute),
			decider: "admin", verdict: "deny", want: want{mode: contract.HookDecide, code: contract.CodeHookDenied, decidedBy: "admin", decision: "denied"}},
		{name: "no decision within the bound is denied and withdrawn", call: hookCall("c1", "Bash", `{"command":"rm -rf build"}`, "", "rm -rf build", time.Millisecond),
			want: want{mode: contract.HookDecide, code: contract.CodeHookUndecided, decision: "expired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHookFixture(t)
			var wg *sync.WaitGroup
			switch tt.decider {
			case "boss":
				wg = f.decideWhenRaised(t, func(contract.Request) {
					v := f.orchView(t)
					if len(v.Decisions.Items) != 1 {
						t.Errorf("the orchestrator's View lists %d decisions, want 1", len(v.Decisions.Items))
						return
					}
					in := decideIn(v.Decisions.Items[0], tt.verdict)
					if _, err := f.ops.Call(t.Context(), f.boss, operation.Call{Tool: contract.ToolApplyAction, Input: in}); err != nil {
						t.Error(err)
					}
				})
			case "admin":
				wg = f.decideWhenRaised(t, func(r contract.Request) {
					if v := f.orchView(t); len(v.Decisions.Items) != 0 {
						t.Errorf("the orchestrator may decide %v, which no class covers", v.Decisions.Items)
					}
					if _, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.Verdict(tt.verdict), Reason: "not this one"}); err != nil {
						t.Error(err)
					}
				})
			}
			v, err := f.ops.Operations().Hook(t.Context(), f.coder, tt.call)
			if err != nil {
				t.Fatal(err)
			}
			if wg != nil {
				wg.Wait()
			}
			by := map[string]contract.Principal{"boss": f.boss.Principal(), "admin": f.admin.Principal()}[tt.want.decidedBy]
			got := want{allow: v.Allow, mode: v.Mode, code: v.ErrorCode, decidedBy: tt.want.decidedBy, decision: tt.want.decision}
			if v.DecidedBy != by {
				t.Errorf("decided by %q, want %q", v.DecidedBy, by)
			}
			calls, err := f.ops.Operations().HookCalls(t.Context(), f.admin, "default", contract.AgentID(f.coder.ID))
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 {
				t.Fatalf("HookCalls lists %d calls, want 1", len(calls))
			}
			got.decision = calls[0].Decision
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if !v.Allow && !strings.Contains(v.Reason, "do not try it another way") {
				t.Errorf("a denial's reason %q does not teach the coding agent", v.Reason)
			}
			if calls[0].HookPolicy != 2 {
				t.Errorf("the call records hook policy version %d, want 2, the one published", calls[0].HookPolicy)
			}
			if calls[0].Digest != v.Digest || calls[0].Tool != tt.call.Tool || calls[0].Path != tt.call.Path || calls[0].Command != tt.call.Command {
				t.Errorf("the listed call %+v is not the call made %+v (digest %s)", calls[0], tt.call, v.Digest)
			}
		})
	}
}

// TestOperations_HookDigest shows what the digest binds: the tool, the input in
// canonical form, and the resolved path — a link swapped in makes another call.
func TestOperations_HookDigest(t *testing.T) {
	f := newHookFixture(t)
	digest := func(id, tool, input, path string) string {
		t.Helper()
		v, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall(id, tool, input, path, "", 0))
		if err != nil {
			t.Fatal(err)
		}
		return v.Digest
	}
	base := digest("a", "Edit", `{"file_path":"/r/docs/x.md","new_string":"b"}`, "docs/x.md")
	tests := []struct {
		name, tool, input, path string
		same                    bool
	}{
		{"key order and spacing do not matter", "Edit", `{ "new_string": "b", "file_path": "/r/docs/x.md" }`, "docs/x.md", true},
		{"another resolved path is another call", "Edit", `{"file_path":"/r/docs/x.md","new_string":"b"}`, "secrets/x.md", false},
		{"another input is another call", "Edit", `{"file_path":"/r/docs/x.md","new_string":"c"}`, "docs/x.md", false},
		{"another tool is another call", "Write", `{"file_path":"/r/docs/x.md","new_string":"b"}`, "docs/x.md", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := digest(string(rune('b'+i)), tt.tool, tt.input, tt.path); (got == base) != tt.same {
				t.Errorf("digest %s against %s: same = %v, want %v", got, base, got == base, tt.same)
			}
		})
	}
}

func TestOperations_HookOutcome(t *testing.T) {
	f := newHookFixture(t)
	if _, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("toolu_1", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0)); err != nil {
		t.Fatal(err)
	}
	exit := int64(0)
	out := contract.HookOutcome{CallID: "toolu_1", Tool: "Read", OK: true, ExitCode: &exit, OutputDigest: "sha256:" + strings.Repeat("ab", 32), OutputBytes: 12}
	for range 2 { // a second report of the same call keeps the first
		if _, err := f.ops.Operations().HookOutcome(t.Context(), f.coder, out); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := f.ops.Operations().HookCalls(t.Context(), f.admin, "default", contract.AgentID(f.coder.ID))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&out, calls[0].Outcome); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	refusals := []struct {
		name string
		c    identity.Caller
		out  contract.HookOutcome
		code contract.Code
	}{
		{"a call never reported before it ran", f.coder, contract.HookOutcome{CallID: "toolu_9", Tool: "Bash", OutputDigest: out.OutputDigest}, contract.CodeHookUnknownCall},
		{"no digest", f.coder, contract.HookOutcome{CallID: "toolu_1", Tool: "Read"}, contract.CodeInvalidArgument},
		{"a member", f.admin, out, contract.CodeForbidden},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.ops.Operations().HookOutcome(t.Context(), tt.c, tt.out); contract.CodeOf(err) != tt.code {
				t.Errorf("err = %v, want %s", err, tt.code)
			}
		})
	}
	n, err := f.a.VerifyEvents(t.Context(), f.admin, "default")
	if err != nil || !n.OK {
		t.Fatalf("events verify: %+v, %v", n, err)
	}
}

// TestOperations_HookOutsideWriteGate shows a pending hook call neither holds up the
// Agent's Board writes nor another hook call.
func TestOperations_HookOutsideWriteGate(t *testing.T) {
	f := newHookFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := f.ops.Operations().Hook(ctx, f.coder, hookCall("slow", "Bash", `{"command":"make"}`, "", "make", time.Hour/2)); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})
	waitPending(t, f, 1)
	v, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("fast", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0))
	if err != nil || !v.Allow {
		t.Fatalf("a free call while another waits: %+v, %v", v, err)
	}
	cancel()
	wg.Wait()
	calls, err := f.ops.Operations().HookCalls(t.Context(), f.admin, "default", contract.AgentID(f.coder.ID))
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].Decision != "expired" || calls[0].State != contract.OpRefused {
		t.Errorf("the call whose hook stopped waiting is %s, %s; want expired, refused", calls[0].Decision, calls[0].State)
	}
}

func waitPending(t *testing.T, f *hookFixture, n int) {
	t.Helper()
	for {
		head, err := f.st.Head(t.Context(), "default")
		if err != nil {
			t.Fatal(err)
		}
		rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) >= n {
			return
		}
		if _, err := f.st.Wait(t.Context(), "default", head.Seq); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOperations_HookAcrossInstances: a hook held on one instance is woken by a member's
// decision on another sharing the store, and an outcome reported to either is listed by
// both.
func TestOperations_HookAcrossInstances(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			key := identity.Key{4}
			p := authoritytest.New(t, authoritytest.Options{Store: s1, Key: key, Agent: "coder"})
			b := newAuthorityOn(t, s2, key)
			if err := b.Restore(t.Context()); err != nil {
				t.Fatal(err)
			}
			opsA, opsB := authority.NewOperations(p.A, operation.Config{}), authority.NewOperations(b, operation.Config{})
			coder := hookToken(t, p.A, p.Admin, "coder")
			var wg sync.WaitGroup
			verdict := make(chan contract.HookVerdict, 1)
			wg.Go(func() {
				v, err := opsA.Operations().Hook(t.Context(), coder, hookCall("toolu_1", "Bash", `{"command":"make"}`, "", "make", time.Minute))
				if err != nil {
					t.Error(err)
				}
				verdict <- v
			})
			for {
				head, err := s2.Head(t.Context(), "default")
				if err != nil {
					t.Fatal(err)
				}
				rs, err := opsB.Operations().Requests(t.Context(), p.Admin, "default")
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) == 1 {
					if _, err := opsB.Operations().Decide(t.Context(), p.Admin, "default", rs[0].ID, contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictApprove}); err != nil {
						t.Fatal(err)
					}
					break
				}
				if _, err := s2.Wait(t.Context(), "default", head.Seq); err != nil {
					t.Fatal(err)
				}
			}
			wg.Wait()
			if v := <-verdict; !v.Allow || v.DecidedBy != p.Admin.Principal() {
				t.Fatalf("the hook held on A was answered %+v, want allowed by the member deciding on B", v)
			}
			out := contract.HookOutcome{CallID: "toolu_1", Tool: "Bash", OK: true, OutputDigest: "sha256:" + strings.Repeat("cd", 32), OutputBytes: 1}
			if _, err := opsB.Operations().HookOutcome(t.Context(), coder, out); err != nil {
				t.Fatal(err)
			}
			for name, ops := range map[string]*authority.Operations{"A": opsA, "B": opsB} {
				calls, err := ops.Operations().HookCalls(t.Context(), p.Admin, "default", contract.AgentID(p.Agent.ID))
				if err != nil {
					t.Fatal(err)
				}
				if len(calls) != 1 || calls[0].Decision != "approved" || calls[0].Outcome == nil {
					t.Errorf("%s lists %+v, want the approved call with its outcome", name, calls)
				}
			}
		})
	}
}

// TestOperations_HookPathFindings: what the hook found where a path lands decides who may
// decide the call. A path that does not land plainly inside the repository is a member's
// to decide, even under an orchestrator's class and even for a free tool, and the member
// is shown what the hook found; a protected path is refused whatever the policy says.
func TestOperations_HookPathFindings(t *testing.T) {
	const found = `"docs/evil/../x.md" is absolute, empty or climbs out with ".."; it resolves to "/elsewhere/x.md"`
	tests := []struct {
		name      string
		call      contract.HookCall
		allow     bool
		mode      string
		code      contract.Code
		state     contract.OperationState
		memberDec bool // a member is asked, and approves
	}{
		{name: "an edit under a class, not plain, goes to a member",
			call:  withFinding(hookCall("c1", "Edit", `{"file_path":"/r/docs/evil/../x.md"}`, "/elsewhere/x.md", "", time.Minute), found, ""),
			allow: true, mode: contract.HookDecide, state: contract.OpDone, memberDec: true},
		{name: "dot-dot that stays inside is not covered either",
			call:  withFinding(hookCall("c1", "Edit", `{"file_path":"/r/docs/../docs/a.md"}`, "docs/a.md", "", time.Minute), found, ""),
			allow: true, mode: contract.HookDecide, state: contract.OpDone, memberDec: true},
		{name: "a free tool outside the repository waits for a member",
			call:  withFinding(hookCall("c1", "Read", `{"file_path":"/etc/passwd"}`, "/etc/passwd", "", time.Minute), `"/etc/passwd" is outside the repository as written`, ""),
			allow: true, mode: contract.HookDecide, state: contract.OpDone, memberDec: true},
		{name: "a free tool on a protected path is refused",
			call: withFinding(hookCall("c1", "Read", `{"file_path":"/r/.claude/docket/agent.token"}`, ".claude/docket/agent.token", "", time.Minute), "", "the hook's token"),
			mode: contract.HookRefuse, code: contract.CodeHookProtected, state: contract.OpRefused},
		{name: "an edit under a class on a protected path is refused",
			call: withFinding(hookCall("c1", "Edit", `{"file_path":"/r/docs/id_rsa"}`, "docs/id_rsa", "", time.Minute), "", "a key's name"),
			mode: contract.HookRefuse, code: contract.CodeHookProtected, state: contract.OpRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHookFixture(t)
			var wg *sync.WaitGroup
			if tt.memberDec {
				wg = f.decideWhenRaised(t, func(r contract.Request) {
					if !strings.Contains(r.MemberOnly, tt.call.PathNeedsMember) {
						t.Errorf("the member is shown %q, not what the hook found (%q)", r.MemberOnly, tt.call.PathNeedsMember)
					}
					if v := f.orchView(t); len(v.Decisions.Items) != 0 {
						t.Errorf("the orchestrator may decide %v", v.Decisions.Items)
					}
					in := decideIn(contract.DecidableRequest{ID: r.ID, Digest: r.Digest}, "approve")
					if ans, err := f.ops.Call(t.Context(), f.boss, operation.Call{Tool: contract.ToolApplyAction, Input: in}); err != nil || ans.Result.ErrorCode != contract.CodeForbidden {
						t.Errorf("the orchestrator's decision of a request only a member decides = %s, %v; want forbidden", ans.Result.ErrorCode, err)
					}
					if _, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove}); err != nil {
						t.Error(err)
					}
				})
			}
			v, err := f.ops.Operations().Hook(t.Context(), f.coder, tt.call)
			if err != nil {
				t.Fatal(err)
			}
			if wg != nil {
				wg.Wait()
			}
			if v.Allow != tt.allow || v.Mode != tt.mode || v.ErrorCode != tt.code {
				t.Errorf("verdict %+v, want allow %v, mode %s, code %q", v, tt.allow, tt.mode, tt.code)
			}
			calls, err := f.ops.Operations().HookCalls(t.Context(), f.admin, "default", contract.AgentID(f.coder.ID))
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 || calls[0].State != tt.state || calls[0].ErrorCode != tt.code ||
				calls[0].PathNeedsMember != tt.call.PathNeedsMember || calls[0].Protected != tt.call.Protected {
				t.Errorf("recorded %+v, want state %s, code %q and the hook's findings", calls, tt.state, tt.code)
			}
		})
	}
}

func withFinding(c contract.HookCall, needsMember, protected string) contract.HookCall {
	c.PathNeedsMember, c.Protected = needsMember, protected
	return c
}

// TestOperations_HookWithdrawn: a call allowed and then not run by its hook, because its
// path moved meanwhile, is recorded refused on its Operation, not done; and an undecided
// call is recorded hook_undecided, as the hook answers it.
func TestOperations_HookWithdrawn(t *testing.T) {
	f := newHookFixture(t)
	v, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("moved", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0))
	if err != nil || !v.Allow {
		t.Fatalf("a free call: %+v, %v", v, err)
	}
	if _, err := f.ops.Operations().HookOutcome(t.Context(), f.coder, contract.HookOutcome{CallID: "moved", Tool: "Read", Withdrawn: "a.go now lands somewhere else"}); err != nil {
		t.Fatal(err)
	}
	if v, err = f.ops.Operations().Hook(t.Context(), f.coder, hookCall("slow", "Bash", `{"command":"make"}`, "", "make", time.Millisecond)); err != nil || v.ErrorCode != contract.CodeHookUndecided {
		t.Fatalf("an undecided call: %+v, %v", v, err)
	}
	calls, err := f.ops.Operations().HookCalls(t.Context(), f.admin, "default", contract.AgentID(f.coder.ID))
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		State contract.OperationState
		Code  contract.Code
	}
	var got []rec
	for _, c := range calls {
		got = append(got, rec{c.State, c.ErrorCode})
	}
	want := []rec{{contract.OpRefused, contract.CodeCallChanged}, {contract.OpRefused, contract.CodeHookUndecided}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	for _, bad := range []contract.HookOutcome{
		{CallID: "moved", Tool: "Read", Withdrawn: "x", OutputDigest: "sha256:" + strings.Repeat("ab", 32)},
		{CallID: "moved", Tool: "Read", Withdrawn: "x", OK: true},
	} {
		if _, err := f.ops.Operations().HookOutcome(t.Context(), f.coder, bad); contract.CodeOf(err) != contract.CodeInvalidArgument {
			t.Errorf("HookOutcome(%+v) = %v, want invalid_argument", bad, err)
		}
	}
	if n, err := f.a.VerifyEvents(t.Context(), f.admin, "default"); err != nil || !n.OK {
		t.Fatalf("events verify: %+v, %v", n, err)
	}
}

// TestOperations_HookCaller: only a hook token speaks for a coding agent's hook: an
// orchestrator's token, an Agent's own token and a member are refused on both routes.
func TestOperations_HookCaller(t *testing.T) {
	f := newHookFixture(t)
	own, err := f.a.Directory().CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	calc, err := f.a.Directory().Authenticate(t.Context(), identity.Token(own.Token))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]identity.Caller{"an orchestrator": f.boss, "an Agent's own token": calc, "a member": f.admin} {
		t.Run(name, func(t *testing.T) {
			if _, err := f.ops.Operations().Hook(t.Context(), c, hookCall("c1", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0)); contract.CodeOf(err) != contract.CodeForbidden {
				t.Errorf("Hook = %v, want forbidden", err)
			}
			out := contract.HookOutcome{CallID: "c1", Tool: "Read", OK: true, OutputDigest: "sha256:" + strings.Repeat("ab", 32)}
			if _, err := f.ops.Operations().HookOutcome(t.Context(), c, out); contract.CodeOf(err) != contract.CodeForbidden {
				t.Errorf("HookOutcome = %v, want forbidden", err)
			}
		})
	}
	if _, err := f.a.Directory().CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: "chief", Kind: "orchestrator", Hook: true}); contract.CodeOf(err) != contract.CodeInvalidArgument {
		t.Errorf("an orchestrator with a hook token = %v, want invalid_argument", err)
	}
	if _, err := f.a.Directory().ReplaceHookToken(t.Context(), f.admin, "default", "boss"); contract.CodeOf(err) != contract.CodeInvalidArgument {
		t.Errorf("a hook token for an orchestrator = %v, want invalid_argument", err)
	}
}
