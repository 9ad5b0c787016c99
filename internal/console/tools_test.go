package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestTools_Routes: the Tools routes lock what the Connection's worker advertises, list
// the inventory with the vault's Sources, change an approval and unlock, each refusal
// with its code and status.
func TestTools_Routes(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ctx := t.Context()
	admin, err := s.a.Directory().Authenticate(ctx, identity.Token(s.token))
	if err != nil {
		t.Fatal(err)
	}
	ck, err := s.a.Directory().CreateConnection(ctx, admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.Directory().BindSource(ctx, admin, "default", "laptop", contract.Source{Name: "notes", Type: "file", Words: []string{"note_file"}, Tier: contract.TierAttested}); err != nil {
		t.Fatal(err)
	}
	const base = "/api/v1/projects/default/connections/laptop"
	const digest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	lock := request{method: "PUT", path: base + "/tools/acme.notes.list@1", bearer: s.token, body: `{}`}
	if resp, body := s.do(t, lock); resp.StatusCode != http.StatusConflict || decode[contract.Error](t, body).Code != contract.CodeToolNotAdvertised {
		t.Fatalf("lock with no worker = %d %s, want 409 tool_not_advertised", resp.StatusCode, body)
	}
	desc := contract.ToolDescriptor{Tool: "acme.notes.list@1", Digest: digest, Adapter: "run", AdapterDigest: "sha256:adad", Kind: "read",
		SourceTypes: []string{"file"}, Direct: true, Params: []contract.ToolParam{{Name: "dir", Type: "string"}}}
	if _, err := s.disp.Poll(ctx, ck.Connection, contract.PollRequest{WorkerID: "wkr-1", Tools: []contract.ToolDescriptor{desc}, VaultSources: []string{"notes"}}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		req    request
		status int
		code   contract.Code
	}{
		{"a digest other than the advertised one", request{method: "PUT", path: base + "/tools/acme.notes.list@1", bearer: s.token,
			body: `{"digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}`}, http.StatusConflict, contract.CodeToolLockDigest},
		{"a descriptor sent by the caller", request{method: "PUT", path: base + "/tools/acme.notes.list@1", bearer: s.token,
			body: `{"descriptor":{"tool":"acme.notes.list@1","digest":"` + digest + `","adapter":"run","adapterDigest":"x","kind":"read","sourceTypes":[]}}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"the advertised digest", lock, http.StatusOK, ""},
		{"an approval that is no word", request{method: "PUT", path: base + "/tools/acme.notes.list@1/approval", bearer: s.token, body: `{"approval":"Any One"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an approval body with another field", request{method: "PUT", path: base + "/tools/acme.notes.list@1/approval", bearer: s.token, body: `{"approval":"person","why":"x"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an approval", request{method: "PUT", path: base + "/tools/acme.notes.list@1/approval", bearer: s.token, body: `{"approval":"person"}`}, http.StatusOK, ""},
		{"an approval of a Tool not locked", request{method: "PUT", path: base + "/tools/acme.other@1/approval", bearer: s.token, body: `{"approval":"person"}`}, http.StatusNotFound, contract.CodeToolNotLocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := s.do(t, tc.req)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d (body %s)", resp.StatusCode, tc.status, body)
			}
			if tc.code != "" {
				if got := decode[contract.Error](t, body).Code; got != tc.code {
					t.Errorf("code = %s, want %s", got, tc.code)
				}
			}
		})
	}

	_, body := s.do(t, request{method: "GET", path: base + "/inventory", bearer: s.token})
	inv := decode[contract.ConnectionTools](t, body)
	if len(inv.Tools) != 1 || inv.Tools[0].Lock == nil || inv.Tools[0].Lock.Digest != digest || inv.Tools[0].Lock.Approval != "person" || inv.Tools[0].Action != "acme.notes.list@1" {
		t.Errorf("inventory tools = %s, want the Tool locked at its advertised digest, approval person, offered as its direct Action", body)
	}
	if len(inv.Sources) != 1 || inv.Sources[0].InVault == nil || !*inv.Sources[0].InVault {
		t.Errorf("inventory sources = %s, want notes held by the worker's vault", body)
	}

	resp, body := s.do(t, request{method: "DELETE", path: base + "/tools/acme.notes.list@1", bearer: s.token})
	if l := decode[contract.ToolLock](t, body); resp.StatusCode != http.StatusOK || l.Digest != digest {
		t.Errorf("unlock = %d %s, want 200 and the lock as it was", resp.StatusCode, body)
	}
	if resp, body := s.do(t, request{method: "DELETE", path: base + "/tools/acme.notes.list@1", bearer: s.token}); resp.StatusCode != http.StatusNotFound || decode[contract.Error](t, body).Code != contract.CodeToolNotLocked {
		t.Errorf("second unlock = %d %s, want 404 tool_not_locked", resp.StatusCode, body)
	}
}
