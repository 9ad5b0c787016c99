package workhop_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
	"github.com/docketrun/docket/internal/workhop"
)

// hop is a workhop server over an authority on SQLite, with a Connection key and a
// member token.
type hop struct {
	url, key, member string
	count            *storecount.Store  // the store beneath the authority, counted
	revoke           func(t *testing.T) // revokes the Connection
}

func newHop(t *testing.T) hop {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	count := storecount.Wrap(st)
	p := authoritytest.New(t, authoritytest.Options{Store: count, Key: identity.Key{3}})
	a, admin := p.A, p.Admin
	ck, err := a.Directory().CreateConnection(ctx, admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	d := authority.NewDispatcher(authority.NewOperations(a, operation.Config{}), operation.DispatcherConfig{})
	srv, err := workhop.New(workhop.Config{Identity: a.Directory(), Dispatcher: d, MaxBody: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return hop{url: ts.URL, key: ck.Key, member: p.Token.String(), count: count, revoke: func(t *testing.T) {
		if _, err := a.Directory().RevokeConnection(t.Context(), admin, "default", "laptop"); err != nil {
			t.Fatal(err)
		}
	}}
}

func TestServer_Work(t *testing.T) {
	h := newHop(t)
	startup := `{"operation":{"kind":"Poll","workerId":"wkr-1","tools":[]}}`
	tests := []struct {
		name   string
		method string
		auth   string
		ctype  string
		body   string
		status int
		code   contract.Code
	}{
		{"startup poll", "POST", h.key, "application/json", startup, 200, ""},
		{"no credential", "POST", "", "application/json", startup, 401, contract.CodeUnauthenticated},
		{"a member token", "POST", h.member, "application/json", startup, 401, contract.CodeUnauthenticated},
		{"another key", "POST", h.key[:len(h.key)-2] + "AA", "application/json", startup, 401, contract.CodeUnauthenticated},
		{"not JSON", "POST", h.key, "application/json", `{`, 400, contract.CodeWorkBody},
		{"unknown kind", "POST", h.key, "application/json", `{"operation":{"kind":"Run"}}`, 400, contract.CodeWorkBody},
		{"unknown field", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","workerId":"wkr-1","tools":[],"admin":true}}`, 400, contract.CodeWorkBody},
		{"no operation", "POST", h.key, "application/json", `{}`, 400, contract.CodeWorkBody},
		{"trailing data", "POST", h.key, "application/json", startup + `{}`, 400, contract.CodeWorkBody},
		{"case-variant kind", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","KIND":"Claim","workerId":"wkr-1","tools":[]}}`, 400, contract.CodeCaseVariantKey},
		{"case-variant field alone", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","WorkerId":"wkr-1","tools":[]}}`, 400, contract.CodeCaseVariantKey},
		{"duplicate key", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","workerId":"wkr-1","workerId":"wkr-2","tools":[]}}`, 400, contract.CodeDuplicateKey},
		// The body is parsed once: these refusals come from that one parse.
		{"duplicate kind", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","kind":"Claim","workerId":"wkr-1","tools":[]}}`, 400, contract.CodeDuplicateKey},
		{"duplicate operation", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","workerId":"wkr-1","tools":[]},"operation":{"kind":"Claim"}}`, 400, contract.CodeDuplicateKey},
		{"case-variant operation", "POST", h.key, "application/json", `{"Operation":{"kind":"Poll","workerId":"wkr-1","tools":[]}}`, 400, contract.CodeCaseVariantKey},
		{"case-variant kind alone", "POST", h.key, "application/json", `{"operation":{"Kind":"Poll","workerId":"wkr-1","tools":[]}}`, 400, contract.CodeCaseVariantKey},
		{"null for a string", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","workerId":null,"tools":[]}}`, 400, contract.CodeNullField},
		{"invalid UTF-8", "POST", h.key, "application/json", "{\"operation\":{\"kind\":\"Poll\",\"workerId\":\"wkr-\xff\",\"tools\":[]}}", 400, contract.CodeInvalidUTF8},
		{"bad worker id", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","workerId":"../x","tools":[]}}`, 400, contract.CodeWorkerID},
		{"too large", "POST", h.key, "application/json", `{"operation":{"kind":"Poll","workerId":"` + strings.Repeat("a", 2000) + `"}}`, 413, contract.CodeBodyTooLarge},
		{"not JSON media", "POST", h.key, "text/plain", startup, 415, contract.CodeUnsupportedMedia},
		{"claim of unknown work", "POST", h.key, "application/json", `{"operation":{"kind":"Claim","id":"agt_x.1","workerId":"wkr-1","workerGeneration":1,"grant":"a.b"}}`, 400, contract.CodeGrantMalformed},
		{"renew of a generation never granted", "POST", h.key, "application/json", `{"operation":{"kind":"RenewLease","workerId":"wkr-1","workerGeneration":5}}`, 409, contract.CodeLeaseExpired},
		{"GET", "GET", h.key, "", "", 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, h.url+"/work", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", "Bearer "+tt.auth)
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("%s /work = %d %s, want %d", tt.method, resp.StatusCode, raw, tt.status)
			}
			if tt.method != "POST" {
				return
			}
			var a contract.WorkAnswer
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatalf("answer %s: %v", raw, err)
			}
			if a.Code != tt.code || a.Accepted != (tt.code == "") || (tt.code != "" && a.Teaching == "") {
				t.Errorf("answer = %s, want code %q with a teaching", raw, tt.code)
			}
		})
	}
}

// TestServer_KeyProvedOnce: the door reads a Connection's row to prove its key once;
// later hop calls with that key read no row, and a revocation is still refused at the
// next hop call, by the hop's own check of the Connection in its project's log
// (authority TestDispatcher_RevokedOnAnotherInstance checks each kind of call, on
// another serve).
func TestServer_KeyProvedOnce(t *testing.T) {
	h := newHop(t)
	post := func(body string) contract.WorkAnswer {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+"/work", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+h.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a contract.WorkAnswer
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := post(`{"operation":{"kind":"Poll","workerId":"wkr-1","tools":[]}}`)
	if !first.Accepted || first.Lease == nil {
		t.Fatalf("startup Poll = %+v, want a lease", first)
	}
	renew := fmt.Sprintf(`{"operation":{"kind":"RenewLease","workerId":"wkr-1","workerGeneration":%d}}`, first.Lease.Generation)
	h.count.Reset()
	if a := post(renew); !a.Accepted {
		t.Fatalf("RenewLease = %+v, want it accepted", a)
	}
	if n := h.count.Counts().ByMethod["Connection"]; n != 0 {
		t.Errorf("a hop call with a key proved before read the Connection's row %d times, want none", n)
	}
	h.revoke(t)
	if a := post(renew); a.Code != contract.CodeCredentialRevoked {
		t.Errorf("RenewLease after the Connection was revoked = %+v, want %s", a, contract.CodeCredentialRevoked)
	}
}
