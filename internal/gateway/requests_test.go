package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
)

func TestRequests_Refusals(t *testing.T) {
	f := newFixture(t, time.Second)
	srv := httptest.NewServer(gateway.NewRequests(f.a, f.ops, nil))
	t.Cleanup(srv.Close)
	member := memberToken(t, f)
	tests := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		status int
		code   contract.Code
	}{
		{"no token", "GET", "/api/v1/projects/default/requests", "", "", http.StatusUnauthorized, contract.CodeUnauthenticated},
		{"agent token", "GET", "/api/v1/projects/default/requests", f.token, "", http.StatusForbidden, contract.CodeForbidden},
		{"other project", "GET", "/api/v1/projects/other/requests", member, "", http.StatusForbidden, contract.CodeForbidden},
		{"unknown field", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"approve","by":"me"}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"two objects", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"approve"}{}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"bad verdict", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"maybe"}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"unknown request", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"deny"}`, http.StatusNotFound, contract.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var ce contract.Error
			json.NewDecoder(resp.Body).Decode(&ce)
			if resp.StatusCode != tt.status || ce.Code != tt.code || ce.Teaching == "" {
				t.Errorf("%s %s = %d %s %q, want %d %s with a teaching", tt.method, tt.path, resp.StatusCode, ce.Code, ce.Teaching, tt.status, tt.code)
			}
		})
	}
}
