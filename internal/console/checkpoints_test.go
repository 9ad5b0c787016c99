package console_test

import (
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// newSigningServer is a console over an authority that signs with keys.
func newSigningServer(t *testing.T, keys *signing.Keyring) *testServer {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{1}, Signer: keys})
	a := p.A
	ops := authority.NewOperations(a, operation.Config{})
	srv, err := console.New(console.Config{Identity: a.Directory(), Authority: a, Requests: ops.Operations(), Operations: ops, Reconciler: authority.NewDispatcher(ops, operation.DispatcherConfig{}), Policies: a, Recovery: ops.Operations()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{Server: hs, st: st, a: a, ops: ops, token: p.Token.String()}
}

// TestServer_Checkpoint: a member's POST signs the project's head now: the answer is a
// checkpoint of the log's last event before it, verified by the installation's public
// keys, and appended to the log; an Agent's POST is refused and appends nothing.
func TestServer_Checkpoint(t *testing.T) {
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := newSigningServer(t, keys)
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	before := logHead(t, s)
	path := "/api/v1/projects/default/checkpoints"
	resp, b := s.do(t, request{method: "POST", path: path, bearer: s.token})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s = %d %s, want 201", path, resp.StatusCode, b)
	}
	cp := decode[signing.Checkpoint](t, b)
	if cp.Project != "default" || cp.Seq != before || cp.Reason != signing.ReasonDemand {
		t.Errorf("checkpoint = %+v, want project default at seq %d for %s", cp, before, signing.ReasonDemand)
	}
	if err := cp.Verify(keys.Public()); err != nil {
		t.Errorf("the checkpoint does not verify with the public keys: %v", err)
	}
	if got := logHead(t, s); got != before+1 {
		t.Errorf("the log's head is %d, want %d: the checkpoint appended", got, before+1)
	}

	wantRefusals(t, s, []refusalCase{
		{"an agent signs", request{method: "POST", path: path, bearer: ag.Token}, http.StatusForbidden, contract.CodeForbidden},
		{"no credential", request{method: "POST", path: path}, http.StatusUnauthorized, contract.CodeUnauthenticated},
	})
	if got := logHead(t, s); got != before+1 {
		t.Errorf("the log's head is %d after the refusals, want %d", got, before+1)
	}
}
