package workbench

import (
	"net"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// gateCapability has one Action that needs a person.
const gateCapability = `id = "test.gate"
version = "1.0.0"
title = "Gate test"

[[action]]
name = "mark"
description = "Mark a topic, once a person approves."
approval = "person"
effects = ["marked(topic: ?topic)"]

[[action.param]]
name = "topic"
type = "string"
`

// TestRunGate_Console: a browser that opened docket start's printed URL (with ?key=)
// keeps working through the gate: it signs in with a form, its event stream reaches
// Needs you live, and its decision form posts through.
func TestRunGate_Console(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := authority.New(authority.Config{Store: st, Key: authority.Key{3}})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := a.Init(ctx, "ada", "correct horse battery", "default")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := a.Authenticate(ctx, boot.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": gateCapability}}); err != nil {
		t.Fatal(err)
	}
	at, err := a.CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a.Authenticate(ctx, authority.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	ops := authority.NewOperations(a, authority.OperationsConfig{})
	srv, err := console.New(console.Config{Authority: a, Requests: ops})
	if err != nil {
		t.Fatal(err)
	}
	serve := httptest.NewServer(srv)
	t.Cleanup(serve.Close)
	target, err := url.Parse(serve.URL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	const key = "RUNKEYRUNKEYRUNKEYRUNKEY22"
	gate := httptest.NewUnstartedServer(newRunGate(key, port, target))
	gate.Listener.Close()
	gate.Listener = ln
	gate.Start()
	t.Cleanup(gate.Close)
	b := browsertest.New(t) // closed first, so that its event stream does not hold the servers

	// The printed URL trades the key for a cookie and lands on the sign-in page.
	b.Do(chromedp.Navigate(gate.URL+"/?key="+key), chromedp.WaitVisible(chromedp.CSS("#passphrase")))
	b.SignIn(gate.URL, "ada", "correct horse battery")
	b.Do(chromedp.Navigate(gate.URL+"/projects/default/needs"),
		chromedp.WaitVisible(chromedp.CSS("#requests-empty")))

	in := &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("a")}}
	if _, err := ops.Call(ctx, agent, authority.Call{Tool: contract.ToolApplyAction, Input: in}); err != nil {
		t.Fatal(err)
	}
	rs, err := ops.Requests(ctx, admin, "default")
	if err != nil || len(rs) != 1 {
		t.Fatalf("Requests = %v, %v; want one", rs, err)
	}
	id := string(rs[0].ID)
	b.Do(chromedp.WaitVisible(chromedp.ID(id)),
		chromedp.Click(chromedp.ID(id+"-approve")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if rs, err := ops.Requests(ctx, admin, "default"); err != nil || rs[0].State != contract.RequestApproved {
		t.Errorf("after approving through the gate, Requests = %+v, %v; want it approved", rs, err)
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems through the gate: %q", ps)
	}
}
