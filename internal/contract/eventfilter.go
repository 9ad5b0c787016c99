package contract

import (
	"encoding/json"
	"slices"
	"time"
)

// EventFilter selects events of a project's log. Zero fields select everything.
type EventFilter struct {
	Types []string  // event types, e.g. case.closed
	Case  CaseID    // events whose data names the Case
	Agent AgentID   // events whose data names the Agent, or whose actor is it
	Since time.Time // events at or after this time
}

// Empty reports whether f selects every event.
func (f EventFilter) Empty() bool {
	return len(f.Types) == 0 && f.Case == "" && f.Agent == "" && f.Since.IsZero()
}

// eventRefs are the fields of an event's data that name a Case or an Agent.
type eventRefs struct {
	CaseID    CaseID  `json:"caseId"`
	Agent     AgentID `json:"agent"`
	Execution *struct {
		CaseID CaseID `json:"caseId"`
	} `json:"execution"`
	Case *struct {
		CaseID CaseID `json:"caseId"`
	} `json:"case"`
	Input *struct {
		CaseID CaseID `json:"caseId"`
	} `json:"input"`
}

// Match reports whether e is selected by f. An event names a Case when its data carries
// the Case's id as caseId (top level, or under execution, case or input), and an Agent when its
// data's agent is the Agent's id or its actor is agent:<id>.
func (f EventFilter) Match(e Event) bool {
	if len(f.Types) > 0 && !slices.Contains(f.Types, e.Type) {
		return false
	}
	if !f.Since.IsZero() && e.At.Before(f.Since) {
		return false
	}
	if f.Case == "" && f.Agent == "" {
		return true
	}
	var refs eventRefs
	if err := json.Unmarshal(e.Data, &refs); err != nil {
		return false // data that is not an object names nothing
	}
	if f.Case != "" {
		c := refs.CaseID
		if c == "" && refs.Execution != nil {
			c = refs.Execution.CaseID
		}
		if c == "" && refs.Case != nil {
			c = refs.Case.CaseID
		}
		if c == "" && refs.Input != nil {
			c = refs.Input.CaseID
		}
		if c != f.Case {
			return false
		}
	}
	if f.Agent != "" && refs.Agent != f.Agent && e.Actor != string(NewPrincipal(PrincipalAgent, string(f.Agent))) {
		return false
	}
	return true
}
