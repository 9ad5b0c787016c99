package profile

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
	spec := contract.ProfileSpec{Provider: contract.ProviderScripted, Script: "s.txt"}
	ref := &contract.BlueprintRef{Name: "researcher"}
	running := contract.RuntimeStatus{State: "running", Pid: 7}
	reported := running
	reported.Reported = at
	created := event.AgentCreatedData{Agent: contract.Agent{ID: "a1", Name: "calc"}}
	profile := func(rt *contract.RuntimeStatus, bp *contract.BlueprintRef) *contract.AgentProfile {
		return &contract.AgentProfile{Agent: "a1", AgentName: "calc", ProfileSpec: spec, SetBy: "member:m1", SetAt: at, Runtime: rt, Blueprint: bp}
	}
	with := func(f func(s *state)) *state {
		s := newState()
		f(s)
		return s
	}
	tests := []struct {
		name string
		log  []event.Payload
		want *state
	}{
		{"an empty log", nil, newState()},
		{"a profile set names its Agent", []event.Payload{created, event.ProfileSetData{Agent: "a1", ProfileSpec: spec, Blueprint: ref}},
			with(func(s *state) { s.names["a1"] = "calc"; s.profiles["a1"] = profile(nil, ref) })},
		{"a report is timed by its event, and a profile set again keeps it", []event.Payload{created,
			event.ProfileSetData{Agent: "a1", ProfileSpec: spec}, event.RuntimeReportedData{Agent: "a1", RuntimeStatus: running},
			event.ProfileSetData{Agent: "a1", ProfileSpec: spec}},
			with(func(s *state) { s.names["a1"] = "calc"; s.profiles["a1"] = profile(&reported, nil) })},
		{"a report of an Agent without a profile is nothing", []event.Payload{created, event.RuntimeReportedData{Agent: "a1", RuntimeStatus: running}},
			with(func(s *state) { s.names["a1"] = "calc" })},
		{"a revoked Agent's profile goes with it", []event.Payload{created, event.ProfileSetData{Agent: "a1", ProfileSpec: spec},
			event.AgentRevokedData{ID: "a1"}}, newState()},
		{"a worker's report, until its Connection is revoked", []event.Payload{
			event.WorkerRuntimeReportedData{Connection: "c1", RuntimeStatus: running}, event.WorkerRuntimeReportedData{Connection: "c2", RuntimeStatus: running},
			event.ConnectionRevokedData{ID: "c1"}},
			with(func(s *state) { s.workers["c2"] = reported })},
		{"a blueprint set, set again and another removed", []event.Payload{
			event.BlueprintSetData{Name: "researcher", BlueprintSpec: contract.BlueprintSpec{Description: "v1"}},
			event.BlueprintSetData{Name: "writer", BlueprintSpec: contract.BlueprintSpec{Description: "w"}},
			event.BlueprintSetData{Name: "researcher", BlueprintSpec: contract.BlueprintSpec{Description: "v2"}, Digest: contract.Digest{1}},
			event.BlueprintRemovedData{Name: "writer"}},
			with(func(s *state) {
				s.blueprints["researcher"] = &contract.Blueprint{Name: "researcher", BlueprintSpec: contract.BlueprintSpec{Description: "v2"},
					Digest: contract.Digest{1}, SetBy: "member:m1", SetAt: at}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newState()
			for _, e := range eventlogtest.Log(t, "p", "member:m1", at, tt.log...) {
				if err := got.Apply(e); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(state{})); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}
