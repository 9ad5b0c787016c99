package workhop_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// FuzzWorkBody checks the /work body decoder the server uses: a body either decodes to
// one operation whose request is set and survives a round trip, or is refused with a
// code (an absent operation is refused by the server as an unknown kind) — never a
// panic, never an operation without its request.
func FuzzWorkBody(f *testing.F) {
	ents, _ := os.ReadDir(filepath.Join("testdata", "bodies"))
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join("testdata", "bodies", e.Name()))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in contract.WorkBody
		if err := contract.DecodeStrict(raw, &in); err != nil {
			return
		}
		op := in.Operation
		if op.Kind == "" {
			return // no operation at all: the server refuses it as an unknown kind
		}
		set := map[string]bool{contract.WorkPoll: op.Poll != nil, contract.WorkRenewLease: op.RenewLease != nil,
			contract.WorkReleaseLease: op.ReleaseLease != nil, contract.WorkClaim: op.Claim != nil, contract.WorkReport: op.Report != nil}
		if !set[op.Kind] {
			t.Fatalf("decoded kind %q without its request: %+v", op.Kind, op)
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", in, err)
		}
		var back contract.WorkBody
		if err := contract.DecodeStrict(again, &back); err != nil || back.Operation.Kind != op.Kind {
			t.Fatalf("round trip of %s = %+v, %v", again, back, err)
		}
	})
}
