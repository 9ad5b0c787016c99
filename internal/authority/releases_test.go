package authority_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_Capabilities: a member reads what an installed release declares — its
// Actions with their parameters, bindings and approval, the Tool an executed one runs,
// the Sources it needs — and each Action's description; an Agent reads none of it.
func TestAuthority_Capabilities(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	cs, err := f.a.Capabilities(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Release.ID != "test.ops" || !strings.HasPrefix(cs[0].Release.Digest, "sha256:") || cs[0].Title != "Operations test" {
		t.Fatalf("Capabilities = %+v, want the release test.ops with its digest and title", cs)
	}
	send := contract.ActionContent{Name: "send", Description: "Send to the registered address.", Approval: "person",
		Params:   []contract.ParamEntry{{Name: "addr", Type: "string"}},
		Bindings: []contract.ActionBinding{{Param: "addr", Var: "addr"}}, Tool: "test.send@1", Kind: "write", Source: "workspace"}
	var got *contract.ActionContent
	for i, ac := range cs[0].Actions {
		if ac.Name == "send" {
			got = &cs[0].Actions[i]
		}
	}
	if got == nil {
		t.Fatalf("Actions = %+v, want send among them", cs[0].Actions)
	}
	if diff := cmp.Diff(send, *got); diff != "" {
		t.Errorf("send (-want +got):\n%s", diff)
	}
	if want := []contract.Source{{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}}; !cmp.Equal(want, cs[0].Sources) {
		t.Errorf("Sources = %+v, want %+v", cs[0].Sources, want)
	}

	does, err := f.a.ActionDescriptions(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"mark": "Mark a topic.", "fetch": "Fetch a file.", "send": "Send to the registered address."}; !cmp.Equal(want, does) {
		t.Errorf("ActionDescriptions = %v, want %v", does, want)
	}
	if _, err := f.a.Capabilities(ctx, f.agent, "default"); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("Capabilities for an Agent = %v, want %s", err, contract.CodeForbidden)
	}
}

// TestAuthority_LogHead: the head is the last event's sequence number, the cursor that
// the next event comes after.
func TestAuthority_LogHead(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	head, err := f.a.LogHead(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	es, err := f.a.Events(ctx, f.admin, "default", head-1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if head == 0 || len(es) != 1 || es[0].Seq != head {
		t.Errorf("LogHead = %d and the events from it %+v, want the last event", head, es)
	}
	if _, err := f.a.LogHead(ctx, f.agent, "default"); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("LogHead for an Agent = %v, want %s", err, contract.CodeForbidden)
	}
}
