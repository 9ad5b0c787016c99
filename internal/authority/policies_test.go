package authority_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

const delegationV2 = `[delegation_policy]
[[delegation_policy.class]]
name   = "marks"
action = "mark"
agent  = "calc"
`

func TestAuthority_PublishPolicy(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	publish := func(c identity.Caller, text string) (contract.PolicyVersion, error) {
		return f.a.PublishPolicy(ctx, c, "default", contract.PublishPolicyRequest{File: "delegation.toml", Text: text})
	}
	v, err := publish(f.admin, delegationV2)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != contract.PolicyDelegation || v.Version != 2 || v.Digest != contract.Sum([]byte(delegationV2)).String() || v.PublishedBy != f.admin.Principal() || v.Publisher != f.admin.Name {
		t.Errorf("published = %+v, want delegation version 2 by the member %s, bound to the text's digest", v, f.admin.Name)
	}
	if vs, err := f.a.Policies(ctx, f.admin, "default"); err != nil || len(vs) < 2 || vs[1].Publisher != f.admin.Name || vs[0].Publisher != "" {
		t.Errorf("Policies = %+v, %v; want the built-in version unnamed and version 2 named %s", vs, err, f.admin.Name)
	}
	_, err = publish(f.agent, delegationV2+"# again\n")
	wantCode(t, err, contract.CodeForbidden)
	_, err = publish(f.admin, delegationV2)
	wantCode(t, err, contract.CodeAlreadyExists)
	_, err = publish(f.admin, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"mark\"\n")
	wantCode(t, err, contract.CodePolicyInvalid)
	if err == nil || !strings.Contains(err.Error(), "delegation.toml:2:") {
		t.Errorf("a malformed policy = %v, want it refused at delegation.toml:2", err)
	}

	// A second instance over the same store publishes the next version, not a second 2.
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	v3, err := other.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: "[delegation_policy]\n"})
	if err != nil || v3.Version != 3 {
		t.Fatalf("publication on another instance = %+v, %v; want version 3", v3, err)
	}

	list, err := f.a.Policies(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range list {
		got = append(got, fmt.Sprintf("%s@%d", p.Kind, p.Version))
		if p.Text != "" {
			t.Errorf("listing carries the text of %s@%d", p.Kind, p.Version)
		}
	}
	if want := "delegation@1 delegation@2 delegation@3 autonomy@1 recovery@1 delegate@1 hook@1 artifact@1"; strings.Join(got, " ") != want {
		t.Errorf("Policies = %s, want %s", strings.Join(got, " "), want)
	}
	cur, err := f.a.Policy(ctx, f.admin, "default", contract.PolicyDelegation, 0)
	if err != nil || cur.Version != 3 {
		t.Errorf("Policy in force = %+v, %v; want version 3", cur, err)
	}
	one, err := f.a.Policy(ctx, f.admin, "default", contract.PolicyRecovery, 1)
	if err != nil || !one.Builtin || !strings.Contains(one.Text, "max_attempts    = 3") {
		t.Errorf("built-in recovery = %+v, %v", one, err)
	}
	_, err = f.a.Policy(ctx, f.admin, "default", contract.PolicyAutonomy, 2)
	wantCode(t, err, contract.CodeNotFound)
	d, err := f.a.PolicyDiff(ctx, f.admin, "default", contract.PolicyDelegation, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Diff, "  [delegation_policy]\n") || !strings.Contains(d.Diff, "- name   = \"marks\"\n") || strings.Contains(d.Diff, "+ ") {
		t.Errorf("diff 2..3 =\n%s", d.Diff)
	}
}

// TestDecide_RecordsPolicyVersion: every decision records the delegation policy in force.
func TestDecide_RecordsPolicyVersion(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	req := f.pendingMark(t, "a")
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: delegationV2}); err != nil {
		t.Fatal(err)
	}
	got, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictDeny, Reason: "no"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Policy != 2 {
		t.Errorf("decision recorded policy version %d, want 2", got.Policy)
	}
	rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil || rs[0].Policy != 2 {
		t.Errorf("listed request = %+v, %v; want policy version 2", rs, err)
	}
}
