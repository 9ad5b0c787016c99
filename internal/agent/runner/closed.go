package runner

import (
	"encoding/json"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// closedCase is the Case an accepted CloseCase call of conversation closed, with its
// root. The root is read from the answer wherever it names the Case (its View, or the
// Case entry its View delta added again with the new status); when the answer names it
// nowhere (the View unchanged, or the answer cut to fit the model), from the View the
// gateway client holds for the conversation (docs/workbench.md, closedCases). An answer
// cut so that it does not decode counts as a close when that View lists the Case closed.
func (rt *Runtime) closedCase(conversation string, c agent.ToolCall, res agent.ToolResult) (ClosedCase, bool) {
	if c.Name != contract.ToolCloseCase || res.IsError {
		return ClosedCase{}, false
	}
	var in contract.CloseCaseInput
	if json.Unmarshal(c.Arguments, &in) != nil || in.CaseID == "" {
		return ClosedCase{}, false
	}
	var held func() (contract.CaseEntry, bool)
	if rt.gateway != nil {
		held = func() (contract.CaseEntry, bool) { return rt.gateway.HeldCase(conversation, in.CaseID) }
	}
	return closedCaseOf(in, res.Content, held)
}

// ClosedCase is the Case an answered call of conversation closed, with its root, and
// whether it closed one: what docket agent run reports as closedCases.
func (rt *Runtime) ClosedCase(conversation string, c agent.ToolCall, res agent.ToolResult) (ClosedCase, bool) {
	return rt.closedCase(conversation, c, res)
}

// closedCaseOf is closedCase on the call's input and its answer's text, with held the
// Case as the client's View holds it (nil: none).
func closedCaseOf(in contract.CloseCaseInput, answer string, held func() (contract.CaseEntry, bool)) (ClosedCase, bool) {
	cc := ClosedCase{CaseID: in.CaseID, Disposition: in.Disposition}
	var head struct {
		Accepted  bool          `json:"accepted"`
		ErrorCode contract.Code `json:"errorCode"`
	}
	var whole any
	if json.Unmarshal([]byte(answer), &head) == nil && json.Unmarshal([]byte(answer), &whole) == nil {
		if !head.Accepted || head.ErrorCode != "" {
			return ClosedCase{}, false
		}
		cc.Root = rootOf(whole, string(in.CaseID))
		if cc.Root == "" && held != nil {
			if e, ok := held(); ok {
				cc.Root = e.Root
			}
		}
		return cc, true
	}
	if held == nil {
		return ClosedCase{}, false
	}
	e, ok := held()
	if !ok || e.Status != contract.CaseClosed {
		return ClosedCase{}, false
	}
	cc.Root = e.Root
	return cc, true
}

// rootOf finds the root of Case id in a decoded answer: any object with that caseId and
// a root, in its View or its View delta.
func rootOf(v any, id string) string {
	switch v := v.(type) {
	case map[string]any:
		if v["caseId"] == id {
			if root, ok := v["root"].(string); ok && root != "" {
				return root
			}
		}
		for _, x := range v {
			if root := rootOf(x, id); root != "" {
				return root
			}
		}
	case []any:
		for _, x := range v {
			if root := rootOf(x, id); root != "" {
				return root
			}
		}
	}
	return ""
}
