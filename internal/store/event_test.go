package store_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/store"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func sampleEvent() store.Event {
	data := json.RawMessage(`{"i":1}`)
	e := store.Event{Project: "p1", Seq: 1, ID: "ev-1", Type: event.CaseOpened, At: t0,
		Actor: "member:ann", Data: data, DataHash: store.DataHash(data)}
	e.Hash = store.EventHash(e)
	return e
}

// TestEventHash_Encoding rebuilds the documented encoding byte by byte, so a change to
// EventHash that breaks existing logs fails here.
func TestEventHash_Encoding(t *testing.T) {
	e := sampleEvent()
	e.Seq, e.PrevHash = 7, store.Hash{1, 2, 3}
	var b []byte
	str := func(s string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	b = append(b, "docket.event.v1\x00"...)
	str("p1")
	b = binary.BigEndian.AppendUint64(b, 7)
	str("ev-1")
	str(event.CaseOpened)
	b = binary.BigEndian.AppendUint64(b, uint64(t0.UnixNano()))
	str("member:ann")
	b = append(b, e.DataHash[:]...)
	b = append(b, e.PrevHash[:]...)
	if got, want := store.EventHash(e), store.Hash(sha256.Sum256(b)); got != want {
		t.Fatalf("EventHash = %s, want %s (the documented encoding)", got, want)
	}
}

// TestEventHash_Fields checks that every field the hash binds changes it, and that Data
// is bound only through DataHash.
func TestEventHash_Fields(t *testing.T) {
	base := store.EventHash(sampleEvent())
	tests := []struct {
		name    string
		edit    func(*store.Event)
		changes bool
	}{
		{"project", func(e *store.Event) { e.Project = "p2" }, true},
		{"seq", func(e *store.Event) { e.Seq = 2 }, true},
		{"id", func(e *store.Event) { e.ID = "ev-2" }, true},
		{"type", func(e *store.Event) { e.Type = event.CaseClosed }, true},
		{"at", func(e *store.Event) { e.At = e.At.Add(time.Nanosecond) }, true},
		{"actor", func(e *store.Event) { e.Actor = "agent:x" }, true},
		{"data hash", func(e *store.Event) { e.DataHash[0] ^= 1 }, true},
		{"prev hash", func(e *store.Event) { e.PrevHash[31] ^= 1 }, true},
		{"field boundary", func(e *store.Event) { e.Project, e.ID = "p1e", "v-1" }, true},
		{"data alone", func(e *store.Event) { e.Data = json.RawMessage(`{"i":2}`) }, false},
		{"hash field itself", func(e *store.Event) { e.Hash = store.Hash{} }, false},
		{"time zone", func(e *store.Event) { e.At = e.At.In(time.FixedZone("x", 3600)) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sampleEvent()
			tt.edit(&e)
			if got := store.EventHash(e) != base; got != tt.changes {
				t.Errorf("changing %s changes the hash = %v, want %v", tt.name, got, tt.changes)
			}
		})
	}
}

func TestLink(t *testing.T) {
	head := store.Head{Seq: 4, Hash: store.Hash{9}}
	tests := []struct {
		name    string
		in      store.NewEvent
		want    store.Event // Hash filled in below
		wantErr error
	}{
		{"next event", store.NewEvent{Project: "p1", ID: "a", Type: "t", At: t0.In(time.FixedZone("x", 3600)), Actor: "system", Data: json.RawMessage(`[1]`)},
			store.Event{Project: "p1", Seq: 5, ID: "a", Type: "t", At: t0, Actor: "system", Data: json.RawMessage(`[1]`), DataHash: store.DataHash([]byte(`[1]`)), PrevHash: head.Hash}, nil},
		{"no data", store.NewEvent{Project: "p1", ID: "a", Type: "t", At: t0}, store.Event{}, store.ErrNoEventData},
		{"null data", store.NewEvent{Project: "p1", ID: "a", Type: "t", At: t0, Data: json.RawMessage(` null `)}, store.Event{}, store.ErrNoEventData},
		{"no project", store.NewEvent{ID: "a", Type: "t", At: t0}, store.Event{}, store.ErrInvalid},
		{"no id", store.NewEvent{Project: "p1", Type: "t", At: t0}, store.Event{}, store.ErrInvalid},
		{"no type", store.NewEvent{Project: "p1", ID: "a", At: t0}, store.Event{}, store.ErrInvalid},
		{"zero time", store.NewEvent{Project: "p1", ID: "a", Type: "t"}, store.Event{}, store.ErrInvalid},
		{"data not JSON", store.NewEvent{Project: "p1", ID: "a", Type: "t", At: t0, Data: json.RawMessage(`{`)}, store.Event{}, store.ErrNoEventData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.Link(tt.in, head)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Link(%+v) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			tt.want.Hash = store.EventHash(tt.want)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Link (-want +got):\n%s", diff)
			}
		})
	}
}

