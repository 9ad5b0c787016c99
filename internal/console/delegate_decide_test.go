package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
)

// TestDelegate_DecidesCoveredRequest: over the API, a member's delegate decides as itself a
// Request a class of the delegation policy in force covers (operational), and its decision
// of one no class covers is recorded as a card that decides nothing.
func TestDelegate_DecidesCoveredRequest(t *testing.T) {
	s := newTestServerWith(t, console.Config{}, func(a *authority.Authority, ops *authority.Operations, cfg *console.Config) {
		cfg.Routes = map[string]http.Handler{"/mcp": gateway.New(gateway.Config{Auth: a.Directory(), Ops: ops, Strips: ops.Operations()})}
	})
	ctx := t.Context()
	admin := mustCaller(t, s)
	toml, err := os.ReadFile(filepath.Join("testdata", "delegate", "capability.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}}); err != nil {
		t.Fatal(err)
	}
	policy := "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n"
	if _, err := s.a.PublishPolicy(ctx, admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: policy}); err != nil {
		t.Fatal(err)
	}
	at, err := s.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := mcpclient.Dial(ctx, mcpclient.Config{URL: s.URL + "/mcp", Token: at.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: s.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate: %d %s", resp.StatusCode, b)
	}
	dlg := decode[contract.DelegateToken](t, b).Token

	// note asks the Agent's write and returns the Request it waits on.
	note := func(path string) contract.Request {
		t.Helper()
		in := json.RawMessage(fmt.Sprintf(`{"action":"note","params":{"path":%q}}`, path))
		res, err := agent.Call(ctx, contract.ToolApplyAction, in)
		if err == nil && strings.Contains(res.Text, string(contract.CodePreviousResultUndelivered)) {
			// The answer delivered the earlier call's outcome; the call is sent again, as
			// its teaching says.
			_, err = agent.Call(ctx, contract.ToolApplyAction, in)
		}
		if err != nil {
			t.Fatal(err)
		}
		rs, err := s.ops.Operations().Requests(ctx, admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.State == contract.RequestPending {
				return r
			}
		}
		t.Fatalf("no pending request after note %s: %+v", path, rs)
		return contract.Request{}
	}
	decide := func(r contract.Request) (*http.Response, []byte) {
		return s.do(t, request{method: "POST", path: "/api/v1/projects/default/requests/" + string(r.ID) + "/decision", bearer: dlg,
			body: fmt.Sprintf(`{"digest":%q,"verdict":"approve"}`, r.Digest), header: map[string]string{contract.ReasonHeader: "routine docs note"}})
	}

	covered := note("docs/a.md")
	resp, b = decide(covered)
	if got := decode[contract.Request](t, b); resp.StatusCode != http.StatusOK || got.State != contract.RequestApproved || got.DecidedBy != "member:ada/asst" {
		t.Fatalf("the delegate's decision of a covered request = %d %s, want 200 approved by member:ada/asst", resp.StatusCode, b)
	}

	other := note("src/b.go")
	resp, b = decide(other)
	if resp.StatusCode != http.StatusAccepted || decode[contract.CardAnswer](t, b).Card.ID == "" {
		t.Fatalf("the delegate's decision of an uncovered request = %d %s, want 202 and a card", resp.StatusCode, b)
	}
	rs, err := s.ops.Operations().Requests(ctx, admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.ID == other.ID && r.State != contract.RequestPending {
			t.Errorf("the uncovered request is %s after the delegate's card, want still pending", r.State)
		}
	}
}
