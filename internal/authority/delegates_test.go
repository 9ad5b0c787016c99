package authority_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/signing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/notice"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// newDelegate makes a delegate of f's member in project default and authenticates it.
func newDelegate(t *testing.T, f *fixture, name string) (contract.DelegateToken, identity.Caller) {
	t.Helper()
	dt, err := f.a.Directory().CreateDelegate(t.Context(), f.admin, "default", contract.CreateDelegateRequest{Name: name, Life: "8h"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.a.Directory().Authenticate(t.Context(), identity.Token(dt.Token))
	if err != nil {
		t.Fatalf("Authenticate(delegate): %v", err)
	}
	return dt, c
}

// TestDelegate_ActsAsItsMember: a delegate's credential proves its member in its one
// project, recorded as member:<name>/<delegate>; only its digest is kept, so neither the
// log of the authority nor the events hold it.
func TestDelegate_ActsAsItsMember(t *testing.T) {
	f := newFixture(t)
	dt, c := newDelegate(t, f, "asst")
	if !strings.HasPrefix(dt.Token, contract.PrefixDelegate) {
		t.Errorf("token = %q, want the %s prefix", dt.Token, contract.PrefixDelegate)
	}
	if c.Principal() != "member:ada/asst" || dt.Delegate.Actor != "member:ada/asst" || !c.IsDelegate() {
		t.Errorf("delegate acts as %q (shown %q), delegate %v; want member:ada/asst", c.Principal(), dt.Delegate.Actor, c.IsDelegate())
	}
	if len(c.Projects) != 1 || c.Projects[0] != "default" {
		t.Errorf("delegate reaches %v, want only [default]", c.Projects)
	}
	if strings.Contains(f.log.String(), dt.Token) {
		t.Error("the authority's log holds the delegate's token")
	}
	evs, err := f.st.Events(t.Context(), "default", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var created bool
	for _, e := range evs {
		if strings.Contains(string(e.Data), dt.Token) {
			t.Errorf("event %s holds the delegate's token", e.Type)
		}
		created = created || e.Type == event.DelegateCreated
	}
	if !created {
		t.Error("no delegate.created event")
	}
}

// TestDelegate_Life: a life outside 1 minute to 30 days is refused; one within it ends the
// credential at its end.
func TestDelegate_Life(t *testing.T) {
	f := newFixture(t)
	for _, life := range []string{"59s", "721h", "soon", ""} {
		_, err := f.a.Directory().CreateDelegate(t.Context(), f.admin, "default", contract.CreateDelegateRequest{Life: life})
		if contract.CodeOf(err) != contract.CodeInvalidArgument {
			t.Errorf("life %q: error = %v, want invalid_argument", life, err)
		}
	}
	_, err := f.a.Directory().CreateDelegate(t.Context(), f.admin, "elsewhere", contract.CreateDelegateRequest{Life: "1h"})
	wantCode(t, err, contract.CodeForbidden)
}

// TestDelegate_Revoke: a member revokes a delegate at any time, by name or id, and its
// credential stops at once; another member's delegate is not found.
func TestDelegate_Revoke(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	dt, _ := newDelegate(t, f, "asst")
	other, _ := newDelegate(t, f, "other")
	d, err := f.a.Directory().RevokeDelegate(ctx, f.admin, "asst")
	if err != nil || d.RevokedAt == nil {
		t.Fatalf("RevokeDelegate = %+v, %v; want revoked", d, err)
	}
	_, err = f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	wantCode(t, err, contract.CodeCredentialRevoked)
	if _, err := f.a.Directory().Authenticate(ctx, identity.Token(other.Token)); err != nil {
		t.Errorf("the other delegate after one was revoked: %v", err)
	}
	ds, err := f.a.Directory().Delegates(ctx, f.admin)
	if err != nil || len(ds) != 2 {
		t.Fatalf("Delegates = %+v, %v; want both", ds, err)
	}
	_, err = f.a.Directory().RevokeDelegate(ctx, f.admin, "nobody")
	wantCode(t, err, contract.CodeNotFound)
}

// TestDelegate_SignOutOfEverySession: logging out of one of two sessions keeps the
// member's delegates; logging out of the last revokes them all.
func TestDelegate_SignOutOfEverySession(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	dt, _ := newDelegate(t, f, "asst")
	s2, err := f.a.Directory().Login(ctx, "ada", testPassphrase, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.a.Directory().Logout(ctx, f.token); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token)); err != nil {
		t.Fatalf("delegate after one of two sessions ended: %v", err)
	}
	if err := f.a.Directory().Logout(ctx, s2.Token); err != nil {
		t.Fatal(err)
	}
	_, err = f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	wantCode(t, err, contract.CodeCredentialRevoked)
	if err := f.a.Directory().Logout(ctx, s2.Token); err != nil {
		t.Errorf("Logout of an ended session again: %v", err)
	}
}

// TestDelegate_MemberOnlyRefusedByTheAuthority: every member-only operation of the one
// table is refused to a delegate by the authority's own check, with no console gate in
// front of it, and changes nothing.
func TestDelegate_MemberOnlyRefusedByTheAuthority(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	dt, c := newDelegate(t, f, "asst")
	ops := authority.NewOperations(f.a, operation.Config{})
	card, err := ops.Propose(ctx, c, "default", authority.ConsentCall{Operation: operationNamed(t, "agent.create"),
		Path: "/api/v1/projects/default/agents", Body: []byte(`{"name":"helper"}`), Reason: "the work needs it"})
	if err != nil || card == nil {
		t.Fatalf("Propose = %v, %v; want a card", card, err)
	}
	calls := map[string]func(context.Context) error{
		"card.confirm": func(ctx context.Context) error { _, err := ops.ConfirmCard(ctx, c, card.ID); return err },
		"card.decline": func(ctx context.Context) error {
			_, err := f.a.Directory().DeclineCard(ctx, c, card.ID, contract.DeclineCardRequest{})
			return err
		},
		"session.logout": func(ctx context.Context) error { return f.a.Directory().Logout(ctx, identity.Token(dt.Token)) },
		"member.create": func(ctx context.Context) error {
			_, err := f.a.Directory().CreateMember(ctx, c, contract.CreateMemberRequest{Name: "eve", Passphrase: testPassphrase})
			return err
		},
		"project.create": func(ctx context.Context) error {
			_, err := f.a.Directory().CreateProject(ctx, c, contract.CreateProjectRequest{ID: "more"})
			return err
		},
		"delegate.create": func(ctx context.Context) error {
			_, err := f.a.Directory().CreateDelegate(ctx, c, "default", contract.CreateDelegateRequest{Life: "1h"})
			return err
		},
		"delegate.revoke": func(ctx context.Context) error { _, err := f.a.Directory().RevokeDelegate(ctx, c, "asst"); return err },
		"policy.publish": func(ctx context.Context) error {
			_, err := f.a.PublishPolicy(ctx, c, "default", contract.PublishPolicyRequest{File: "a.toml", Text: attendedPolicy})
			return err
		},
		"autonomy.set_level": func(ctx context.Context) error {
			_, err := f.a.SetAgentLevel(ctx, c, "default", "calc", contract.SetLevelRequest{Level: "manual"})
			return err
		},
		"checkpoint.sign": func(ctx context.Context) error {
			_, err := f.a.Checkpoint(ctx, c, "default")
			return err
		},
		// The runtime's routes take the calling Agent's own tasks and Operations: a member's
		// delegate has none.
		"task.claim": func(ctx context.Context) error {
			_, err := f.a.ClaimTask(ctx, c, contract.TaskClaimRequest{})
			return err
		},
		"task.renew": func(ctx context.Context) error {
			_, err := f.a.RenewTask(ctx, c, "t-0123456789abcdef", contract.TaskRenewal{Attempt: 1})
			return err
		},
		"task.report": func(ctx context.Context) error {
			_, err := f.a.ReportTask(ctx, c, "t-0123456789abcdef", contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}})
			return err
		},
		"hook.call": func(ctx context.Context) error {
			_, err := authority.NewOperations(f.a, operation.Config{}).Operations().Hook(ctx, c,
				contract.HookCall{CLI: "claude-code", CallID: "t", Tool: "Bash", Input: []byte(`{"command":"ls"}`), Command: "ls"})
			return err
		},
		"hook.outcome": func(ctx context.Context) error {
			_, err := authority.NewOperations(f.a, operation.Config{}).Operations().HookOutcome(ctx, c,
				contract.HookOutcome{CallID: "t", Tool: "Bash", OutputDigest: "sha256:" + strings.Repeat("0", 64)})
			return err
		},
		"operation.wait": func(ctx context.Context) error {
			_, err := f.a.WaitOperations(ctx, c, []contract.TaskWait{{CallID: "x", Tool: "ApplyAction", Ordinal: 1}}, time.Millisecond)
			return err
		},
		"autonomy.open_window": func(ctx context.Context) error {
			_, err := f.a.OpenRunWindow(ctx, c, "default", "calc", contract.OpenWindowRequest{Minutes: 5})
			return err
		},
		"profile.set": func(ctx context.Context) error {
			_, err := f.a.SetAgentProfile(ctx, c, "default", "calc", contract.ProfileSpec{Provider: "scripted", Script: "s.json", Enabled: true})
			return err
		},
		"profile.from_blueprint": func(ctx context.Context) error {
			_, err := f.a.SetAgentProfileFromBlueprint(ctx, c, "default", "calc", contract.FromBlueprint{Blueprint: "researcher"})
			return err
		},
		"blueprint.define": func(ctx context.Context) error {
			_, err := f.a.SetBlueprint(ctx, c, "default", "researcher", contract.BlueprintSpec{Profile: contract.ProfileSpec{Provider: "scripted", Script: "s.json",
				Allow: &contract.AllowList{Actions: []string{contract.ActionAsk}}}})
			return err
		},
		"blueprint.remove": func(ctx context.Context) error {
			return f.a.RemoveBlueprint(ctx, c, "default", "researcher")
		},
		"runtime.report": func(ctx context.Context) error {
			_, err := f.a.ReportAgentRuntime(ctx, c, "default", "calc", contract.RuntimeStatus{State: contract.RuntimeRunning})
			return err
		},
		"material.add": func(ctx context.Context) error {
			_, err := f.a.AddMaterial(ctx, c, "default", "calc", contract.MaterialAdd{Name: "a.txt", Size: 1, MediaType: "text/plain",
				SHA256: "sha256:" + strings.Repeat("ab", 32)})
			return err
		},
		"material.disclose": func(ctx context.Context) error {
			_, err := f.a.SetMaterialDisclosure(ctx, c, "default", "calc", "sha256:"+strings.Repeat("ab", 32), true)
			return err
		},
		"worker.report": func(ctx context.Context) error {
			_, err := f.a.ReportWorkerRuntime(ctx, c, "default", "local", contract.RuntimeStatus{State: contract.RuntimeRunning})
			return err
		},
		"budget.reserve": func(ctx context.Context) error {
			_, err := f.a.ReserveBudget(ctx, c, contract.BudgetReserve{Provider: "openai", Model: "gpt-4o", Tokens: 1})
			return err
		},
		"budget.charge": func(ctx context.Context) error {
			return f.a.ChargeBudget(ctx, c, contract.BudgetCharge{Hold: "bh_0", Provider: "openai", Model: "gpt-4o"})
		},
		"notice.subscribe": func(ctx context.Context) error {
			_, err := notices(t, f).Subscribe(ctx, c, "default", contract.SubscribeNoticesRequest{Kinds: []string{"request"}, Webhook: "https://hooks.example.com/x"})
			return err
		},
		"notice.unsubscribe": func(ctx context.Context) error {
			_, err := notices(t, f).Unsubscribe(ctx, c, "default", "nsub_0123456789abcdef")
			return err
		},
		"notice.test": func(ctx context.Context) error {
			_, err := notices(t, f).Test(ctx, c, "default", "nsub_0123456789abcdef")
			return err
		},
	}
	// Logins take a passphrase, not a credential, and the conversation routes are an
	// Agent's own: a delegate has neither to offer. An Agent's post of its own task is the
	// facade's PostTask, which a delegate reaches as the operational task.post anyway.
	byCredential := map[string]bool{"session.login": true, "session.login_cookie": true, "conversation.save": true, event.ConversationBudgetExhausted: true,
		"task.post_own": true, "conversation.compaction": true, "artifact.put": true}
	// The runtime's routes are refused to anyone but an Agent, a member's delegate too.
	agentOwn := map[string]bool{"task.claim": true, "task.renew": true, "task.report": true, "operation.wait": true,
		"hook.call": true, "hook.outcome": true, "budget.reserve": true, "budget.charge": true}
	head := func() int64 {
		h, err := f.st.Head(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		return h.Seq
	}
	for _, op := range opclass.Table {
		if op.Class != opclass.MemberOnly || byCredential[op.Name] {
			continue
		}
		t.Run(op.Name, func(t *testing.T) {
			call, ok := calls[op.Name]
			if !ok {
				t.Fatalf("member-only operation %s has no case here", op.Name)
			}
			before := head()
			err := call(ctx)
			switch {
			case err == nil:
				t.Fatalf("a delegate's %s was not refused", op.Name)
			case agentOwn[op.Name]:
				if contract.CodeOf(err) != contract.CodeForbidden {
					t.Errorf("a delegate's %s: %v, want forbidden (an Agent's own)", op.Name, err)
				}
			case op.Name != "session.logout" && contract.CodeOf(err) != contract.CodeMemberOnly:
				// A delegate's credential is no session, so logout finds none to end.
				t.Errorf("a delegate's %s: %v, want member_only", op.Name, err)
			}
			if after := head(); after != before {
				t.Errorf("a refused %s appended %d events", op.Name, after-before)
			}
		})
	}
	if _, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token)); err != nil {
		t.Errorf("the delegate after its refusals: %v", err)
	}
}

// notices returns notices over a's store, of a second authority that has the signing
// keys notices need, for the member-only cases of notice subscriptions.
func notices(t *testing.T, f *fixture) *notice.Keeper {
	t.Helper()
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: f.key, Signer: keys})
	n, err := authority.NewNotices(a, authority.NoticesConfig{PublicURL: "https://docket.example"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
