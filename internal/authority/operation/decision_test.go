package operation_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// backends opens a fresh store: SQLite always, PostgreSQL when DOCKET_TEST_POSTGRES names
// a server.
var backends = []struct {
	name string
	open func(t *testing.T) (store.Store, error)
}{
	{"sqlite", func(t *testing.T) (store.Store, error) {
		return sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	}},
	{"postgres", func(t *testing.T) (store.Store, error) {
		return postgres.Open(t.Context(), authoritytest.PostgresDSN(t))
	}},
}

// decisionFixture is a project whose Agent calc has one pending request (to mark
// docs/a.md), with the principals the authorization table names.
type decisionFixture struct {
	o            *authority.Operations
	admin, agent identity.Caller
	other, orch  identity.Caller // an Agent of kind agent, and one of kind orchestrator
	req          contract.Request
}

func newDecisionFixture(t *testing.T, open func(t *testing.T) (store.Store, error), policy string, manual bool) *decisionFixture {
	t.Helper()
	ctx := t.Context()
	st, err := open(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{5}, Capability: "testdata/self", Agent: "calc"})
	f := &decisionFixture{o: authority.NewOperations(p.A, operation.Config{}), admin: p.Admin, agent: p.Agent}
	if policy != "" {
		if _, err := p.A.PublishPolicy(ctx, p.Admin, "default", contract.PublishPolicyRequest{File: "delegation.toml", Text: policy}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []struct {
		name, kind string
		into       *identity.Caller
	}{{"other", "", &f.other}, {"boss", "orchestrator", &f.orch}} {
		at, err := p.A.Directory().CreateAgent(ctx, p.Admin, "default", contract.CreateAgentRequest{Name: a.name, Kind: a.kind})
		if err != nil {
			t.Fatal(err)
		}
		if *a.into, err = p.A.Directory().Authenticate(ctx, identity.Token(at.Token)); err != nil {
			t.Fatal(err)
		}
	}
	if manual {
		if _, err := p.A.SetAgentLevel(ctx, p.Admin, "default", "calc", contract.SetLevelRequest{Level: "manual"}); err != nil {
			t.Fatal(err)
		}
	}
	in := &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"path": contract.StringValue("docs/a.md")}}
	if _, err := f.o.Call(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction, Input: in}); err != nil {
		t.Fatal(err)
	}
	rs, err := f.o.Operations().Requests(ctx, f.admin, "default")
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	f.req = rs[0]
	return f
}

// Delegation policies the table publishes.
const (
	docsPolicy = "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs\"\naction = \"mark\"\npath = \"docs/*\"\n"
	srcPolicy  = "[delegation_policy]\n[[delegation_policy.class]]\nname = \"src\"\naction = \"mark\"\npath = \"src/*\"\n"
)

