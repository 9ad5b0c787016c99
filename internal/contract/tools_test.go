package contract_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docketrun/docket/internal/contract"
)

func TestTools_Schemas(t *testing.T) {
	t.Parallel()
	schemas := map[string]any{}
	var names []string
	for _, s := range contract.Tools() {
		names = append(names, s.Name)
		schemas[s.Name] = s.InputSchema()
	}
	want := []string{"OpenCase", "ApplyBatch", "ApplyAction", "CloseCase", "QueryBoard", "ReadArtifact"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	got, err := json.MarshalIndent(schemas, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "tool_schemas.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (go test -update creates it): %v", err)
	}
	if diff := cmp.Diff(string(golden), string(got)); diff != "" {
		t.Errorf("schemas differ from %s (-want +got):\n%s", path, diff)
	}
	for _, host := range []string{"agentId", "requestId", "_meta", "ordinal", "focusedRoots", "boardRevision"} {
		if strings.Contains(string(got), `"`+host+`"`) {
			t.Errorf("a tool schema names the host metadata field %q", host)
		}
	}
}

func TestDecodeToolInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool string
		in   string
		want any
		code contract.Code
	}{
		{"open case", "OpenCase", `{"caseType":"job","businessKey":{"job_id":"j1"}}`,
			&contract.OpenCaseInput{CaseType: "job", BusinessKey: contract.Args{"job_id": contract.StringValue("j1")}}, ""},
		{"action", "ApplyAction", `{"action":"note","params":{"topic":"t"}}`,
			&contract.ApplyActionInput{Action: "note", Params: contract.Args{"topic": contract.StringValue("t")}}, ""},
		{"empty query", "QueryBoard", ``, &contract.QueryBoardInput{}, ""},
		{"null query", "QueryBoard", `null`, &contract.QueryBoardInput{}, ""},
		{"unknown tool", "RunShell", `{}`, nil, contract.CodeNoSuchTool},
		{"host metadata", "ApplyAction", `{"action":"x","agentId":"a"}`, nil, contract.CodeHostMetadata},
		{"host metadata _meta", "QueryBoard", `{"_meta":{}}`, nil, contract.CodeHostMetadata},
		{"unknown field", "ReadArtifact", `{"ref":"art_x","path":"/etc"}`, nil, contract.CodeUnknownField},
		{"missing required", "ReadArtifact", `{}`, nil, contract.CodeInvalidArgument},
		{"wrong type", "CloseCase", `{"caseId":1,"disposition":"completed"}`, nil, contract.CodeInvalidArgument},
		{"trailing data", "OpenCase", `{"caseType":"x"} {}`, nil, contract.CodeInvalidArgument},
		{"not an object", "OpenCase", `[1]`, nil, contract.CodeInvalidArgument},
		{"batch checked", "ApplyBatch", `{"operations":[{"op":"nope"}]}`, nil, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := contract.DecodeToolInput(tt.tool, []byte(tt.in))
			if code := contract.CodeOf(err); code != tt.code {
				t.Fatalf("DecodeToolInput(%s, %q) error = %v, want code %q", tt.tool, tt.in, err, tt.code)
			}
			if tt.code == "" {
				if diff := cmp.Diff(tt.want, got, valueEqual); diff != "" {
					t.Errorf("DecodeToolInput(%s, %q) (-want +got):\n%s", tt.tool, tt.in, diff)
				}
			}
		})
	}
}

// FuzzDecodeToolInput checks that decoding any input of any tool either fails with a
// coded error or gives a value whose JSON decodes again to the same value.
func FuzzDecodeToolInput(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "tools", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.TrimSuffix(filepath.Base(p), ".json"), data)
	}
	f.Fuzz(func(t *testing.T, tool string, data []byte) {
		v, err := contract.DecodeToolInput(tool, data)
		if err != nil {
			if contract.CodeOf(err) == "" {
				t.Fatalf("DecodeToolInput(%s, %q) = %v, an error without a code", tool, data, err)
			}
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encode decoded input: %v", err)
		}
		v2, err := contract.DecodeToolInput(tool, again)
		if err != nil {
			t.Fatalf("decoded input %s does not decode again: %v", again, err)
		}
		if diff := cmp.Diff(v, v2, valueEqual, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip changed the input (-first +second):\n%s", diff)
		}
	})
}

func TestGolden_Gateway(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	no := false
	entry := contract.OperationEntry{Tool: "ApplyAction", Label: "ApplyAction write_result", State: contract.OpWaitingForDecision,
		At: at, Since: at, Decision: "req_0123"}
	tests := []struct {
		name string
		v    any
	}{
		{"tool_result", &contract.ToolResult{ErrorCode: contract.CodePreviousResultUndelivered, Teaching: "the outcome of your earlier call had not reached you",
			RequestExecuted: &no, Result: json.RawMessage(`{"nodeIds":["n-1"]}`),
			View:       contract.View{Cases: contract.Bounded[contract.CaseEntry]{Items: []contract.CaseEntry{}}},
			Operations: []contract.OperationEntry{entry, {Tool: "ApplyBatch", Label: "ApplyBatch 1 ops", State: contract.OpDone, At: at, Since: at, Summary: "ApplyBatch 1 ops done"}}}},
		{"host_meta", &contract.HostMeta{AgentID: "agt_1", FocusedRoots: []contract.FocusedRoot{{CaseID: "case-1", Root: "case-1:root"}},
			BoardRevision: 42, AffectedCases: []contract.CaseID{"case-1"}, Ordinal: 3,
			State: []contract.OperationSlot{{Ordinal: 3, OperationEntry: entry}}}},
		{"request", &contract.Request{ID: "req_0123", Project: "default", Ordinal: 3, RequestedBy: "agent:agt_1",
			Vector: contract.RequestVector{Action: "write_result", CaseID: "case-1", Tool: "docket.workspace.write_json@1",
				Args: contract.Args{"path": contract.StringValue("out/r.json")}},
			Digest: "sha256:ab", State: contract.RequestDenied, CreatedAt: at, Deadline: at.Add(time.Hour),
			DecidedBy: "member:mem_1", DecidedAt: &at, Reason: "not today"}},
		{"decision", &contract.Decision{Digest: "sha256:ab", Verdict: contract.VerdictApprove, Reason: "checked"}},
		{"artifact_fragment", &contract.ArtifactFragment{Ref: "art_1", Offset: 0, Size: 5, Text: "hello", More: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tt.name+".json")
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
			back := reflect.New(reflect.TypeOf(tt.v).Elem())
			if err := json.NewDecoder(bytes.NewReader(want)).Decode(back.Interface()); err != nil {
				t.Fatal(err)
			}
			// Compared as JSON: a json.RawMessage comes back indented.
			again, err := json.Marshal(back.Interface())
			if err != nil {
				t.Fatal(err)
			}
			first, _ := json.Marshal(tt.v)
			if diff := cmp.Diff(string(first), string(again)); diff != "" {
				t.Errorf("decoding %s does not give the value back (-want +got):\n%s", path, diff)
			}
		})
	}
}
