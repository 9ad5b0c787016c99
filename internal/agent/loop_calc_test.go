package agent_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// calcScript is the verified calculation as a scripted model plays it.
// The model names the job and the files; it never passes an input or output value.
const calcScript = `{"turns":[
  {"say":"load the input","calls":[{"tool":"ApplyAction","arguments":{"action":"load_input","params":{"path":"data/input.json"}}}]},
  {"say":"open the case","calls":[
    {"as":"open","tool":"OpenCase","arguments":{"caseType":"verified_calculation","businessKey":{"job_id":"calc-001"}}}]},
  {"say":"write the derived result","calls":[
    {"tool":"ApplyAction","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"action":"write_result","params":{"job_id":"calc-001","path":"out/result.json"}}}]},
  {"say":"read the written file back","calls":[
    {"tool":"ApplyAction","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"action":"verify_result"}}]},
  {"say":"close","calls":[
    {"as":"close","tool":"CloseCase","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"disposition":"completed"}}]},
  {"final":"the calculation is verified and the case is closed"}]}`

func int64Value(t *testing.T, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLoop_RealGateway_VerifiedCalculation runs the reference workflow through the loop
// against a real authority and gateway. The worker's reports and the person's approval
// are made through the authority directly, between the model's turns.
func TestLoop_RealGateway_VerifiedCalculation(t *testing.T) {
	files := map[string]string{}
	for _, name := range []string{"capability.toml", "calculation.dl"} {
		b, err := fs.ReadFile(verifiedcalculation.Files, "capability/"+name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	r := newAuthorityRigWith(t, 20*time.Millisecond, files)
	w := r.worker(t, []string{"calculation_input", "output_file"}, "docket.workspace.read_json@1", "docket.workspace.write_json@1")
	job := contract.StringValue("calc-001")
	// The worker and the person act after the call that needs them is answered, before
	// the model's next turn.
	after := map[string]func(){
		"scripted_1_1": func() {
			w.Settle(t, r.agent.ID, 1, contract.Args{"job_id": job, "unit_price_cents": int64Value(t, 129900),
				"quantity": int64Value(t, 2), "shipping_cents": int64Value(t, 3000)})
		},
		"scripted_3_1": func() {
			r.approveAll(t)
			w.Settle(t, r.agent.ID, 3)
		},
		"scripted_4_1": func() {
			w.Settle(t, r.agent.ID, 4, contract.Args{"job_id": job, "subtotal": int64Value(t, 259800), "total": int64Value(t, 262800)})
		},
	}
	rec := script(t, calcScript)
	out, err := r.loop(t, rec, func(c *agent.LoopConfig) {
		c.HoldWait = 5 * time.Millisecond
		c.OnTool = func(call agent.ToolCall, _ agent.ToolResult) {
			if f := after[call.ID]; f != nil {
				f()
			}
		}
	}).Send(t.Context(), "calc", "run the verified calculation for calc-001")
	if err != nil {
		c, _ := r.store.Load(t.Context(), "calc")
		for _, m := range c.Messages {
			for _, x := range m.Results {
				t.Logf("%s: %s", x.CallID, x.Content)
			}
		}
		t.Fatalf("Send: %v", err)
	}
	if !strings.HasSuffix(out.Final, "case is closed") {
		t.Errorf("Final = %q", out.Final)
	}
	res := results(t, r.store, "calc")
	if diff := cmp.Diff([]string{"", "", "", "", ""}, codes(t, r.store, "calc")); diff != "" {
		for _, x := range res {
			t.Log(x.Content)
		}
		t.Fatalf("error codes (-want +got):\n%s", diff)
	}
	if !strings.Contains(res[4].Content, `"disposition":"completed"`) || !strings.Contains(res[4].Content, `"receipt"`) {
		t.Errorf("CloseCase answered %s, want the case completed with a receipt", res[4].Content)
	}
	// The model's calls never carried the derived values: the Board bound them.
	for _, req := range rec.requests() {
		for _, m := range req.Messages {
			for _, c := range m.Calls {
				if strings.Contains(string(c.Arguments), "262800") || strings.Contains(string(c.Arguments), "259800") {
					t.Errorf("call %s carried a derived value: %s", c.Name, c.Arguments)
				}
			}
		}
	}
}