// decideThroughTools has orchestrator c apply docket.decide with d, and returns the
// refusal it reads as an error.
func decideThroughTools(t *testing.T, f *decisionFixture, c identity.Caller, d contract.Decision) error {
	t.Helper()
	in := &contract.ApplyActionInput{Action: contract.ActionDecide, Params: contract.Args{"request": contract.StringValue(string(f.req.ID)),
		"digest": contract.StringValue(d.Digest), "verdict": contract.StringValue(string(d.Verdict))}}
	ans, err := f.o.Call(t.Context(), c, operation.Call{Tool: contract.ToolApplyAction, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Result.ErrorCode != "" {
		return &contract.Error{Code: ans.Result.ErrorCode, Teaching: ans.Result.Teaching}
	}
	return nil
}

// pending fails t unless the request is still pending and its Operation waiting.
func (f *decisionFixture) pending(t *testing.T) {
	t.Helper()
	rs, err := f.o.Operations().Requests(t.Context(), f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.o.Operations().State(t.Context(), f.agent)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].State != contract.RequestPending || st.State[0].State != contract.OpWaitingForDecision {
		t.Errorf("after the refusal: request %s, operation %s; want pending and waiting", rs[0].State, st.State[0].State)
	}
}

// TestDecide_Authorization is the authorization table: who may decide a request, under
// which delegation policy version. Each rule the store holds is refused by the domain,
// and again with the domain's checks bypassed (DecideAs), by the store's checks alone;
// which requests an orchestrator may decide is the domain's alone, since the store lets
// any live orchestrator of the project decide.
func TestDecide_Authorization(t *testing.T) {
	type decider func(f *decisionFixture) (identity.Caller, contract.Principal)
	orch := func(f *decisionFixture) (identity.Caller, contract.Principal) { return f.orch, f.orch.Principal() }
	tool := func(*decisionFixture) (identity.Caller, contract.Principal) {
		return identity.Caller{Kind: contract.PrincipalTool, ID: "test.fetch@1", Projects: []contract.ProjectID{"default"}}, "tool:test.fetch@1"
	}
	tests := []struct {
		name   string
		policy string // the delegation policy published first; "" keeps the built-in version 1
		manual bool   // calc is at level manual when it asks: its request is a member's alone
		by     decider
		digest func(contract.Request) string // the digest the decision names; default the request's
		// domain is what Decide answers (its self-decision check runs as for a member);
		// store is what the store alone answers. "" means the decision is recorded.
		domain, store contract.Code
	}{
		{name: "a member of the project", by: func(f *decisionFixture) (identity.Caller, contract.Principal) { return f.admin, f.admin.Principal() }},
		{name: "the requester itself", by: func(f *decisionFixture) (identity.Caller, contract.Principal) { return f.agent, f.agent.Principal() },
			domain: contract.CodeSelfDecision, store: contract.CodeSelfDecision},
		{name: "an Agent of kind agent", by: func(f *decisionFixture) (identity.Caller, contract.Principal) { return f.other, f.other.Principal() },
			domain: contract.CodeForbidden, store: contract.CodeForbidden},
		// The store lets an orchestrator decide; which requests it may decide is the
		// delegation policy's, and the built-in one delegates nothing.
		{name: "an orchestrator under the built-in policy", by: orch, domain: contract.CodeNotDelegated},
		{name: "an orchestrator under a policy that covers it", policy: docsPolicy, by: orch},
		{name: "an orchestrator under a policy that covers other paths", policy: srcPolicy, by: orch, domain: contract.CodeNotDelegated},
		{name: "an orchestrator naming another digest", policy: docsPolicy, by: orch,
			digest: func(r contract.Request) string { return "sha256:" + strings.Repeat("0", 64) },
			domain: contract.CodeDigestMismatch, store: contract.CodeDigestMismatch},
		{name: "an orchestrator on a manual Agent's request a policy covers", policy: docsPolicy, manual: true, by: orch,
			domain: contract.CodeForbidden, store: contract.CodeForbidden},
		{name: "a member on a manual Agent's request", manual: true,
			by: func(f *decisionFixture) (identity.Caller, contract.Principal) { return f.admin, f.admin.Principal() }},
		{name: "a worker's Tool", by: tool, domain: contract.CodeForbidden, store: contract.CodeForbidden},
		{name: "an empty decider", by: func(*decisionFixture) (identity.Caller, contract.Principal) { return identity.Caller{}, "" },
			domain: contract.CodeForbidden, store: contract.CodeForbidden},
		{name: "a member naming another digest", by: func(f *decisionFixture) (identity.Caller, contract.Principal) { return f.admin, f.admin.Principal() },
			digest: func(r contract.Request) string { return "sha256:" + strings.Repeat("0", 64) },
			domain: contract.CodeDigestMismatch, store: contract.CodeDigestMismatch},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx := t.Context()
					f := newDecisionFixture(t, be.open, tt.policy, tt.manual)
					c, by := tt.by(f)
					d := contract.Decision{Digest: f.req.Digest, Verdict: contract.VerdictApprove}
					if tt.digest != nil {
						d.Digest = tt.digest(f.req)
					}
					var err error
					switch {
					case c.AgentKind == contract.AgentKindOrchestrator: // it decides through the six tools
						err = decideThroughTools(t, f, c, d)
					case tt.domain == contract.CodeSelfDecision: // Decide would refuse an Agent before asking who requested
						_, err = f.o.Operations().DecideAs(ctx, by, "default", f.req.ID, d, true)
					default:
						_, err = f.o.Operations().Decide(ctx, c, "default", f.req.ID, d)
					}
					if got := contract.CodeOf(err); got != tt.domain {
						t.Fatalf("domain: decide = %v, want %q", err, tt.domain)
					}
					if err != nil && strings.Contains(err.Error(), f.req.Digest) {
						t.Errorf("the refusal %q reveals the request's digest", err)
					}
					if tt.domain == "" {
						rs, err := f.o.Operations().Requests(ctx, f.admin, "default")
						if want := map[bool]int64{true: 1, false: 2}[tt.policy == ""]; err != nil || rs[0].State != contract.RequestApproved || rs[0].Policy != want {
							t.Errorf("request after the decision = %+v, %v; want approved under policy version %d", rs, err, want)
						}
						return
					}
					f.pending(t)
					_, err = f.o.Operations().DecideAs(ctx, by, "default", f.req.ID, d, false)
					if got := contract.CodeOf(err); got != tt.store {
						t.Fatalf("store alone: decide = %v, want %q", err, tt.store)
					}
					if err != nil && strings.Contains(err.Error(), f.req.Digest) {
						t.Errorf("the store's refusal %q reveals the request's digest", err)
					}
					if tt.store != "" {
						f.pending(t)
					}
				})
			}
		})
	}
}
