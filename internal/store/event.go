package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// BlobThreshold is the size in bytes above which event data is kept once in the blob
// table, addressed by its sha256, instead of inline in the event row.
const BlobThreshold = 4096

// Hash is a sha256 digest: of event data, of an event (the chain link), or of a blob.
type Hash [32]byte

// String returns h in lower-case hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is all zeros, the PrevHash of a log's first event.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes h as hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes a hex hash.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHash decodes 64 hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) {
		return Hash{}, fmt.Errorf("parse hash %q: want %d hex digits", s, 2*len(h))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, fmt.Errorf("parse hash %q: %w", s, err)
	}
	return h, nil
}

// NewEvent is what a caller gives [Tx.Append]. Data must be a JSON value other than null.
type NewEvent struct {
	Project string // the log; required
	ID      string // unique within the project; minted when empty
	Type    string // required, e.g. "case.opened"
	At      time.Time
	Actor   string // "member:<id>", "agent:<id>", "tool:<id>", "system"
	Data    json.RawMessage
}

// Event is one immutable record of a project's log.
type Event struct {
	Project  string          `json:"project"`
	Seq      int64           `json:"seq"` // 1, 2, 3… without gaps within a project
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`
	Data     json.RawMessage `json:"data"`
	DataHash Hash            `json:"dataHash"` // sha256(Data)
	PrevHash Hash            `json:"prevHash"` // Hash of Seq-1; zero for Seq 1
	Hash     Hash            `json:"hash"`     // EventHash(this event)
}

// Head is the end of a project's log: its last sequence number and hash.
type Head struct {
	Seq  int64 `json:"seq"`
	Hash Hash  `json:"hash"`
}

// eventHashDomain separates event hashes from any other sha256 Docket computes, and names
// the encoding version: a change to EventHash's encoding must change it.
const eventHashDomain = "docket.event.v1\x00"

// EventHash returns the chain link of e: sha256 over a canonical encoding of
//
//	"docket.event.v1" 0x00
//	project, id, type, actor:  each as a 4-byte big-endian length, then its UTF-8 bytes
//	seq:                       8-byte big-endian two's complement
//	at:                        8-byte big-endian nanoseconds since 1970-01-01 UTC
//	dataHash, prevHash:        32 bytes each
//
// in the order project, seq, id, type, at, actor, dataHash, prevHash. e.Data is not read:
// it is bound through e.DataHash, so that a log can be verified against data kept as
// blobs. This is the one definition of the chain; `docket events verify`, the stores and
// the conformance suite all call it.
func EventHash(e Event) Hash {
	h := sha256.New()
	var n [8]byte
	str := func(s string) {
		binary.BigEndian.PutUint32(n[:4], uint32(len(s)))
		h.Write(n[:4])
		h.Write([]byte(s))
	}
	i64 := func(v int64) {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	h.Write([]byte(eventHashDomain))
	str(e.Project)
	i64(e.Seq)
	str(e.ID)
	str(e.Type)
	i64(e.At.UnixNano())
	str(e.Actor)
	h.Write(e.DataHash[:])
	h.Write(e.PrevHash[:])
	var out Hash
	h.Sum(out[:0])
	return out
}

// DataHash returns sha256(data), the digest an event binds its data with.
func DataHash(data []byte) Hash { return sha256.Sum256(data) }

// Link fills in the fields [Tx.Append] derives: it normalizes e, checks it and returns the
// event that follows head. Implementations call it so that every store links alike.
func Link(e NewEvent, head Head) (Event, error) {
	if e.Project == "" || e.ID == "" || e.Type == "" {
		return Event{}, fmt.Errorf("event needs a project, an id and a type: %w", ErrInvalid)
	}
	// UnixNano is defined only for years 1678–2262; the range keeps the encoding exact.
	if y := e.At.Year(); y < 1970 || y > 2261 {
		return Event{}, fmt.Errorf("event %s: time %v is outside 1970–2261: %w", e.ID, e.At, ErrInvalid)
	}
	data := e.Data
	if t := bytes.TrimSpace(data); len(t) == 0 || string(t) == "null" || !json.Valid(t) {
		return Event{}, fmt.Errorf("event %s of type %s: data %.20q: %w: %w", e.ID, e.Type, data, ErrNoEventData, ErrInvalid)
	}
	ev := Event{
		Project:  e.Project,
		Seq:      head.Seq + 1,
		ID:       e.ID,
		Type:     e.Type,
		At:       time.Unix(0, e.At.UnixNano()).UTC(),
		Actor:    e.Actor,
		Data:     data,
		DataHash: DataHash(data),
		PrevHash: head.Hash,
	}
	ev.Hash = EventHash(ev)
	return ev, nil
}
