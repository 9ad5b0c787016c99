package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
)

// agentAuth proves every token as one Agent.
type agentAuth struct{}

func (agentAuth) AgentAt(context.Context, identity.Token) (identity.Caller, int64, error) {
	return identity.Caller{Kind: contract.PrincipalAgent, ID: "agt_f", Projects: []contract.ProjectID{"p"}}, 0, nil
}

func (agentAuth) Hold(ctx context.Context, _ identity.Token) (context.Context, func()) {
	return ctx, func() {}
}

// fixedOps answers every call with an accepted, empty result, and every strip with one
// Agent.
type fixedOps struct{}

func (fixedOps) Begin(context.Context, identity.Caller, operation.Call) (*operation.Held, operation.Answer, error) {
	return nil, operation.Answer{Result: contract.ToolResult{Accepted: true}}, nil
}

func (fixedOps) Refusal(_ context.Context, _ identity.Caller, _ []contract.CaseID, err *contract.Error) (operation.Answer, error) {
	return operation.Answer{Result: contract.ToolResult{ErrorCode: err.Code, Teaching: err.Teaching}}, nil
}

func (fixedOps) State(context.Context, identity.Caller) (contract.HostMeta, error) {
	return contract.HostMeta{AgentID: "agt_f"}, nil
}

// FuzzServeHTTP sends arbitrary JSON-RPC bodies to /mcp, with and without a live
// session: the gateway must answer every one with a known status, and its own refusals
// must be JSON-RPC errors with a reason.
func FuzzServeHTTP(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "rpc", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, false)
		f.Add(data, true)
	}
	g := gateway.New(gateway.Config{Auth: agentAuth{}, Ops: fixedOps{}, Strips: fixedOps{}})
	init, _ := os.ReadFile(filepath.Join("testdata", "rpc", "initialize.json"))
	post := func(body []byte, session string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer x")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
			r.Header.Set("Mcp-Protocol-Version", contract.ProtocolVersion)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		return w
	}
	f.Fuzz(func(t *testing.T, body []byte, inSession bool) {
		session := ""
		if inSession {
			w := post(init, "")
			if session = w.Header().Get("Mcp-Session-Id"); session == "" {
				t.Fatalf("initialize gave no session: %d %s", w.Code, w.Body)
			}
		}
		w := post(body, session)
		known := []int{200, 202, 400, 403, 404, 405, 406, 409, 413, 415, 500}
		if !slices.Contains(known, w.Code) {
			t.Fatalf("status %d for %q", w.Code, body)
		}
		if w.Code == http.StatusConflict || w.Code == http.StatusUnauthorized {
			var e rpcErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Data.Reason == "" {
				t.Fatalf("refusal %d is not a JSON-RPC error with a reason: %s", w.Code, w.Body)
			}
		}
	})
}

// TestNew_RefusesMissingParts checks that a Gateway wired without one of the parts every
// call needs fails at New, where the wiring is, and names the part.
func TestNew_RefusesMissingParts(t *testing.T) {
	tests := []struct {
		name string
		cfg  gateway.Config
		want string
	}{
		{"no auth", gateway.Config{Ops: fixedOps{}, Strips: fixedOps{}}, "Config.Auth"},
		{"no ops", gateway.Config{Auth: agentAuth{}, Strips: fixedOps{}}, "Config.Ops"},
		{"no strips", gateway.Config{Auth: agentAuth{}, Ops: fixedOps{}}, "Config.Strips"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tt.want) {
					t.Errorf("New panicked with %v, want a message naming %s", r, tt.want)
				}
			}()
			gateway.New(tt.cfg)
		})
	}
}
