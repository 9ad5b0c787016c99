package telemetry

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/store"
)

// Store returns st with each event append timed and counted, and Operations' states
// followed from their events. The admission's trace context is kept for the worker that
// will run it ([Telemetry.StartWork] puts it on the served row).
func (t *Telemetry) Store(st store.Store) store.Store { return &timedStore{Store: st, t: t} }

type timedStore struct {
	store.Store
	t *Telemetry
}

func (s *timedStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(&timedTx{Tx: tx, t: s.t}) })
}

type timedTx struct {
	store.Tx
	t *Telemetry
}

func (tx *timedTx) Append(ctx context.Context, e store.NewEvent) (store.Event, error) {
	start := time.Now()
	ev, err := tx.Tx.Append(ctx, e)
	tx.t.appendDur.Observe(time.Since(start).Seconds())
	if err != nil {
		return ev, err
	}
	tx.t.appended(ctx, e)
	return ev, nil
}

// AppendAll times the one call and counts each event it appended, as Append does.
func (tx *timedTx) AppendAll(ctx context.Context, es []store.NewEvent) ([]store.Event, error) {
	start := time.Now()
	evs, err := tx.Tx.AppendAll(ctx, es)
	tx.t.appendDur.Observe(time.Since(start).Seconds())
	if err != nil {
		return evs, err
	}
	for _, e := range es {
		tx.t.appended(ctx, e)
	}
	return evs, nil
}

// appended counts one appended event, and follows the Operation it changes.
func (t *Telemetry) appended(ctx context.Context, e store.NewEvent) {
	t.events.WithLabelValues(e.Type).Inc()
	if e.Type == event.OpAdmitted || e.Type == event.OpChanged {
		t.operation(ctx, e)
	}
}

// operation moves one Operation between the state gauges. The count is of what this
// process saw: a change it did not see the admission of only adds its new state. An
// event whose data does not decode is counted under its type and nothing more.
func (t *Telemetry) operation(ctx context.Context, e store.NewEvent) {
	var op event.Operation // the shape of both types
	if err := json.Unmarshal(e.Data, &op); err != nil || op.State == "" {
		return
	}
	state, stage := string(op.State), string(op.Stage)
	t.opChanges.WithLabelValues(state).Inc()
	key := e.Project + "/" + op.Agent + "." + strconv.FormatInt(op.Ordinal, 10)
	now := state + "/" + stage
	t.mu.Lock()
	defer t.mu.Unlock()
	if was, ok := t.opState[key]; ok {
		t.ops.WithLabelValues(splitState(was)).Dec()
	}
	t.ops.WithLabelValues(state, stage).Inc()
	if op.State.Settled() {
		delete(t.opState, key)
		delete(t.carried, key)
		return
	}
	t.opState[key] = now
	if sc := trace.SpanContextFromContext(ctx); e.Type == event.OpAdmitted && sc.IsValid() {
		if len(t.carried) >= maxCarried {
			clear(t.carried)
		}
		t.carried[key] = sc
	}
}

func splitState(s string) (string, string) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}
