package authority_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

func TestRequestDigest(t *testing.T) {
	two, err := contract.IntValue(2)
	if err != nil {
		t.Fatal(err)
	}
	half, err := contract.FloatValue(0.5)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(h[:])
	}
	tests := []struct {
		name string
		v    contract.RequestVector
		jcs  string // the canonical form, written by hand
	}{
		{"board-only", contract.RequestVector{Action: "mark", Args: contract.Args{"topic": contract.StringValue("a")}},
			`{"action":"mark","args":{"topic":"a"}}`},
		{"keys sorted, numbers canonical", contract.RequestVector{Action: "write_result", CaseID: "case-1", Tool: "docket.fs.write@1",
			ToolDigest: "sha256:aa", Source: "workspace",
			Args: contract.Args{"zeta": two, "alpha": half, "path": contract.StringValue("out/é.json")}},
			`{"action":"write_result","args":{"alpha":0.5,"path":"out/é.json","zeta":2},"caseId":"case-1","source":"workspace","tool":"docket.fs.write@1","toolDigest":"sha256:aa"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := operation.RequestDigest(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if want := sum(tt.jcs); got != want {
				t.Errorf("RequestDigest(%+v) = %s, want sha256 of %s = %s", tt.v, got, tt.jcs, want)
			}
		})
	}
	a, _ := operation.RequestDigest(contract.RequestVector{Action: "x", Args: contract.Args{"n": two}})
	b, _ := operation.RequestDigest(contract.RequestVector{Action: "x", Args: contract.Args{"n": contract.StringValue("2")}})
	if a == b {
		t.Error("an integer and a string argument give the same digest")
	}
}
