package gateway_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// TestGateway_WriteBound drives an Agent's writes through the real gateway with the SDK
// client, on the bound docket serve keeps by default: the write past
// operation.DefaultMaxWritesPerMinute in a minute is refused operation_limit with
// requestExecuted false and writes nothing, a read still answers, and a minute later the
// Agent writes again (docs/security.md, "Bounds").
func TestGateway_WriteBound(t *testing.T) {
	clock := authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	f := newConfiguredFixture(t, fixtureConfig{ops: operation.Config{HoldBound: time.Second}, now: clock.Now})
	cs := f.connect(t, nil)
	write := func(n int) contract.Batch {
		return contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": str(fmt.Sprint(n))}}}}}
	}
	for i := range operation.DefaultMaxWritesPerMinute {
		if res, _ := call(t, cs, "ApplyBatch", write(i)); !res.Accepted {
			t.Fatalf("write %d of %d in a minute = %s %s, want accepted", i+1, operation.DefaultMaxWritesPerMinute, res.ErrorCode, res.Teaching)
		}
		clock.Add(100 * time.Millisecond) // 120 writes in 12 s: every one inside the minute
	}
	head := func() int64 {
		t.Helper()
		h, err := f.a.LogHead(t.Context(), f.admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	past := []struct {
		name string
		tool string
		args any
	}{
		{"ApplyBatch", "ApplyBatch", write(-1)},
		{"ApplyAction", "ApplyAction", contract.ApplyActionInput{Action: "note", Params: contract.Args{"topic": str("t")}}},
		{"OpenCase", "OpenCase", contract.OpenCaseInput{CaseType: "exploration"}},
	}
	for _, tc := range past {
		t.Run(tc.name+" past the bound", func(t *testing.T) {
			before := head()
			res, meta := call(t, cs, tc.tool, tc.args)
			if res.ErrorCode != contract.CodeOperationLimit || res.Accepted || res.Teaching == "" ||
				res.RequestExecuted == nil || *res.RequestExecuted || meta.Ordinal != 0 {
				t.Errorf("%s past the bound = accepted %v %q %q executed %v ordinal %d, want operation_limit with a teaching, requestExecuted false and no Operation",
					tc.tool, res.Accepted, res.ErrorCode, res.Teaching, res.RequestExecuted, meta.Ordinal)
			}
			if after := head(); after != before {
				t.Errorf("the refused %s moved the log from %d to %d; it must write nothing", tc.tool, before, after)
			}
		})
	}
	t.Run("QueryBoard still answers", func(t *testing.T) {
		if res, _ := call(t, cs, "QueryBoard", struct{}{}); !res.Accepted {
			t.Errorf("QueryBoard at the bound = %s %s, want accepted: reads never count", res.ErrorCode, res.Teaching)
		}
	})
	t.Run("a minute later", func(t *testing.T) {
		clock.Add(time.Minute)
		if res, meta := call(t, cs, "ApplyBatch", write(-2)); !res.Accepted || meta.Ordinal != int64(operation.DefaultMaxWritesPerMinute)+1 {
			t.Errorf("write a minute later = %s %s ordinal %d, want accepted as Operation %d", res.ErrorCode, res.Teaching, meta.Ordinal, operation.DefaultMaxWritesPerMinute+1)
		}
	})
}
