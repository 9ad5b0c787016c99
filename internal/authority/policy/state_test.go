package policy

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// at is when the tests' events happen.
var at = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// published is version n of the autonomy policy text.
func published(n int64, text string) event.PolicyPublishedData {
	return event.PolicyPublishedData{PolicyVersion: contract.PolicyVersion{Kind: contract.PolicyAutonomy, Version: n,
		Digest: contract.Sum([]byte(text)).String(), File: "a.toml", Text: text}}
}

func autonomyText(level, ack string) string {
	return "[autonomy_policy]\ndefault_level = \"" + level + "\"\nrequire_acknowledgement = true\nacknowledgement = \"" + ack + "\"\n"
}

// TestState_Apply steps a fresh state by a log and checks the autonomy it gives Agent a1:
// the state is the log's alone, the same whoever applies it.
func TestState_Apply(t *testing.T) {
	risk, risk2 := "An unattended Agent writes unwatched.", "An unattended Agent spends unwatched."
	window := contract.RunWindow{From: at, Until: at.Add(time.Hour), OpenedBy: "member:m1"}
	created := event.AgentCreatedData{Agent: contract.Agent{ID: "a1", Name: "calc"}}
	tests := []struct {
		name    string
		log     []event.Payload
		now     time.Time
		want    contract.Autonomy
		wantErr bool
	}{
		{"an empty log: the built-in policy, unattended", nil, at,
			contract.Autonomy{Agent: "a1", Level: "unattended", Windows: []contract.RunWindow{}, Policy: 1}, false},
		{"created under a published policy: its default level", []event.Payload{published(2, autonomyText("attended", risk)), created}, at,
			contract.Autonomy{Agent: "a1", Level: "attended", Windows: []contract.RunWindow{}, Policy: 2, Acknowledgement: risk}, false},
		{"a policy published after the creation leaves the level", []event.Payload{created, published(2, autonomyText("manual", risk))}, at,
			contract.Autonomy{Agent: "a1", Level: "unattended", Windows: []contract.RunWindow{}, Policy: 2, Acknowledgement: risk}, false},
		{"a level set and a window open now", []event.Payload{created, event.LevelSetData{Agent: "a1", Level: "attended", Policy: 1},
			event.RunWindowOpenedData{Agent: "a1", RunWindow: window}}, at.Add(time.Minute),
			contract.Autonomy{Agent: "a1", Level: "attended", Windows: []contract.RunWindow{window}, Policy: 1}, false},
		{"a window over is not listed", []event.Payload{created, event.RunWindowOpenedData{Agent: "a1", RunWindow: window}}, at.Add(2 * time.Hour),
			contract.Autonomy{Agent: "a1", Level: "unattended", Windows: []contract.RunWindow{}, Policy: 1}, false},
		{"a stated risk changed since its acknowledgement: attended", []event.Payload{published(2, autonomyText("attended", risk)), created,
			event.RiskAcknowledgedData{Agent: "a1", Text: risk, Digest: contract.Sum([]byte(risk)).String(), Policy: 2},
			event.LevelSetData{Agent: "a1", Level: "unattended", Policy: 2}, published(3, autonomyText("attended", risk2))}, at,
			contract.Autonomy{Agent: "a1", Level: "attended", Windows: []contract.RunWindow{}, Policy: 3, Acknowledgement: risk2}, false},
		{"a version out of order is refused", []event.Payload{published(3, autonomyText("attended", risk))}, at, contract.Autonomy{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := eventlogtest.Log(t, "p", "member:m1", at, tt.log...)
			a, b := newState(), newState()
			var err error
			for _, e := range log {
				if err = a.Apply(e); err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Apply = %v, want an error: %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			got := a.autonomyAt("a1", tt.now)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(contract.Autonomy{}, "Because")); diff != "" {
				t.Errorf("autonomy of a1 (-want +got):\n%s", diff)
			}
			for _, e := range log {
				if err := b.Apply(e); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(b, a, cmp.AllowUnexported(state{}, agentAutonomy{})); diff != "" {
				t.Errorf("the state after a read differs from one that applied the same log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMoves_WhatApplyFollows: Moves names exactly the event types a state follows, which
// an admission's gate looks for between the head it read the Book at and the head its
// transaction locked (docs/architecture.md, "Catch-ups from memory"): an event of any
// other type, whatever its data, leaves the state as it was, and one of these is read.
func TestMoves_WhatApplyFollows(t *testing.T) {
	for _, k := range event.Catalog {
		t.Run(k.Type, func(t *testing.T) {
			s := newState()
			err := s.Apply(store.Event{Seq: 1, Type: k.Type, At: at, Data: []byte("not json")})
			if Moves(k.Type) {
				if err == nil {
					t.Errorf("Moves(%s), but applying data that does not decode succeeded: the state does not read it", k.Type)
				}
				return
			}
			if err != nil {
				t.Errorf("applying %s, which Moves does not name, read its data: %v", k.Type, err)
			}
			if diff := cmp.Diff(newState(), s, cmp.AllowUnexported(state{})); diff != "" {
				t.Errorf("applying %s, which Moves does not name, changed the state (-want +got):\n%s", k.Type, diff)
			}
		})
	}
}
