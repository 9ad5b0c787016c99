package boards

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// recordOf is the board.recorded event's data of a Board call's changes, encoded as
// persistChange encodes the rows it writes.
func recordOf(t *testing.T, changes []contract.NodeChange, cases ...contract.Case) event.BoardRecordedData {
	t.Helper()
	var rec event.BoardRecordedData
	for _, nc := range changes {
		switch {
		case nc.Put != nil:
			data, err := json.Marshal(nc.Put)
			if err != nil {
				t.Fatal(err)
			}
			rec.Nodes = append(rec.Nodes, data)
		case nc.Delete != "":
			rec.Deleted = append(rec.Deleted, nc.Delete)
		}
	}
	for _, c := range cases {
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		rec.Cases = append(rec.Cases, data)
	}
	return rec
}

// TestBoardState_Apply steps the Board's State alone on logs built in memory
// (docs/architecture.md, "The project state and its driver"): a change's records are
// applied and leave the Board as the Board that made them; every event it does not
// apply is refused with errBuild and changes nothing, cursor included.
func TestBoardState_Apply(t *testing.T) {
	const by contract.Principal = "member:ada"
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	leader, err := board.New()
	if err != nil {
		t.Fatal(err)
	}
	seen := func(x string) contract.Operation {
		return contract.Operation{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue(x)}}}
	}
	first, err := leader.ApplyBatch(board.Author{Principal: by, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{seen("a"), seen("b")}})
	if err != nil {
		t.Fatal(err)
	}
	batch := event.BatchAppliedData{NodeIDs: first.NodeIDs, Changes: first.Changes}
	log := eventlogtest.Log(t, testProject, by, at, batch, recordOf(t, first.Changes),
		event.AgentCreatedData{}, event.ToolLockedData{})
	absent := eventlogtest.Event(t, testProject, 3, by, at, recordOf(t, []contract.NodeChange{{Delete: "n-absent"}}))

	fresh := func(linked bool) *boardState {
		t.Helper()
		b, err := board.New()
		if err != nil {
			t.Fatal(err)
		}
		return &boardState{b: b, linked: linked}
	}
	nodes := func(s *boardState) string {
		data, err := json.Marshal(s.b.Nodes())
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	linkedAt := func(hash store.Hash) func(e store.Event) store.Event {
		return func(e store.Event) store.Event { e.PrevHash = hash; return e }
	}
	tests := []struct {
		name    string
		linked  bool
		events  []store.Event
		applied int   // how many of events apply before the last is refused; all when refuse is false
		refuse  bool  // the last event is refused with errBuild
		hash    byte  // a hash the State holds at its seq before the events, 0 for none
		seq     int64 // the State's seq before the events
	}{
		{name: "a batch and its records", linked: true, events: log[:2]},
		{name: "events that leave the Board alone, unlinked", events: []store.Event{eventlogtest.Event(t, testProject, 1, by, at, event.AgentCreatedData{})}},
		{name: "a change on a Board that may hold it", events: log[:1], refuse: true},
		{name: "a change no record holds", linked: true, events: log, applied: 3, refuse: true},
		{name: "an event past the next", linked: true, events: log[1:2], refuse: true},
		{name: "a record the Board refuses", linked: true, events: append(log[:2:2], absent), applied: 2, refuse: true},
		{name: "an event that does not link", linked: true, hash: 7, seq: 0, events: []store.Event{linkedAt(store.Hash{8})(log[0])}, refuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fresh(tt.linked)
			s.seq = tt.seq
			if tt.hash != 0 {
				s.hash = store.Hash{tt.hash}
			}
			n := len(tt.events)
			if tt.refuse {
				n = tt.applied
			}
			for _, e := range tt.events[:n] {
				if err := s.Apply(e); err != nil {
					t.Fatalf("Apply(event %d, %s): %v", e.Seq, e.Type, err)
				}
			}
			if !tt.refuse {
				if s.seq != tt.events[n-1].Seq {
					t.Errorf("the State is at seq %d, want %d", s.seq, tt.events[n-1].Seq)
				}
				return
			}
			before, seq := nodes(s), s.seq
			last := tt.events[len(tt.events)-1]
			if err := s.Apply(last); !errors.Is(err, errBuild) {
				t.Fatalf("Apply(event %d, %s) = %v, want %v", last.Seq, last.Type, err, errBuild)
			}
			if after := nodes(s); after != before || s.seq != seq {
				t.Errorf("a refused event changed the State: seq %d → %d, nodes %s → %s", seq, s.seq, before, after)
			}
		})
	}

	// Applied, a change's records leave the Board as the Board that made it.
	s := fresh(true)
	for _, e := range log[:2] {
		if err := s.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	want, err := json.Marshal(leader.Nodes())
	if err != nil {
		t.Fatal(err)
	}
	if got := nodes(s); got != string(want) {
		t.Errorf("the State's Board holds %s, want the leader's %s", got, want)
	}
}
