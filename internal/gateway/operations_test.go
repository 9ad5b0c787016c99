package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

func fetchCall(path string) contract.ApplyActionInput {
	return contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": str(path)}}
}

// settle reports the worker outcome of the agent's Operation ordinal.
func (f *fixture) settle(t *testing.T, ordinal int64, path string) {
	t.Helper()
	f.worker.Settle(t, f.agent.ID, ordinal, contract.Args{"path": str(path)})
}

func TestGateway_HeldCallAtBound(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	cs := f.connect(t, nil)
	res, meta := call(t, cs, "ApplyAction", fetchCall("a.txt"))
	want := []contract.OperationEntry{{Tool: "ApplyAction", Label: "ApplyAction fetch", State: contract.OpRunning, Stage: contract.StageNotDispatched}}
	if diff := cmp.Diff(want, res.Operations, stripCompare); diff != "" || !res.Accepted || meta.Ordinal != 1 {
		t.Errorf("held call at the bound: accepted %v ordinal %d, operations (-want +got):\n%s", res.Accepted, meta.Ordinal, diff)
	}
	t.Run("operation_running", func(t *testing.T) {
		res, _ := call(t, cs, "ApplyBatch", batchOf("seen"))
		if res.ErrorCode != contract.CodeOperationRunning || res.RequestExecuted == nil || *res.RequestExecuted {
			t.Errorf("write while running = %s executed %v, want operation_running, requestExecuted false", res.ErrorCode, res.RequestExecuted)
		}
	})
	t.Run("query always runs", func(t *testing.T) {
		if res, _ := call(t, cs, "QueryBoard", struct{}{}); !res.Accepted {
			t.Errorf("QueryBoard while running = %+v, want accepted", res)
		}
	})
}

func TestGateway_HeldCallSettlesWhileHeld(t *testing.T) {
	f := newFixture(t, time.Minute)
	progressed := make(chan *mcp.ProgressNotificationClientRequest, 4)
	cs := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progressed <- r
	}})
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "ApplyAction", Arguments: fetchCall("a.txt")}
		params.SetProgressToken("p1")
		res, err := cs.CallTool(context.Background(), params)
		done <- answer{res, err}
	}()
	p := <-progressed
	raw, _ := json.Marshal(p.Params.Meta[contract.MetaKey])
	if !strings.Contains(raw2s(raw), `"ordinal":1`) || !strings.HasPrefix(p.Params.Message, "running") {
		t.Errorf("progress = %q %s, want running with ordinal 1", p.Params.Message, raw)
	}
	f.settle(t, 1, "a.txt")
	a := <-done
	if a.err != nil {
		t.Fatal(a.err)
	}
	res, _ := decodeResult(t, a.res)
	if !res.Accepted || len(res.Operations) == 0 || res.Operations[0].State != contract.OpDone {
		t.Errorf("held call after the outcome = %+v, want accepted and done", res)
	}
	q, _ := call(t, cs, "QueryBoard", contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "fetched", Args: contract.Args{"path": str("?p")}}})
	if !strings.Contains(string(q.Result), "a.txt") {
		t.Errorf("fetched facts = %s, want the returned row", q.Result)
	}
}

func raw2s(b []byte) string { return string(b) }

func TestGateway_LostAnswer(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	cs := f.connect(t, nil)
	call(t, cs, "ApplyAction", fetchCall("a.txt")) // answers running at the bound
	f.settle(t, 1, "a.txt")                        // the outcome lands while no call is held

	// The client lost its connection: a new session's first write is refused with the
	// outcome it never saw, and that refusal delivers it.
	cs2 := f.connect(t, nil)
	res, _ := call(t, cs2, "ApplyBatch", batchOf("seen"))
	if res.ErrorCode != contract.CodePreviousResultUndelivered || res.RequestExecuted == nil || *res.RequestExecuted {
		t.Fatalf("first write of a new session = %s executed %v, want previous_result_undelivered, requestExecuted false", res.ErrorCode, res.RequestExecuted)
	}
	if !strings.Contains(string(res.Result), `"rows":1`) {
		t.Errorf("refusal result = %s, want the undelivered outcome in full", res.Result)
	}
	if res, _ := call(t, cs2, "ApplyBatch", batchOf("seen")); !res.Accepted {
		t.Errorf("the write sent again = %s %s, want accepted", res.ErrorCode, res.Teaching)
	}
}

func TestGateway_DeliveredByQuery(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	cs := f.connect(t, nil)
	call(t, cs, "ApplyAction", fetchCall("a.txt"))
	f.settle(t, 1, "a.txt")
	q, _ := call(t, cs, "QueryBoard", struct{}{})
	if len(q.Operations) == 0 || q.Operations[0].Result == nil {
		t.Fatalf("strip after the outcome = %+v, want the result in full while unacknowledged", q.Operations)
	}
	if res, _ := call(t, cs, "ApplyBatch", batchOf("seen")); !res.Accepted {
		t.Errorf("write after the strip delivered the outcome = %s, want accepted", res.ErrorCode)
	}
	q, _ = call(t, cs, "QueryBoard", struct{}{})
	for _, e := range q.Operations {
		if e.Label == "ApplyAction fetch" && (e.Result != nil || e.Summary == "") {
			t.Errorf("acknowledged entry = %+v, want a summary only", e)
		}
	}
}
