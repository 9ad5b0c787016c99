package contract_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// TestWorkGolden pins the JSON of the worker hop's wire types in
// testdata/work/, as TestGolden does for the Board's: encode, compare, decode back.
func TestWorkGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	gen := int64(7)
	desc := []contract.ToolDescriptor{{Tool: "docket.workspace.read_json@1", Digest: "sha256:aa", Adapter: "workspace",
		AdapterDigest: "sha256:bb", Kind: "read", SourceTypes: []string{"file"}}}
	row := contract.WorkRow{ID: "w-1", Project: "demo", Invocation: "op-1", Action: "load_input",
		Args:     json.RawMessage(`{"path":"data/input.json"}`),
		Target:   json.RawMessage(`{"source":"calc","sourceType":"file","sourceDigest":"sha256:cc"}`),
		ToolSpec: json.RawMessage(`{"tool":"docket.workspace.read_json@1","digest":"sha256:aa","kind":"read"}`),
		Grant:    "eyJ9.AAAA"}
	tests := []struct {
		name string
		v    any
	}{
		{"poll_startup", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkPoll,
			Poll: &contract.PollRequest{WorkerID: "wkr-1", Tools: desc}}}},
		{"poll", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkPoll,
			Poll: &contract.PollRequest{WorkerID: "wkr-1", Generation: &gen, Tools: desc}}}},
		{"renew_lease", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkRenewLease,
			RenewLease: &contract.LeaseRequest{WorkerID: "wkr-1", Generation: 7}}}},
		{"release_lease", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkReleaseLease,
			ReleaseLease: &contract.LeaseRequest{WorkerID: "wkr-1", Generation: 7}}}},
		{"claim", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkClaim,
			Claim: &contract.ClaimRequest{ID: "w-1", WorkerID: "wkr-1", Generation: 7, Grant: "eyJ9.AAAA"}}}},
		{"report_ok", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkReport,
			Report: &contract.ReportRequest{ID: "w-1", OK: true, Result: &contract.WorkResult{Rows: []contract.Args{{"job_id": contract.StringValue("calc-001"), "quantity": mustInt(t, 2)}}},
				Facts:    []contract.Atom{{Predicate: "calculation_input", Args: contract.Args{"job_id": contract.StringValue("calc-001"), "quantity": mustInt(t, 2)}}},
				WorkerID: "wkr-1", Generation: 7, Grant: "eyJ9.AAAA"}}}},
		{"report_unknown", &contract.WorkBody{Operation: contract.WorkOperation{Kind: contract.WorkReport,
			Report: &contract.ReportRequest{ID: "w-1", EffectUnknown: true, Code: contract.CodeToolTimeout, Reason: "tool acme.x@1 ran past its limit",
				WorkerID: "wkr-1", Generation: 7, Grant: "eyJ9.AAAA"}}}},
		{"answer_poll", &contract.WorkAnswer{Accepted: true, Lease: &contract.Lease{WorkerID: "wkr-1", Generation: 7,
			ExpiresAt: at.Add(30 * time.Second), ServerTime: at, HeartbeatAfterMs: 10000}, Work: []contract.WorkRow{row}}},
		{"answer_refused", &contract.WorkAnswer{Code: contract.CodeLeaseSuperseded, Teaching: "a newer worker holds the lease; acquire anew."}},
		{"grant", &contract.Grant{Project: "demo", Invocation: "op-1", Action: "load_input", Tool: "docket.workspace.read_json@1",
			ToolDigest: "sha256:aa", Source: "calc", SourceDigest: "sha256:cc", Connection: "con_0123456789abcdef", WorkerID: "wkr-1",
			Generation: 7, AdapterDigest: "sha256:bb", RequestDigest: "sha256:dd", IssuedAt: at, ExpiresAt: at.Add(time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "work", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (go test -update creates it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("JSON of %s differs from %s (-want +got):\n%s", tt.name, path, diff)
			}
			back := newOf(tt.v)
			if err := contract.DecodeStrict(want, back); err != nil {
				t.Fatalf("decode golden strictly: %v", err)
			}
			if diff := cmp.Diff(tt.v, back, valueEqual, rawEqual); diff != "" {
				t.Errorf("decoding %s does not give the value back (-want +got):\n%s", path, diff)
			}
		})
	}
}

// rawEqual compares raw JSON by content: indentation in a golden file changes the bytes,
// and the grant's request digest is over JCS for exactly that reason.
var rawEqual = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
})

func newOf(v any) any {
	switch v.(type) {
	case *contract.WorkBody:
		return &contract.WorkBody{}
	case *contract.WorkAnswer:
		return &contract.WorkAnswer{}
	case *contract.Grant:
		return &contract.Grant{}
	}
	panic("newOf: add the type")
}

func TestWorkBody_decode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		js   string
		code contract.Code
	}{
		{"ok claim", `{"operation":{"kind":"Claim","id":"w","workerId":"k","workerGeneration":1,"grant":"g"}}`, ""},
		{"unknown kind", `{"operation":{"kind":"Execute","id":"w"}}`, contract.CodeWorkBody},
		{"field of another kind", `{"operation":{"kind":"Claim","id":"w","workerId":"k","workerGeneration":1,"grant":"g","tools":[]}}`, contract.CodeWorkBody},
		{"extra field", `{"operation":{"kind":"RenewLease","workerId":"k","workerGeneration":1,"force":true}}`, contract.CodeWorkBody},
		{"not an object", `{"operation":[]}`, contract.CodeWorkBody},
		{"report with a nested arg", `{"operation":{"kind":"Report","id":"w","ok":true,"result":{"rows":[{"a":{"b":1}}]},"workerId":"k","workerGeneration":1,"grant":"g"}}`, contract.CodeWorkBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b contract.WorkBody
			err := contract.DecodeStrict([]byte(tt.js), &b)
			if got := contract.CodeOf(err); got != tt.code {
				t.Errorf("decode %s = %v, want %q", tt.js, err, tt.code)
			}
		})
	}
}

func TestWorkOperation_marshalEmpty(t *testing.T) {
	t.Parallel()
	if _, err := json.Marshal(contract.WorkOperation{Kind: contract.WorkClaim}); contract.CodeOf(err) != contract.CodeWorkBody {
		t.Errorf("Marshal(Claim without request) = %v, want work_body", err)
	}
}

func TestParseToolID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"docket.workspace.read_json@1", true},
		{"acme.report-build@12", true},
		{"acme@1", false},
		{"acme.x@0", false},
		{"acme.x@01", false},
		{"acme.x@1.0", false},
		{"Acme.x@1", false},
		{"acme..x@1", false},
		{"acme.1x@1", false},
		{"acme.x", false},
		{"acme.x@1@2", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := contract.ParseToolID(tt.in)
			if (err == nil) != tt.ok {
				t.Errorf("ParseToolID(%q) = %v, want ok %v", tt.in, err, tt.ok)
			}
			if err != nil && contract.CodeOf(err) != contract.CodeToolID {
				t.Errorf("ParseToolID(%q) = %v, want code tool_id", tt.in, err)
			}
		})
	}
}
