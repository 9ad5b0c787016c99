package boards

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// ProjectionError names the first row of a project's node table that disagrees with its
// log: a forged, missing or extra node, or an installed release whose content is not the
// release the log installed.
type ProjectionError struct {
	Project contract.ProjectID
	Seq     int64  // the event that last recorded the row; 0 when the log never did
	Node    string // the node id, "case:<id>" for a Case, "release:<id>@<version>" for a release
	Field   string // what differs: "missing", "extra", a field name of the record, or "content"
	Want    string // what the log says
	Got     string // what the table holds
}

// Error names the project, the node and what differs.
func (e *ProjectionError) Error() string {
	return fmt.Sprintf("board of %s disagrees with its log: %s (recorded at seq %d): %s is %s, the log says %s",
		e.Project, e.Node, e.Seq, e.Field, e.Got, e.Want)
}

// recorded is a row as the log says it should be, and the event that said so.
type recorded struct {
	seq  int64
	kind string
	data []byte
}

// logState is what a project's log says its projections should hold, read in one scan.
type logState struct {
	rows      map[string]recorded // node and Case rows by id
	found     bool                // whether the log holds any record
	installs  map[string]install  // releases installed, by "<id>@<version>"
	decisions map[string]decided  // decisions on Requests, by request id
}

// install is a capability.installed event: where it is and the digest it installed.
type install struct {
	seq    int64
	digest string
}

// replay reads project's log from r: the rows its records leave and the releases its
// installs name.
func replay(ctx context.Context, r store.Reader, project contract.ProjectID) (logState, error) {
	return replayWith(ctx, r, project, false)
}

// replayWith is replay, reading the decisions the log records too when decisions is
// set: only a verifier compares them, so a start does not decode every request.changed.
func replayWith(ctx context.Context, r store.Reader, project contract.ProjectID, decisions bool) (logState, error) {
	st := logState{rows: map[string]recorded{}, installs: map[string]install{}, decisions: map[string]decided{}}
	err := eventlog.Scan(ctx, r, project, 0, -1, func(e store.Event) error {
		switch e.Type {
		case event.CapabilityInstalled:
			var d event.CapabilityInstalledData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return fmt.Errorf("decode install at seq %d of %s: %w", e.Seq, project, err)
			}
			rel := d.Release
			st.installs[rel.ID+"@"+rel.Version] = install{seq: e.Seq, digest: rel.Digest}
			return nil
		case event.BoardRecorded:
			st.found = true
			return st.apply(e, project)
		case event.RequestChanged:
			if !decisions {
				return nil
			}
			return st.applyRequest(e, project)
		}
		return nil
	})
	return st, err
}

