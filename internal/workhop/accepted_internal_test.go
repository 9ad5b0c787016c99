package workhop

import (
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestAcceptedBody checks that the answers sent as acceptedBody are exactly those whose
// json.Marshal it is, and that every other answer is encoded.
func TestAcceptedBody(t *testing.T) {
	tests := []struct {
		name string
		a    contract.WorkAnswer
	}{
		{"accepted", contract.WorkAnswer{Accepted: true}},
		{"accepted with no rows", contract.WorkAnswer{Accepted: true, Work: []contract.WorkRow{}}},
		{"accepted with a lease", contract.WorkAnswer{Accepted: true, Lease: &contract.Lease{WorkerID: "wkr-1", Generation: 1}}},
		{"accepted with a row", contract.WorkAnswer{Accepted: true, Work: []contract.WorkRow{{ID: "agt_x.1"}}}},
		{"accepted with a code", contract.WorkAnswer{Accepted: true, Code: contract.CodeWorkTaken}},
		{"accepted with a teaching", contract.WorkAnswer{Accepted: true, Teaching: "t"}},
		{"refused", contract.WorkAnswer{Code: contract.CodeWorkTaken, Teaching: "t"}},
		{"empty", contract.WorkAnswer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			if same := string(b)+"\n" == acceptedBody; isAccepted(tt.a) != same {
				t.Fatalf("isAccepted(%+v) = %v, but json.Marshal gives %s", tt.a, isAccepted(tt.a), b)
			}
		})
	}
}
