// Package eventlogtest builds logs in memory for the tests of a part's pure State
// (docs/architecture.md, "The project state and its driver"): a State is stepped by
// events in order and reads their type, time, actor and data, so its tests need no store.
package eventlogtest

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Event is p as the event at seq of project's log, by actor at at, as a store returns it
// but without the chain's hashes, which no State reads. It fails t when p does not encode.
func Event(t testing.TB, project contract.ProjectID, seq int64, actor contract.Principal, at time.Time, p event.Payload) store.Event {
	t.Helper()
	ne, err := eventlog.New(project, "", actor, at, p)
	if err != nil {
		t.Fatal(err)
	}
	return store.Event{Project: ne.Project, Seq: seq, Type: ne.Type, At: ne.At, Actor: ne.Actor, Data: ne.Data}
}

// Log is ps as the first events of project's log, in order, each by actor at at (see
// [Event]).
func Log(t testing.TB, project contract.ProjectID, actor contract.Principal, at time.Time, ps ...event.Payload) []store.Event {
	t.Helper()
	out := make([]store.Event, 0, len(ps))
	for i, p := range ps {
		out = append(out, Event(t, project, int64(i+1), actor, at, p))
	}
	return out
}