// apply applies one board.recorded event to the rows.
func (st *logState) apply(e store.Event, project contract.ProjectID) error {
	var rec event.BoardRecordedData
	if err := json.Unmarshal(e.Data, &rec); err != nil {
		return fmt.Errorf("decode record at seq %d of %s: %w", e.Seq, project, err)
	}
	if rec.Snapshot {
		clear(st.rows)
	}
	for _, raw := range rec.Nodes {
		var n struct {
			NodeID string `json:"nodeId"`
			Kind   string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &n); err != nil {
			return fmt.Errorf("decode node at seq %d of %s: %w", e.Seq, project, err)
		}
		st.rows[n.NodeID] = recorded{seq: e.Seq, kind: n.Kind, data: raw}
	}
	for _, id := range rec.Deleted {
		delete(st.rows, id)
	}
	for _, raw := range rec.Cases {
		var c struct {
			CaseID string `json:"caseId"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("decode case at seq %d of %s: %w", e.Seq, project, err)
		}
		st.rows[caseKeyPrefix+c.CaseID] = recorded{seq: e.Seq, kind: nodeKindCase, data: raw}
	}
	return nil
}

// CheckProjection replays project's log and compares what it records with the node table,
// the installed releases and the decisions table r holds. It returns a *[ProjectionError]
// naming the first row that disagrees, in id order.
func CheckProjection(ctx context.Context, r store.Reader, project contract.ProjectID) error {
	st, err := replayWith(ctx, r, project, true)
	if err != nil {
		return err
	}
	if err := st.check(ctx, r, project); err != nil {
		return err
	}
	// The decisions table is checked here, by a verifier, and not when a serve starts:
	// the authority reads who decided from the log, and the table only holds the store's
	// rules on a decision (internal/store/decisions.go).
	return checkDecisions(ctx, r, project, st.decisions)
}

// check compares st with the node table and the installed releases r holds.
func (st logState) check(ctx context.Context, r store.Reader, project contract.ProjectID) error {
	rows, err := r.Nodes(ctx, string(project))
	if err != nil {
		return fmt.Errorf("load nodes of %s: %w", project, err)
	}
	if err := compareRows(project, st.rows, rows); err != nil {
		return err
	}
	return checkReleases(ctx, r, project, st.installs)
}

func compareRows(project contract.ProjectID, want map[string]recorded, rows []store.Node) error {
	broken := func(id string, seq int64, field, w, g string) error {
		return &ProjectionError{Project: project, Seq: seq, Node: id, Field: field, Want: w, Got: g}
	}
	seen := make(map[string]bool, len(rows))
	for _, row := range rows {
		seen[row.ID] = true
		w, ok := want[row.ID]
		if !ok {
			return broken(row.ID, 0, "extra", "no such node", "a row of kind "+row.Kind)
		}
		if w.kind != row.Kind {
			return broken(row.ID, w.seq, "kind", w.kind, row.Kind)
		}
		if field, wv, gv, same := sameJSON(w.data, row.Data); !same {
			return broken(row.ID, w.seq, field, wv, gv)
		}
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		sort.Strings(ids)
		return broken(ids[0], want[ids[0]].seq, "missing", "a row of kind "+want[ids[0]].kind, "no row")
	}
	return nil
}

// sameJSON compares two JSON objects and names the first top-level key, in key order,
// whose value differs.
func sameJSON(want, got []byte) (field, w, g string, same bool) {
	if bytes.Equal(want, got) {
		return "", "", "", true
	}
	var wm, gm map[string]json.RawMessage
	if json.Unmarshal(want, &wm) != nil || json.Unmarshal(got, &gm) != nil {
		return "content", fmt.Sprintf("%d bytes", len(want)), fmt.Sprintf("%d bytes", len(got)), false
	}
	keys := make([]string, 0, len(wm)+len(gm))
	for k := range wm {
		keys = append(keys, k)
	}
	for k := range gm {
		if _, ok := wm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !bytes.Equal(compact(wm[k]), compact(gm[k])) {
			return k, shown(wm[k]), shown(gm[k]), false
		}
	}
	return "", "", "", true // the same object, spaced differently
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// shown is a JSON value for an error, bounded.
func shown(b json.RawMessage) string {
	if b == nil {
		return "absent"
	}
	s := string(compact(b))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// checkReleases checks that each release installed in project is stored with the content
// its digest names and was installed by a capability.installed event at that digest.
func checkReleases(ctx context.Context, r store.Reader, project contract.ProjectID, installed map[string]install) error {
	ins, err := r.Installs(ctx, string(project))
	if err != nil {
		return fmt.Errorf("list installs of %s: %w", project, err)
	}
	for _, in := range ins {
		name := "release:" + in.ReleaseID + "@" + in.Version
		ev, ok := installed[in.ReleaseID+"@"+in.Version]
		if !ok {
			return &ProjectionError{Project: project, Node: name, Field: "extra", Want: "no install", Got: "installed"}
		}
		got, err := releaseDigest(ctx, r, in)
		if err != nil {
			return &ProjectionError{Project: project, Seq: ev.seq, Node: name, Field: "content", Want: ev.digest, Got: err.Error()}
		}
		if got != ev.digest {
			return &ProjectionError{Project: project, Seq: ev.seq, Node: name, Field: "content", Want: ev.digest, Got: "content digesting to " + got}
		}
	}
	return nil
}

// ReleaseDigest is the digest of a release's stored content (its files as a JSON
// object), validated as a capability package again.
func ReleaseDigest(content []byte) (string, error) {
	pkg, err := unpackRelease(content)
	if err != nil {
		return "", err
	}
	return pkg.Release.Digest, nil
}

// releaseDigest is the digest in's stored content hashes to, checked against the digest
// stored beside it.
func releaseDigest(ctx context.Context, r store.Reader, in store.Install) (string, error) {
	rel, err := r.Release(ctx, in.ReleaseID, in.Version)
	if err != nil {
		return "", fmt.Errorf("load release: %w", err)
	}
	pkg, err := unpackRelease(rel.Content)
	if err != nil {
		return "", fmt.Errorf("content that does not unpack (%v)", strings.TrimSpace(err.Error()))
	}
	stored, err := contract.DigestFrom(rel.Digest)
	if err != nil {
		return "", fmt.Errorf("a stored digest that does not read (%v)", err)
	}
	if stored.String() != pkg.Release.Digest {
		return "", fmt.Errorf("content digesting to %s beside a stored digest %s", pkg.Release.Digest, stored)
	}
	return pkg.Release.Digest, nil
}

// adoptActor is the actor of the snapshot record docket itself appends.
const adoptActor contract.Principal = "system:docket"

// adopt appends a snapshot record of project's node table when the log holds nodes but no
// record (a log written before records existed), so that every later check has the log
// to compare with. It reports whether it appended.
func (a *Cache) adopt(ctx context.Context, project contract.ProjectID) (bool, error) {
	adopted := false
	err := a.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return err
		}
		st, err := replay(ctx, tx, project)
		if err != nil || st.found {
			return err
		}
		rows, err := tx.Nodes(ctx, string(project))
		if err != nil || len(rows) == 0 {
			return err
		}
		rec := event.BoardRecordedData{Snapshot: true}
		for _, row := range rows {
			if row.Kind == nodeKindCase {
				rec.Cases = append(rec.Cases, row.Data)
			} else {
				rec.Nodes = append(rec.Nodes, row.Data)
			}
		}
		adopted = true
		return eventlog.Append(ctx, tx, project, adoptActor, a.nowUTC(), rec)
	})
	if err != nil {
		return false, fmt.Errorf("adopt node table of %s: %w", project, err)
	}
	return adopted, nil
}
