package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// requestFixture is an authority with one pending Request, served by the Requests
// handler, and the environment a CLI needs to reach it.
type requestFixture struct {
	env  map[string]string
	ops  *authority.Operations
	pend contract.Request
}

func newRequestFixture(t *testing.T) *requestFixture {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{9}})
	a, admin := p.A, p.Admin
	toml, err := os.ReadFile(filepath.Join("testdata", "requests", "capability.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}}); err != nil {
		t.Fatal(err)
	}
	at, err := a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	ops := authority.NewOperations(a, operation.Config{})
	in := &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("a")}}
	if _, err := ops.Call(ctx, agent, operation.Call{Tool: contract.ToolApplyAction, Input: in}); err != nil {
		t.Fatal(err)
	}
	rs, err := ops.Operations().Requests(ctx, admin, "default")
	if err != nil || len(rs) != 1 {
		t.Fatalf("Requests = %v, %v; want one", rs, err)
	}
	api, err := console.New(console.Config{Identity: a.Directory(), Authority: a, Requests: ops.Operations(), Operations: ops})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &requestFixture{ops: ops, pend: rs[0],
		env: map[string]string{"DOCKET_URL": srv.URL, "DOCKET_TOKEN": p.Token.String(), "DOCKET_HOME": t.TempDir()}}
}

func (f *requestFixture) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return f.env[k] }}
	err := run(context.Background(), args, e)
	return out.String(), err
}

func TestRequestsCmd(t *testing.T) {
	f := newRequestFixture(t)
	out, err := f.run(t, "requests")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{string(f.pend.ID), f.pend.Digest, `vector {"action":"mark","args":{"topic":"a"}}`} {
		if !strings.Contains(out, want) {
			t.Errorf("docket requests = %q, want it to show %q", out, want)
		}
	}
	out, err = f.run(t, "requests", "-o", "json")
	var rs []contract.Request
	if err != nil || json.Unmarshal([]byte(out), &rs) != nil || len(rs) != 1 || rs[0].Digest != f.pend.Digest {
		t.Errorf("docket requests -o json = %q, %v", out, err)
	}
}

func TestDecideCmd(t *testing.T) {
	f := newRequestFixture(t)
	id := string(f.pend.ID)
	tests := []struct {
		name string
		args []string
		code contract.Code
		out  string
	}{
		{"another digest", []string{"decide", id, "approve", "--digest", "sha256:00"}, contract.CodeDigestMismatch, ""},
		{"unknown request", []string{"decide", "req_nope", "deny", "--digest", f.pend.Digest}, contract.CodeNotFound, ""},
		{"deny", []string{"decide", id, "deny", "--digest", f.pend.Digest, "--reason", "not today"}, "", id + " denied by member:"},
		{"decided already", []string{"decide", id, "approve", "--digest", f.pend.Digest}, contract.CodeRequestClosed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.run(t, tt.args...)
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("docket %v = %v, want code %q", tt.args, err, tt.code)
			}
			if !strings.Contains(out, tt.out) {
				t.Errorf("docket %v printed %q, want %q", tt.args, out, tt.out)
			}
		})
	}
}
