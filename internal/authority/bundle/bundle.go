// Package bundle writes and checks an export bundle: one project's whole log (its events,
// and with them its signed checkpoints and closure receipts), the capability releases it
// installed and the installation's public keys, signed as a whole, so that a third party
// can verify it offline with the public key alone (docs/provability.md).
package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// Format names this version of the bundle format in its header.
const Format = "docket-bundle/1"

// Header is a bundle's first line.
type Header struct {
	Format     string         `json:"format"`
	Project    string         `json:"project"`
	ExportedAt time.Time      `json:"exportedAt"`
	Keys       signing.JWKSet `json:"keys"`
}

// Event is one event line: an event exactly as chained, its data as the bytes hashed.
type Event struct {
	Seq      int64     `json:"seq"`
	ID       string    `json:"id"`
	Type     string    `json:"type"`
	At       time.Time `json:"at"`
	Actor    string    `json:"actor"`
	Data     []byte    `json:"data"` // base64 of the exact bytes DataHash covers
	DataHash string    `json:"dataHash"`
	PrevHash string    `json:"prevHash"`
	Hash     string    `json:"hash"`
}

// Release is one capability release line: its files as stored (base64 of a JSON object
// of file name to content), which digest to the digest its install event names.
type Release struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	Content []byte `json:"content"`
}

// line is one body line after the header: exactly one of its fields is set.
type line struct {
	Event   *Event   `json:"event,omitempty"`
	Release *Release `json:"release,omitempty"`
}

// Trailer is the last line: the signature, under the installation's newest key, of
// every byte before it.
type Trailer struct {
	KeyID     string `json:"kid"`
	Signature string `json:"sig"`
}

// Export writes project's bundle from r, signed with keys.
func Export(ctx context.Context, r store.Reader, project contract.ProjectID, keys *signing.Keyring, now time.Time) ([]byte, error) {
	var body bytes.Buffer
	put := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode bundle line: %w", err)
		}
		body.Write(b)
		body.WriteByte('\n')
		return nil
	}
	if err := put(Header{Format: Format, Project: string(project), ExportedAt: now.UTC(), Keys: signing.Set(keys.Public())}); err != nil {
		return nil, err
	}
	var installs []contract.Release
	err := eventlog.Scan(ctx, r, project, 0, -1, func(e store.Event) error {
		if e.Type == event.CapabilityInstalled {
			var d event.CapabilityInstalledData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return fmt.Errorf("decode install at seq %d: %w", e.Seq, err)
			}
			installs = append(installs, d.Release)
		}
		return put(line{Event: &Event{Seq: e.Seq, ID: e.ID, Type: e.Type, At: e.At, Actor: e.Actor, Data: e.Data,
			DataHash: e.DataHash.String(), PrevHash: e.PrevHash.String(), Hash: e.Hash.String()}})
	})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", project, err)
	}
	seen := map[string]bool{}
	for _, in := range installs {
		if seen[in.ID+"@"+in.Version] {
			continue
		}
		seen[in.ID+"@"+in.Version] = true
		rel, err := r.Release(ctx, in.ID, in.Version)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", project, err)
		}
		d, err := contract.DigestFrom(rel.Digest)
		if err != nil {
			return nil, fmt.Errorf("export %s: release %s@%s: %w", project, in.ID, in.Version, err)
		}
		if err := put(line{Release: &Release{ID: rel.ID, Version: rel.Version, Digest: d.String(), Content: rel.Content}}); err != nil {
			return nil, err
		}
	}
	kid, sig := keys.Sign(body.Bytes())
	if err := put(Trailer{KeyID: kid, Signature: sig}); err != nil {
		return nil, err
	}
	return body.Bytes(), nil
}

// Error names where a bundle does not hold: its line (1-based), the event's sequence
// number when the line is an event, and what is wrong.
type Error struct {
	Line int
	Seq  int64
	What string
}

// Error names the line, the event and what is wrong.
func (e *Error) Error() string {
	if e.Seq > 0 {
		return fmt.Sprintf("bundle line %d (event %d): %s", e.Line, e.Seq, e.What)
	}
	return fmt.Sprintf("bundle line %d: %s", e.Line, e.What)
}

// Report is what a bundle that holds proves.
type Report struct {
	Project   string
	Events    int64  // the last event's sequence number
	Head      string // its hash
	SignedSeq int64  // the head the last checkpoint signed
	Releases  int
	KeyID     string // the key that signed the bundle
	// OwnKeys is true when no trusted keys were given, so the bundle was checked with the
	// keys it carries itself: that proves it whole, not who made it.
	OwnKeys bool
}

