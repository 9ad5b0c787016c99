package contract_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// TestAPIGolden pins the JSON form of the console API's wire types (api.go, identity.go)
// in testdata/api/<name>.json, and checks that each golden decodes back to its value.
// Refresh with go test -update.
func TestAPIGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	member := contract.Member{ID: "mem_0123456789abcdef", Name: "ada", CreatedAt: at}
	agent := contract.Agent{ID: "agt_0123456789abcdef", Project: "default", Name: "calc", Kind: contract.AgentKindOrchestrator, CreatedAt: at, RevokedAt: &at}
	conn := contract.Connection{ID: "con_0123456789abcdef", Project: "default", Name: "laptop", CreatedAt: at}
	tests := []struct {
		name string
		v    any
	}{
		{"login_request", &contract.LoginRequest{Name: "ada", Passphrase: "correct horse battery"}},
		{"session_created", &contract.SessionCreated{Token: "dkt_ses_x", CSRFToken: "c", ExpiresAt: at, Member: member}},
		{"whoami", &contract.Whoami{Kind: contract.PrincipalMember, ID: "mem_0123456789abcdef", Name: "ada", Projects: []contract.ProjectID{"default"}}},
		{"create_agent_request", &contract.CreateAgentRequest{Name: "calc", Kind: "orchestrator"}},
		{"agent_token", &contract.AgentToken{Agent: agent, Token: "dkt_agt_x"}},
		{"connection_key", &contract.ConnectionKey{Connection: conn, Key: "dkt_con_con_0123456789abcdef.x"}},
		{"source", &contract.Source{Connection: conn.ID, Name: "workspace", Type: "file", Words: []string{"calculation_input"}, Tier: contract.TierAttested, Digest: "sha256:00"}},
		{"tool_lock", &contract.ToolLock{Connection: conn.ID, Tool: "docket.workspace.read_json@1", Digest: "sha256:00"}},
		{"capability_upload", &contract.CapabilityUpload{Files: map[string]string{"capability.toml": "id = \"demo.calc\"\n"}}},
		{"installed", &contract.Installed{Project: "default", Release: contract.Release{ID: "demo.calc", Version: "1.0.0", Digest: "sha256:00", CreatedAt: at}, Created: true}},
		{"event_page", &contract.Page[contract.Event]{Items: []contract.Event{{Project: "default", Seq: 1, ID: "e1", Type: event.ProjectCreated, At: at,
			Actor: "member:mem_0123456789abcdef", Data: json.RawMessage(`{"id":"default"}`), DataHash: "aa", PrevHash: "00", Hash: "bb"}}, Next: "1"}},
		{"chain_report", &contract.ChainReport{Project: "default", Seq: 1, Broken: &contract.BrokenLink{Seq: 2, Field: "hash", Want: "aa", Got: "bb"}}},
		{"health", &contract.Health{Version: "dev", Store: "ok"}},
		{"task_request", &contract.TaskRequest{Text: "Verify job calc-001.", Conversation: "c-1", CaseType: "verified_calculation",
			BusinessKey: contract.Args{"job_id": contract.StringValue("calc-001")}, CaseID: "case-1", ClientKey: "nightly-1"}},
		{"task", &contract.Task{ID: "t-0123456789abcdef", Project: "default", Agent: agent.ID, Kind: contract.TaskKindTask, Text: "Verify job calc-001.",
			Conversation: "c-1", CasePin: contract.CasePin{CaseType: "verified_calculation", BusinessKey: contract.Args{"job_id": contract.StringValue("calc-001")}},
			PostedBy: "member:mem_0123456789abcdef", PostedAt: at, State: contract.TaskWaiting, Attempt: 1,
			Waiting: []contract.TaskWait{{CallID: "scripted_3_1", Tool: "ApplyAction", Ordinal: 3, After: 2}},
			Result:  &contract.TaskResult{Final: "The write waits for a person's approval.", ClosedCases: []contract.ClosedCase{}}, UpdatedAt: at}},
		{"task_claim", &contract.TaskClaim{Task: &contract.Task{ID: "t-0123456789abcdef", Project: "default", Agent: agent.ID, Kind: contract.TaskKindMessage,
			Text: "Use the second file.", Conversation: "c-1", PostedBy: "member:mem_0123456789abcdef", PostedAt: at, State: contract.TaskClaimed,
			Attempt: 2, LeaseUntil: &at, UpdatedAt: at}, Wake: true}},
		{"task_report", &contract.TaskReport{Attempt: 2, State: contract.TaskCompleted, TaskResult: contract.TaskResult{Final: "done",
			ClosedCases: []contract.ClosedCase{{CaseID: "case-1", Root: "case-1:root", Disposition: contract.DispositionCompleted},
				{CaseID: "case-2", Root: "case-2:root", Disposition: contract.DispositionFailed}}}}},
		{"task_renewal", &contract.TaskRenewal{Attempt: 2, Wait: &contract.TaskRunWait{On: contract.RunWaitModel, Origin: "http://127.0.0.1:8080",
			Phase: contract.RunWaitFirstByte, Since: at, Deadline: at.Add(5 * time.Minute)}}},
		{"task_cancelled", &contract.Task{ID: "t-0123456789abcdef", Project: "default", Agent: agent.ID, Kind: contract.TaskKindTask, Text: "Verify job calc-001.",
			Conversation: "c-1", PostedBy: "member:mem_0123456789abcdef", PostedAt: at, State: contract.TaskCancelled, Attempt: 2,
			Cancel: &contract.TaskCancel{By: "member:mem_0123456789abcdef", At: at},
			Result: &contract.TaskResult{Teaching: "cancelled by member:mem_0123456789abcdef: the run sent no further model request or tool call; the Operation it admitted keeps its outcome",
				ClosedCases: []contract.ClosedCase{}, Operations: []contract.TaskOperation{{CallID: "scripted_3_1", Tool: "ApplyAction", Ordinal: 3}}}, UpdatedAt: at}},
		{"task_renewal_held", &contract.TaskRenewal{Attempt: 2, WaitMS: 40000}},
		{"create_schedule_request", &contract.CreateScheduleRequest{Cron: "0 9 * * mon-fri", TimeZone: "Europe/Berlin", Missed: contract.MissedRunOnce,
			Task: contract.TaskRequest{Agent: "calc", Text: "Send the morning report."}}},
		{"schedule", &contract.Schedule{ID: "sch_0123456789abcdef", Project: "default", AgentName: "calc", Cron: "0 9 * * mon-fri", TimeZone: "Europe/Berlin",
			Missed: contract.MissedRunOnce, Task: contract.TaskRequest{Agent: string(agent.ID), Text: "Send the morning report."},
			CreatedBy: "member:mem_0123456789abcdef", CreatedAt: at, State: contract.ScheduleActive, NextFire: &at,
			LastFires: []contract.ScheduleFire{
				{Schedule: "sch_0123456789abcdef", Agent: agent.ID, Due: at, FiredAt: at, Kind: contract.FireDue, Task: "t-0123456789abcdef", Outcome: string(contract.TaskCompleted)},
				{Schedule: "sch_0123456789abcdef", Agent: agent.ID, Due: at, FiredAt: at, Kind: contract.FireRunNow, Outcome: contract.FireRefused,
					ErrorCode: contract.CodeForbidden, Teaching: "agent calc is revoked and takes no tasks; post to a live Agent"}}}},
		{"blueprint", &contract.Blueprint{Name: "researcher", BlueprintSpec: contract.BlueprintSpec{Description: "Verifies calculations.",
			Profile: contract.ProfileSpec{Provider: "openai", ModelURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5",
				Allow: &contract.AllowList{CaseTypes: []string{"verified_calculation"}, Actions: []string{"write_output", "docket.ask"}}}},
			Digest: contract.Sum([]byte("researcher")), SetBy: "member:mem_0123456789abcdef", SetAt: at}},
		{"from_blueprint", &contract.FromBlueprint{Blueprint: "researcher", KeyFile: "/home/ada/.docket/agents/calc/model.key", Enabled: true}},
		{"worker_page", &contract.Page[contract.WorkerStatus]{Items: []contract.WorkerStatus{
			{Connection: conn, Lease: contract.LeaseHeld, WorkerID: "w-1", Generation: 3, ExpiresAt: &at,
				Tools:   []contract.ToolLock{{Connection: conn.ID, Tool: "docket.workspace.read_json@1", Digest: "sha256:00"}},
				Sources: []contract.Source{{Connection: conn.ID, Name: "workspace", Type: "file", Words: []string{"calculation_input"}, Tier: contract.TierAttested, Digest: "sha256:00"}}},
			{Connection: contract.Connection{ID: "con_fedcba9876543210", Project: "default", Name: "spare", CreatedAt: at}, Lease: contract.LeaseNever,
				Tools: []contract.ToolLock{}, Sources: []contract.Source{}}}}},
		{"operation_page", &contract.Page[contract.OperationInfo]{Items: []contract.OperationInfo{
			{Agent: agent.ID, AgentName: "calc", Ordinal: 4, Work: "agt_0123456789abcdef.4",
				OperationEntry: contract.OperationEntry{Tool: "ApplyAction", Label: "ApplyAction write_result", State: contract.OpRunning,
					At: at, Since: at, Stage: contract.StageNotDispatched, Reason: "no live worker locks docket.workspace.write_json@1",
					ReasonCode: contract.CodeNoLiveWorker},
				Waiting: contract.WaitDispatch, Action: "write_result", CaseID: "case-1", ExecTool: "docket.workspace.write_json@1"},
			{Agent: agent.ID, AgentName: "calc", Ordinal: 5, Work: "agt_0123456789abcdef.5",
				OperationEntry: contract.OperationEntry{Tool: "ApplyAction", Label: "ApplyAction write_result", State: contract.OpNeedsPerson,
					At: at, Since: at, Reason: "the worker's lease expired while it held the work; a person must check (docket reconcile)."},
				Waiting: contract.WaitPerson}}}},
		{"case_detail", &contract.CaseDetail{
			Case: contract.Case{CaseID: "case-1", Root: "case-1:root", CaseType: "verified_calculation", BusinessKey: contract.Args{"job_id": contract.StringValue("calc-001")},
				Status: contract.CaseClosed, Release: "docket.verified-calculation@1.0.0", ReleaseDigest: "sha256:11", ContractDigest: "sha256:22", KeyDigest: "sha256:33",
				OpenedBy: "agent:agt_0123456789abcdef", OpenedAt: at, Disposition: contract.DispositionCompleted, ClosedAt: &at},
			Receipt: &contract.ClosureReceipt{CaseID: "case-1", Root: "case-1:root", CaseType: "verified_calculation", Disposition: contract.DispositionCompleted,
				Release: "docket.verified-calculation@1.0.0", ReleaseDigest: "sha256:11", ContractDigest: "sha256:22", KeyDigest: "sha256:33", Certified: true,
				Acceptance: &contract.Node{NodeID: "d_4a85", Kind: contract.NodeDerived, Tier: contract.TierAttested}, ExplanationDigest: "sha256:44",
				ClosedBy: "agent:agt_0123456789abcdef", At: at},
			Acceptance: &contract.Node{NodeID: "d_4a85", Kind: contract.NodeDerived, Tier: contract.TierAttested},
			Why: &contract.Why{Shown: 1, Omitted: 2, Root: contract.WhyNode{NodeID: "d_4a85", Kind: contract.NodeDerived, Tier: contract.TierAttested,
				Rule: "docket.verified-calculation/calculation_verified", RuleBy: "capability:docket.verified-calculation@1.0.0", More: 2}},
			Facts: []contract.WhyNode{{NodeID: "n_output", Kind: contract.NodeFact, Tier: contract.TierAttested, CreatedBy: "tool:docket.workspace.read_json@1",
				Attestation: &contract.Attestation{Tool: "docket.workspace.read_json@1", Action: "verify_result", Release: "docket.verified-calculation@1.0.0",
					Sources: []contract.Source{{Connection: conn.ID, Name: "workspace", Type: "file", Words: []string{"output_file"}, Tier: contract.TierAttested, Digest: "sha256:00"}}}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "api", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run go test -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("JSON of %s differs from %s (-want +got):\n%s", tt.name, path, diff)
			}
			back := reflect.New(reflect.TypeOf(tt.v).Elem())
			dec := json.NewDecoder(bytes.NewReader(want))
			dec.DisallowUnknownFields()
			if err := dec.Decode(back.Interface()); err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if diff := cmp.Diff(tt.v, back.Interface(), compactRaw, valueEqual); diff != "" {
				t.Errorf("decoding %s does not give the value back (-want +got):\n%s", path, diff)
			}
		})
	}
}

