package runner

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestClosedCaseOf: the root of a Case a CloseCase closed is named on every path the
// answer takes: a whole View, a View delta (the normal path of docket agent serve, where
// it was once lost), a View named unchanged or an answer cut to fit, from the View the
// client holds; a refused close is none.
func TestClosedCaseOf(t *testing.T) {
	in := contract.CloseCaseInput{CaseID: "case-1", Disposition: "completed"}
	heldClosed := func() (contract.CaseEntry, bool) {
		return contract.CaseEntry{CaseID: "case-1", Root: "n-held", Status: contract.CaseClosed}, true
	}
	heldOpen := func() (contract.CaseEntry, bool) {
		return contract.CaseEntry{CaseID: "case-1", Root: "n-held", Status: contract.CaseRunning}, true
	}
	tests := []struct {
		name   string
		answer string
		held   func() (contract.CaseEntry, bool)
		ok     bool
		root   string
	}{
		{"a whole View", `{"accepted":true,"view":{"cases":{"items":[{"caseId":"case-1","root":"n-1","status":"closed"}]}}}`, nil, true, "n-1"},
		{"a View delta", `{"accepted":true,"viewDelta":{"from":"sha256:aa","cases":{"removed":["case-1"],"added":[{"at":0,"item":{"caseId":"case-1","root":"n-2","status":"closed"}}]}}}`, nil, true, "n-2"},
		{"the View unchanged", `{"accepted":true,"viewUnchanged":"sha256:aa"}`, heldClosed, true, "n-held"},
		{"the View unchanged, none held", `{"accepted":true,"viewUnchanged":"sha256:aa"}`, nil, true, ""},
		{"an answer cut to fit", `{"accepted":true,"view":{"cases":{"items":[{"caseId":"ca`, heldClosed, true, "n-held"},
		{"an answer cut, the Case still open", `{"accepted":true,"view":{"ca`, heldOpen, false, ""},
		{"an answer cut, none held", `{"accepted":true,"view":{"ca`, nil, false, ""},
		{"refused", `{"accepted":false,"errorCode":"acceptance_not_derived"}`, heldClosed, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, ok := closedCaseOf(in, tt.answer, tt.held)
			if ok != tt.ok || cc.Root != tt.root || (ok && (cc.CaseID != "case-1" || cc.Disposition != "completed")) {
				t.Errorf("closedCaseOf = %+v, %v; want ok %v, root %q", cc, ok, tt.ok, tt.root)
			}
		})
	}
}
