package boards

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
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

// releaseFiles are the files of a capability release id@version declaring one Case
// Type, name.
func releaseFiles(id, version, name string) map[string]string {
	return map[string]string{
		"capability.toml": fmt.Sprintf(`id      = %[1]q
version = %[2]q
title   = "Install test"

[[source]]
name  = "src"
type  = "file"
words = ["%[3]s_fact"]
tier  = "attested"

[[case_type]]
name          = "%[3]s"
title         = "%[3]s"
description   = "A Case of %[3]s."
key           = { predicate = "%[3]s_fact", args = ["k"] }
opening       = "%[3]s_fact"
opening_floor = "attested"
acceptance    = "%[3]s_ok"
minimum_grounding_floor = "attested"
`, id, version, name),
		"rules.dl": fmt.Sprintf("%[1]s_ok(k: K) :- %[1]s_fact(k: K).\n", name),
	}
}

// releaseOf checks the release of releaseFiles.
func releaseOf(t *testing.T, id, version, name string) *capability.Package {
	t.Helper()
	files := map[string][]byte{}
	for n, text := range releaseFiles(id, version, name) {
		files[n] = []byte(text)
	}
	pkg, err := capability.Check(files)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestBoardState_ApplyInstall steps the Board's State alone over installs: the release an
// install names, handed to the State ahead of the event (releases), is applied only when
// it digests to the digest the event names, and replaces an installed version of the same
// capability; an install whose release was not handed, or digests otherwise, or on a
// State whose sources are not known, is refused with errBuild and changes nothing.
func TestBoardState_ApplyInstall(t *testing.T) {
	const by contract.Principal = "member:ada"
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	v1 := releaseOf(t, "test.install", "1.0.0", "first")
	v2 := releaseOf(t, "test.install", "2.0.0", "second")
	install := func(seq int64, pkg *capability.Package) store.Event {
		r := pkg.Release
		return eventlogtest.Event(t, testProject, seq, by, at, event.CapabilityInstalledData{Release: contract.Release{ID: r.ID, Version: r.Version, Digest: r.Digest}})
	}
	handed := func(pkgs ...*capability.Package) map[string]board.Declarations {
		m := map[string]board.Declarations{}
		for _, p := range pkgs {
			m[p.Declarations.Release] = p.Declarations
		}
		return m
	}
	forged := v1.Declarations
	forged.Digest = v2.Release.Digest
	tests := []struct {
		name     string
		releases map[string]board.Declarations
		unknown  bool // the State's sources are not known
		refuse   bool
	}{
		{name: "the release handed", releases: handed(v1)},
		{name: "no release handed", releases: nil, refuse: true},
		{name: "a release that digests otherwise", releases: map[string]board.Declarations{v1.Declarations.Release: forged}, refuse: true},
		{name: "sources not known", releases: handed(v1), unknown: true, refuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := board.New()
			if err != nil {
				t.Fatal(err)
			}
			s := &boardState{b: b, linked: true, releases: tt.releases}
			if !tt.unknown {
				s.src = &sources{locks: map[contract.ConnectionID]map[string]contract.ToolLock{}}
			}
			err = s.Apply(install(1, v1))
			if tt.refuse {
				if !errors.Is(err, errBuild) {
					t.Fatalf("Apply = %v, want %v", err, errBuild)
				}
				if s.seq != 0 || s.b != b || s.b.HasCaseType("first") {
					t.Errorf("a refused install changed the State: seq %d, Case Type first declared %v", s.seq, s.b.HasCaseType("first"))
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if s.seq != 1 || !s.b.HasCaseType("first") {
				t.Errorf("after the install the State is at seq %d and declares first: %v, want 1 and true", s.seq, s.b.HasCaseType("first"))
			}
		})
	}

	// A later version replaces the one installed.
	b, err := board.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &boardState{b: b, linked: true, releases: handed(v1, v2), src: &sources{locks: map[contract.ConnectionID]map[string]contract.ToolLock{}}}
	log := []store.Event{install(1, v1), install(2, v2)}
	log[1].PrevHash = log[0].Hash
	for _, e := range log {
		if err := s.Apply(e); err != nil {
			t.Fatalf("Apply(event %d): %v", e.Seq, err)
		}
	}
	if s.b.HasCaseType("first") || !s.b.HasCaseType("second") || len(s.src.installed) != 1 {
		t.Errorf("after version 2 the Board declares first: %v, second: %v, from %d releases; want false, true, 1",
			s.b.HasCaseType("first"), s.b.HasCaseType("second"), len(s.src.installed))
	}
}