// compactRaw compares raw JSON by its compact form: a golden holds it indented.
var compactRaw = cmp.Transformer("compact", func(m json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		return string(m)
	}
	return b.String()
})

func TestParseIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		parse func(string) error
		in    string
		ok    bool
	}{
		{"project slug", func(s string) error { _, err := contract.ParseProjectID(s); return err }, "default", true},
		{"project upper case", func(s string) error { _, err := contract.ParseProjectID(s); return err }, "Default", false},
		{"project leading hyphen", func(s string) error { _, err := contract.ParseProjectID(s); return err }, "-x", false},
		{"member id", func(s string) error { _, err := contract.ParseMemberID(s); return err }, "mem_0123456789abcdef", true},
		{"member id short", func(s string) error { _, err := contract.ParseMemberID(s); return err }, "mem_0123", false},
		{"agent id wrong prefix", func(s string) error { _, err := contract.ParseAgentID(s); return err }, "mem_0123456789abcdef", false},
		{"connection id upper hex", func(s string) error { _, err := contract.ParseConnectionID(s); return err }, "con_0123456789ABCDEF", false},
		{"name", func(s string) error { _, err := contract.ParseName(s); return err }, "calc.v2_x-y", true},
		{"name with space", func(s string) error { _, err := contract.ParseName(s); return err }, "a b", false},
		{"agent kind", func(s string) error { _, err := contract.ParseAgentKind(s); return err }, "orchestrator", true},
		{"agent kind unknown", func(s string) error { _, err := contract.ParseAgentKind(s); return err }, "boss", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.parse(tt.in); (err == nil) != tt.ok {
				t.Errorf("parse(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
}
