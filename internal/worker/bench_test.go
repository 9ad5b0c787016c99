package worker_test

import (
	"context"
	"testing"

	"github.com/docketrun/docket/internal/worker"
)

// BenchmarkExecutor_Prepare measures the checks every served row passes before it is
// claimed: decoding, the request digest, the grant's MAC and fields, args and Source.
func BenchmarkExecutor_Prepare(b *testing.B) {
	e := newExecutor(b, func(context.Context, worker.Call) (worker.Outcome, error) { return worker.OK() })
	row := served(b, e, worker.WorkspaceTool(worker.OpReadText), `{"path":"a.txt"}`,
		`{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`, nil)
	for b.Loop() {
		if _, err := e.Prepare(row, "wkr-1", 2); err != nil {
			b.Fatal(err)
		}
	}
}
