package materials

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

// at is when the tests' events happen.
var at = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// TestState_Apply steps a fresh state by a log and checks all it holds after.
func TestState_Apply(t *testing.T) {
	const sha = "sha256:" + "ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01"
	add := contract.MaterialAdd{Name: "report.txt", Size: 12, MediaType: "text/plain", SHA256: sha}
	created := event.AgentCreatedData{Agent: contract.Agent{ID: "a1", Name: "calc"}}
	added := event.MaterialAddedData{Agent: "a1", MaterialAdd: add, Basis: contract.MaterialAsserted}
	material := func(f func(m *contract.Material)) *contract.Material {
		m := &contract.Material{Agent: "a1", AgentName: "calc", MaterialAdd: add, Basis: contract.MaterialAsserted, AddedBy: "member:m1", AddedAt: at}
		f(m)
		return m
	}
	// op is Operation n of a1 in state st; a read of the material when read.
	op := func(n int64, st contract.OperationState, read bool, decision string) event.Operation {
		o := event.Operation{Agent: "a1", Ordinal: n, State: st, Decision: decision}
		if read {
			o.Execution = &contract.ExecutionRequest{Tool: ReadTool, Args: contract.Args{"material": contract.StringValue(sha)}}
		}
		return o
	}
	approved := event.RequestChangedData{Request: contract.Request{ID: "r1", Ordinal: 2, RequestedBy: "agent:a1", State: contract.RequestApproved,
		Vector: contract.RequestVector{Tool: ReadTool, Args: contract.Args{"material": contract.StringValue(sha)}}, DecidedBy: "member:m2", DecidedAt: &at}}
	with := func(f func(s *state)) *state {
		s := newState()
		s.names["a1"] = "calc"
		f(s)
		return s
	}
	tests := []struct {
		name string
		log  []event.Payload
		want *state
	}{
		{"an empty log", nil, newState()},
		{"a material added names its Agent", []event.Payload{created, added},
			with(func(s *state) { s.materials[key{"a1", sha}] = material(func(*contract.Material) {}) })},
		{"added again, it keeps its disclosure", []event.Payload{created, added,
			event.MaterialDisclosureSetData{Agent: "a1", Material: sha, Allowed: true}, added},
			with(func(s *state) {
				s.materials[key{"a1", sha}] = material(func(m *contract.Material) { m.Disclosed, m.DisclosureBy, m.DisclosureAt = true, "member:m1", at })
			})},
		{"a read not settled yet is pending", []event.Payload{created, added, event.OpAdmittedData(op(1, contract.OpRunning, true, ""))},
			with(func(s *state) {
				s.materials[key{"a1", sha}] = material(func(*contract.Material) {})
				s.reading[opKey{"a1", 1}] = &pending{sha256: sha}
			})},
		{"a read done is the material's", []event.Payload{created, added,
			event.OpAdmittedData(op(1, contract.OpRunning, true, "")), event.OpChangedData(op(1, contract.OpDone, false, ""))},
			with(func(s *state) {
				s.materials[key{"a1", sha}] = material(func(m *contract.Material) { m.Reads = []contract.MaterialRead{{Agent: "a1", Ordinal: 1, At: at}} })
			})},
		{"a read failed is not", []event.Payload{created, added,
			event.OpAdmittedData(op(1, contract.OpRunning, true, "")), event.OpChangedData(op(1, contract.OpFailed, false, ""))},
			with(func(s *state) { s.materials[key{"a1", sha}] = material(func(*contract.Material) {}) })},
		{"an approval before the read is queued names who let it run", []event.Payload{created, added, approved,
			event.OpChangedData(op(2, contract.OpRunning, true, "r1")), event.OpChangedData(op(2, contract.OpDone, false, ""))},
			with(func(s *state) {
				s.materials[key{"a1", sha}] = material(func(m *contract.Material) {
					m.Reads = []contract.MaterialRead{{Agent: "a1", Ordinal: 2, At: at, Request: "r1", ApprovedBy: "member:m2", ApprovedAt: at}}
				})
			})},
		{"another Tool's Operation is not a read", []event.Payload{created, added, event.OpAdmittedData(op(1, contract.OpDone, false, ""))},
			with(func(s *state) { s.materials[key{"a1", sha}] = material(func(*contract.Material) {}) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newState()
			for _, e := range eventlogtest.Log(t, "p", "member:m1", at, tt.log...) {
				if err := got.Apply(e); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(state{}, pending{})); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}