// Verify checks b whole: that its last line signs every byte before it under trusted
// (the bundle's own keys when trusted is nil), that its events form one hash chain from
// the first, that every checkpoint verifies and signs the head just before it, that
// every release installed is in it with content that digests to the digest installed,
// and that each held checkpoint (kept outside the bundle, from an earlier export)
// verifies and signs a head the bundle still has.
func Verify(b []byte, trusted []signing.PublicKey, held ...signing.Checkpoint) (Report, error) {
	fail := func(n int, seq int64, format string, args ...any) (Report, error) {
		return Report{}, &Error{Line: n, Seq: seq, What: fmt.Sprintf(format, args...)}
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return fail(1, 0, "the bundle does not end in a newline")
	}
	lines := bytes.Split(b[:len(b)-1], []byte("\n"))
	if len(lines) < 2 {
		return fail(1, 0, "a bundle holds a header and a signature at least")
	}
	last := len(lines)
	var tr Trailer
	if err := contract.DecodeStrict(lines[last-1], &tr); err != nil {
		return fail(last, 0, "the signature line does not decode: %v", err)
	}
	if canon, err := json.Marshal(tr); err != nil || !bytes.Equal(canon, lines[last-1]) {
		return fail(last, 0, "the signature line is not in its canonical form")
	}
	var h Header
	if err := contract.DecodeStrict(lines[0], &h); err != nil {
		return fail(1, 0, "the header does not decode: %v", err)
	}
	if h.Format != Format {
		return fail(1, 0, "format %q, want %q", h.Format, Format)
	}
	rep := Report{Project: h.Project, KeyID: tr.KeyID, OwnKeys: trusted == nil}
	keys := trusted
	if keys == nil {
		var err error
		if keys, err = h.Keys.PublicKeys(); err != nil {
			return fail(1, 0, "%v", err)
		}
	}
	body := b[:len(b)-len(lines[last-1])-1]
	if err := signing.VerifySignature(keys, tr.KeyID, tr.Signature, body); err != nil {
		return fail(last, 0, "%v", err)
	}
	chain := store.NewChain(h.Project)
	heldAt := map[int64]string{} // the bundle's hash at each held checkpoint's seq
	for _, cp := range held {
		heldAt[cp.Seq] = ""
	}
	installs := map[string]int64{}
	releases := map[string]bool{}
	wantDigest := map[string]string{}
	for i, raw := range lines[1 : last-1] {
		n := i + 2
		var l line
		if err := contract.DecodeStrict(raw, &l); err != nil {
			return fail(n, 0, "the line does not decode: %v", err)
		}
		switch {
		case l.Event != nil && l.Release == nil:
			e, err := storeEvent(h.Project, *l.Event)
			if err != nil {
				return fail(n, l.Event.Seq, "%v", err)
			}
			if err := chain.Next(e); err != nil {
				return fail(n, e.Seq, "%v", err)
			}
			if _, ok := heldAt[e.Seq]; ok {
				heldAt[e.Seq] = e.Hash.String()
			}
			switch e.Type {
			case event.CheckpointSigned:
				cp, err := boards.CheckCheckpoint(e, keys)
				if err != nil {
					return fail(n, e.Seq, "%v", err)
				}
				rep.SignedSeq = cp.Seq
			case event.CapabilityInstalled:
				var d event.CapabilityInstalledData
				if err := json.Unmarshal(e.Data, &d); err != nil {
					return fail(n, e.Seq, "the install does not decode: %v", err)
				}
				rel := d.Release
				installs[rel.ID+"@"+rel.Version] = e.Seq
				wantDigest[rel.ID+"@"+rel.Version] = rel.Digest
			}
		case l.Release != nil && l.Event == nil:
			name := l.Release.ID + "@" + l.Release.Version
			got, err := boards.ReleaseDigest(l.Release.Content)
			if err != nil {
				return fail(n, 0, "release %s: %v", name, err)
			}
			if got != l.Release.Digest || got != wantDigest[name] {
				return fail(n, 0, "release %s digests to %s; it is listed as %s and installed as %s", name, got, l.Release.Digest, wantDigest[name])
			}
			releases[name] = true
			rep.Releases++
		default:
			return fail(n, 0, "a line holds one event or one release")
		}
	}
	for name, seq := range installs {
		if !releases[name] {
			return fail(last, seq, "release %s, installed at this event, is not in the bundle", name)
		}
	}
	for _, cp := range held {
		if err := cp.Verify(keys); err != nil {
			return fail(last, cp.Seq, "held %v", err)
		}
		if cp.Project != h.Project || heldAt[cp.Seq] != cp.Hash {
			return fail(last, cp.Seq, "the held checkpoint signed project %s seq %d hash %s; the bundle has hash %q there", cp.Project, cp.Seq, cp.Hash, heldAt[cp.Seq])
		}
	}
	rep.Events, rep.Head = chain.Head().Seq, chain.Head().Hash.String()
	if rep.Events == 0 {
		return Report{}, errors.New("the bundle holds no events")
	}
	return rep, nil
}

// storeEvent is e of project as the store holds it, for the chain to check.
func storeEvent(project string, e Event) (store.Event, error) {
	out := store.Event{Project: project, Seq: e.Seq, ID: e.ID, Type: e.Type, At: e.At, Actor: e.Actor, Data: e.Data}
	for _, f := range []struct {
		name string
		s    string
		h    *store.Hash
	}{{"dataHash", e.DataHash, &out.DataHash}, {"prevHash", e.PrevHash, &out.PrevHash}, {"hash", e.Hash, &out.Hash}} {
		h, err := store.ParseHash(f.s)
		if err != nil {
			return store.Event{}, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.h = h
	}
	return out, nil
}