// chainOf links n events of p1.
func chainOf(t *testing.T, n int) []store.Event {
	t.Helper()
	var evs []store.Event
	var head store.Head
	for i := range n {
		e, err := store.Link(store.NewEvent{Project: "p1", ID: strings.Repeat("x", i+1), Type: "t", At: t0, Data: json.RawMessage(`{}`)}, head)
		if err != nil {
			t.Fatalf("Link: %v", err)
		}
		evs = append(evs, e)
		head = store.Head{Seq: e.Seq, Hash: e.Hash}
	}
	return evs
}

func TestChain_Next(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(evs []store.Event)
		wantAt int64  // 0: intact
		field  string // the field reported
	}{
		{"intact", func([]store.Event) {}, 0, ""},
		{"other project", func(evs []store.Event) { evs[1].Project = "p2" }, 2, "project"},
		{"gap", func(evs []store.Event) { evs[1].Seq = 3 }, 3, "seq"},
		{"link", func(evs []store.Event) { evs[2].PrevHash = store.Hash{} }, 3, "prev_hash"},
		{"data", func(evs []store.Event) { evs[0].Data = json.RawMessage(`1`) }, 1, "data"},
		{"type", func(evs []store.Event) { evs[1].Type = "forged" }, 2, "hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := chainOf(t, 3)
			tt.edit(evs)
			c := store.NewChain("p1")
			var err error
			for _, e := range evs {
				if err = c.Next(e); err != nil {
					break
				}
			}
			if tt.wantAt == 0 {
				if err != nil {
					t.Fatalf("Next on an intact chain: %v", err)
				}
				if err := c.End(store.Head{Seq: 3, Hash: evs[2].Hash}); err != nil {
					t.Fatalf("End at the true head: %v", err)
				}
				return
			}
			ce, ok := errors.AsType[*store.ChainError](err)
			if !ok || !errors.Is(err, store.ErrChainBroken) {
				t.Fatalf("Next error = %v, want a *ChainError matching ErrChainBroken", err)
			}
			if ce.Seq != tt.wantAt || ce.Field != tt.field {
				t.Errorf("first broken link = seq %d %s, want seq %d %s", ce.Seq, ce.Field, tt.wantAt, tt.field)
			}
		})
	}
}

func TestChain_End(t *testing.T) {
	evs := chainOf(t, 2)
	c := store.NewChain("p1")
	for _, e := range evs {
		if err := c.Next(e); err != nil {
			t.Fatalf("Next: %v", err)
		}
	}
	err := c.End(store.Head{Seq: 3, Hash: store.Hash{7}}) // an event missing at the end
	if ce, ok := errors.AsType[*store.ChainError](err); !ok || ce.Field != "head" || ce.Seq != 3 {
		t.Fatalf("End past the last event = %v, want a head error at seq 3", err)
	}
}

func TestParseHash(t *testing.T) {
	h := store.DataHash([]byte("x"))
	tests := []struct {
		name    string
		in      string
		want    store.Hash
		wantErr bool
	}{
		{"round trip", h.String(), h, false},
		{"upper case", strings.ToUpper(h.String()), h, false},
		{"short", h.String()[:62], store.Hash{}, true},
		{"not hex", "zz" + h.String()[2:], store.Hash{}, true},
		{"empty", "", store.Hash{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.ParseHash(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseHash(%q) = %s, %v; want %s, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseHash(f *testing.F) {
	f.Add(store.DataHash([]byte("x")).String())
	f.Add("")
	f.Add("0g")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := store.ParseHash(s)
		if err != nil {
			return
		}
		if !strings.EqualFold(h.String(), s) {
			t.Errorf("ParseHash(%q) = %s, which does not print back", s, h)
		}
	})
}
