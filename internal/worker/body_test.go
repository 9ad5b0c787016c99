package worker_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestBody_SameAsMarshal checks that Body writes the bytes json.Marshal writes for the
// body, strings that JSON escapes and HTML's characters included, and refuses what it
// refuses with its error.
func TestBody_SameAsMarshal(t *testing.T) {
	t.Parallel()
	gen := int64(3)
	odd := "a<b>&c\u2028\u2029\"\\\n\t\x01é"
	val := func(v contract.Value, err error) contract.Value {
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rows := []contract.Args{{"s": contract.StringValue(odd), "i": val(contract.IntValue(-7)), "f": val(contract.FloatValue(2.5)), "b": contract.BoolValue(true)}, {}}
	for _, op := range []contract.WorkOperation{
		{Kind: contract.WorkPoll, Poll: &contract.PollRequest{WorkerID: "wkr-1", Tools: []contract.ToolDescriptor{{Tool: "acme.t@1", Description: odd, SourceTypes: []string{}}}}},
		{Kind: contract.WorkPoll, Poll: &contract.PollRequest{WorkerID: "wkr-1", Generation: &gen, Max: 4, VaultSources: []string{"calc", odd}}},
		{Kind: contract.WorkRenewLease, RenewLease: &contract.LeaseRequest{WorkerID: "wkr-1", Generation: 3}},
		{Kind: contract.WorkReleaseLease, ReleaseLease: &contract.LeaseRequest{WorkerID: "wkr-1", Generation: 3}},
		{Kind: contract.WorkClaim, Claim: &contract.ClaimRequest{ID: "w-1", WorkerID: "wkr-1", Generation: 3, Grant: "a.b"}},
		{Kind: contract.WorkReport, Report: &contract.ReportRequest{ID: "w-1", OK: true, Result: &contract.WorkResult{Rows: rows}, WorkerID: "wkr-1", Generation: 3, Grant: "a.b"}},
		{Kind: contract.WorkReport, Report: &contract.ReportRequest{ID: "w-1", EffectUnknown: true, Code: contract.CodeEffectUnknown, Reason: odd,
			Facts: []contract.Atom{{Predicate: "p", Args: rows[0]}}, WorkerID: "wkr-1", Generation: 3, Grant: "a.b"}},
		{Kind: "Run"},
		{Kind: contract.WorkClaim},
		{Kind: contract.WorkReport, Report: &contract.ReportRequest{ID: "w-1", OK: true, Result: &contract.WorkResult{Rows: []contract.Args{{"x": {}}}}}},
	} {
		got, errGot := worker.Body(op)
		want, errWant := json.Marshal(contract.WorkBody{Operation: op})
		if !bytes.Equal(got, want) || (errGot == nil) != (errWant == nil) || errGot != nil && errGot.Error() != errWant.Error() {
			t.Errorf("Body(%s) = %s, %v; json.Marshal = %s, %v", op.Kind, got, errGot, want, errWant)
		}
	}
}

// TestDecodeAnswer_Accepted checks that the answer to an accepted Claim or Report decodes
// as the general decode of an answer decodes it.
func TestDecodeAnswer_Accepted(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`{"accepted":true}`, "{\"accepted\":true}\n", "{\"accepted\":true} \r\n\t"} {
		got, err := worker.DecodeAnswer([]byte(raw))
		var want contract.ServedWork
		if errWant := contract.DecodeStrict([]byte(raw), &want); err != nil || errWant != nil {
			t.Fatalf("DecodeAnswer(%q) = %v; DecodeStrict = %v", raw, err, errWant)
		}
		if got.Lease != want.Lease || got.Rows != nil || got.Served != nil || len(want.Rows) != 0 || !want.Accepted {
			t.Fatalf("DecodeAnswer(%q) = %+v, DecodeStrict %+v", raw, got, want)
		}
	}
}
