package boards

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// notesTool is a Tool whose lock declares a direct Action (docs/workers.md, "Direct
// Actions").
var notesTool = contract.ToolDescriptor{Tool: "acme.notes.list@1", Digest: "sha256:1111111111111111111111111111111111111111111111111111111111111111",
	Adapter: "run", AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}, Direct: true,
	Params: []contract.ToolParam{{Name: "dir", Type: "string", Required: true}},
	Facts:  []contract.ToolFact{{Predicate: "note_file", Args: map[string]string{"path": "$path"}}}}

// TestBoardState_ReplaysTheLog: every event that changes a Board is applied from the log
// (follow.go), so a State fresh at the log's start (freshBoardState) that applies a
// project's whole log, the releases its installs name read ahead as a catch-up reads
// them, holds the Board a build from the store makes, with no build: installs (one
// replacing an earlier version, one whose id sorts first), Tool locks, facts and a
// snapshot record that replaces every row, read a page at a time.
func TestBoardState_ReplaysTheLog(t *testing.T) {
	ctx := t.Context()
	st := openLog(t)
	now := func() time.Time { return time.Now().UTC() }
	c := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	dir, err := identity.New(identity.Config{Store: st, Key: identity.Key{1}})
	if err != nil {
		t.Fatal(err)
	}
	ada := identity.Caller{Kind: contract.PrincipalMember, ID: "ada", Projects: []contract.ProjectID{testProject}}
	install := func(id, version, name string) {
		t.Helper()
		if _, err := c.InstallCapability(ctx, ada, testProject, contract.CapabilityUpload{Files: releaseFiles(id, version, name)}); err != nil {
			t.Fatalf("install %s@%s: %v", id, version, err)
		}
	}
	install("zeta.replay", "1.0.0", "zeta")
	for i := range boardScanPage {
		assertSeen(t, c, fmt.Sprint("a", i))
	}
	if _, err := dir.CreateConnection(ctx, ada, testProject, contract.CreateConnectionRequest{Name: "notes"}); err != nil {
		t.Fatal(err)
	}
	d := notesTool
	if _, err := dir.LockTool(ctx, ada, testProject, "notes", contract.ToolLock{Tool: string(d.Tool), Digest: d.Digest, Descriptor: &d}); err != nil {
		t.Fatal(err)
	}
	install("alpha.replay", "1.0.0", "alpha")
	assertSeen(t, c, "b")
	// A snapshot record of the node table, as a log written before records existed
	// adopts it (Cache.adopt): what comes before it is replaced.
	if err := st.Update(ctx, func(tx store.Tx) error {
		rows, err := tx.Nodes(ctx, string(testProject))
		if err != nil {
			return err
		}
		// The first row goes from the table with no record of it, so only a record
		// that replaces every row leaves it out.
		if err := tx.DeleteNode(ctx, string(testProject), rows[0].ID); err != nil {
			return err
		}
		rec := event.BoardRecordedData{Snapshot: true}
		for _, row := range rows[1:] {
			if row.Kind == nodeKindCase {
				rec.Cases = append(rec.Cases, row.Data)
			} else {
				rec.Nodes = append(rec.Nodes, row.Data)
			}
		}
		return eventlog.Append(ctx, tx, testProject, adoptActor, now(), rec)
	}); err != nil {
		t.Fatal(err)
	}
	install("zeta.replay", "2.0.0", "zeta_two")
	assertSeen(t, c, "c")

	head, err := st.Head(ctx, string(testProject))
	if err != nil {
		t.Fatal(err)
	}
	replayer := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	fresh, err := freshBoardState()
	if err != nil {
		t.Fatal(err)
	}
	pb := replayer.lock(testProject)
	pb.restartLocked(&fresh)
	ok, _, err := replayer.catchUpLocked(ctx, testProject, pb, head.Seq, true)
	replayed, seq := pb.st().b, pb.h.Seq()
	pb.unlock()
	if err != nil || !ok {
		t.Fatalf("the fresh State applied the log: %v, %v; want it all applied", ok, err)
	}
	if seq != head.Seq {
		t.Fatalf("the fresh State is at seq %d, want the head %d", seq, head.Seq)
	}

	built := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	var want []byte
	if err := built.View(ctx, testProject, func(b *board.Board) error {
		want, err = viewJSON(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := viewJSON(replayed)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the replayed Board shows\n%s\nwant the built Board's\n%s", got, want)
	}
	if !replayed.HasCaseType("zeta_two") || replayed.HasCaseType("zeta") || !replayed.HasAction(string(d.Tool)) {
		t.Errorf("the replayed Board declares zeta_two %v, zeta %v, %s %v; want true, false, true",
			replayed.HasCaseType("zeta_two"), replayed.HasCaseType("zeta"), d.Tool, replayed.HasAction(string(d.Tool)))
	}
	if n := len(replayed.Nodes()); n != boardScanPage+1 {
		t.Errorf("the replayed Board holds %d nodes, want %d", n, boardScanPage+1)
	}
}

// viewJSON is the View of b a member is shown, with its nodes, as JSON.
func viewJSON(b *board.Board) ([]byte, error) {
	return json.Marshal(struct {
		View  contract.View
		Nodes []contract.Node
		Cases []contract.Case
	}{b.View(board.ViewRequest{Principal: "member:ada"}), b.Nodes(), b.Cases()})
}
