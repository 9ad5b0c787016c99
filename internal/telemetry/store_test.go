package telemetry_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/telemetry"
)

// fakeStore runs Update on a Tx whose appends succeed; nothing else is called.
type fakeStore struct{ store.Store }

func (fakeStore) Update(ctx context.Context, fn func(tx store.Tx) error) error { return fn(fakeTx{}) }

type fakeTx struct{ store.Tx }

func (fakeTx) Append(_ context.Context, e store.NewEvent) (store.Event, error) {
	return store.Event{Project: e.Project, Type: e.Type}, nil
}

// TestStore_Operations follows two Operations through their events: the gauge moves
// each from state to state, a settled one stays counted, and every append is timed.
func TestStore_Operations(t *testing.T) {
	tel := telemetry.New(telemetry.Config{})
	st := tel.Store(fakeStore{})
	for _, e := range []struct{ typ, data string }{
		{event.OpAdmitted, `{"agent":"a","ordinal":1,"state":"running","stage":"not_dispatched"}`},
		{event.OpAdmitted, `{"agent":"a","ordinal":2,"state":"running","stage":"not_dispatched"}`},
		{event.OpChanged, `{"agent":"a","ordinal":1,"state":"running","stage":"at_worker"}`},
		{event.OpChanged, `{"agent":"a","ordinal":1,"state":"done"}`},
		{event.CaseOpened, `{}`},
	} {
		err := st.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.Append(t.Context(), store.NewEvent{Project: "p", Type: e.typ, Data: []byte(e.data)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP docket_operations Operations by state and stage, as this serve saw them change since it started; settled ones stay counted.
# TYPE docket_operations gauge
docket_operations{stage="",state="done"} 1
docket_operations{stage="at_worker",state="running"} 0
docket_operations{stage="not_dispatched",state="running"} 1
`
	gathered(t, tel, want, "docket_operations")
	if n := testutil.CollectAndCount(tel.Registry(), "docket_event_append_duration_seconds"); n != 1 {
		t.Errorf("docket_event_append_duration_seconds series = %d, want 1", n)
	}
	events := `
# HELP docket_events_appended_total Events appended to the log, by type (counted at append, before the commit).
# TYPE docket_events_appended_total counter
docket_events_appended_total{type="case.opened"} 1
docket_events_appended_total{type="operation.admitted"} 2
docket_events_appended_total{type="operation.changed"} 2
`
	gathered(t, tel, events, "docket_events_appended_total")
}
