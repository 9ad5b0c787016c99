package capability_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

// lockOf is a lock of tool on conn at minute, whose descriptor the worker advertised.
func lockOf(conn, tool, kind, approval string, minute int, d *contract.ToolDescriptor) contract.ToolLock {
	at := time.Date(2026, 12, 2, 8, minute, 0, 0, time.UTC)
	if d != nil {
		d.Tool, d.Kind, d.Direct = contract.ToolID(tool), kind, true
	}
	return contract.ToolLock{Connection: contract.ConnectionID(conn), Tool: tool, Digest: "sha256:11", Approval: approval, LockedAt: &at, Descriptor: d}
}

func TestDirect(t *testing.T) {
	list := func() *contract.ToolDescriptor {
		return &contract.ToolDescriptor{SourceTypes: []string{"http"}, Description: "Lists orders.",
			Params: []contract.ToolParam{{Name: "status", Type: "string"}, {Name: "customer", Type: "string", Required: true, Description: "who"}},
			Facts:  []contract.ToolFact{{Predicate: "order_total", Args: map[string]string{"order": "$id", "cents": "$total"}}}}
	}
	listAction := board.Action{Name: "acme.orders.list@1", Description: "Lists orders.", Approval: "none", Direct: true,
		Params: []board.Param{{Name: "customer", Type: "string", Description: "who"}, {Name: "status", Type: "string", Optional: true},
			{Name: "source", Type: "string", Optional: true, Description: "the Source to run against, by name; needed only when the Connection binds several http Sources"}},
		Execution: &board.Execution{Tool: "acme.orders.list@1", SourceTypes: []string{"http"}, Kind: "read",
			Returns: []board.Return{{Predicate: "order_total", Args: map[string]string{"order": "$id", "cents": "$total"}}}}}
	tests := []struct {
		name  string
		locks []contract.ToolLock
		want  []board.Action // nil: no release
	}{
		{"a Tool that states its params is an Action named after it", []contract.ToolLock{lockOf("c1", "acme.orders.list@1", "read", "none", 0, list())},
			[]board.Action{listAction}},
		{"a lock with no descriptor offers none", []contract.ToolLock{lockOf("c1", "acme.orders.list@1", "read", "none", 0, nil)}, nil},
		{"a Tool whose params are open offers none", func() []contract.ToolLock {
			l := lockOf("c1", "acme.orders.list@1", "read", "none", 0, list())
			l.Descriptor.Direct = false
			return []contract.ToolLock{l}
		}(), nil},
		{"a facts mapping that is not a predicate is left out", func() []contract.ToolLock {
			d := list()
			d.Facts[0].Predicate = "Order Total"
			return []contract.ToolLock{lockOf("c1", "acme.orders.list@1", "read", "none", 0, d)}
		}(), nil},
		{"the lock made last wins across Connections", []contract.ToolLock{
			lockOf("c1", "acme.orders.list@1", "read", "person", 5, list()),
			lockOf("c2", "acme.orders.list@1", "read", "none", 3, list()),
		}, []board.Action{func() board.Action { a := listAction; a.Approval = "person"; return a }()}},
		{"a source-free write takes no source param", []contract.ToolLock{lockOf("c1", "acme.ping@1", "write", "person", 0, &contract.ToolDescriptor{})},
			[]board.Action{{Name: "acme.ping@1", Description: "Runs the write Tool acme.ping@1 on a worker.", Approval: "person", Direct: true,
				Execution: &board.Execution{Tool: "acme.ping@1", Kind: "write"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok, err := capability.Direct(tc.locks)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tc.want != nil) {
				t.Fatalf("Direct ok = %v, want %v (%+v)", ok, tc.want != nil, d.Actions)
			}
			if !ok {
				return
			}
			if d.Release != contract.DirectRelease+"@"+capability.DirectVersion || len(d.Digest) != len("sha256:")+64 {
				t.Errorf("release %s digest %s, want %s@%s with a digest", d.Release, d.Digest, contract.DirectRelease, capability.DirectVersion)
			}
			if diff := cmp.Diff(tc.want, d.Actions); diff != "" {
				t.Errorf("Actions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDirect_DigestMoves: the release digest moves with an approval change and a new
// digest, so a request raised under the old one is known void.
func TestDirect_DigestMoves(t *testing.T) {
	digest := func(l contract.ToolLock) string {
		t.Helper()
		d, _, err := capability.Direct([]contract.ToolLock{l})
		if err != nil {
			t.Fatal(err)
		}
		return d.Digest
	}
	base := lockOf("c1", "acme.ping@1", "write", "person", 0, &contract.ToolDescriptor{})
	free := base
	free.Approval = "none"
	if digest(base) == digest(free) {
		t.Error("an approval change left the release digest as it was")
	}
	if digest(base) != digest(lockOf("c1", "acme.ping@1", "write", "person", 0, &contract.ToolDescriptor{})) {
		t.Error("the same locks give another digest")
	}
}

func TestCheckDirect(t *testing.T) {
	tests := []struct {
		name string
		d    contract.ToolDescriptor
		ok   bool
	}{
		{"params and facts", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, SourceTypes: []string{"db"},
			Params: []contract.ToolParam{{Name: "id", Type: "integer"}}, Facts: []contract.ToolFact{{Predicate: "row", Args: map[string]string{"id": "$id", "k": "const"}}}}, true},
		{"not direct passes", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "odd"}, true},
		{"unknown kind", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "delete", Direct: true}, false},
		{"a param named source", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, Params: []contract.ToolParam{{Name: "source", Type: "string"}}}, false},
		{"a param of no type", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, Params: []contract.ToolParam{{Name: "x", Type: "date"}}}, false},
		{"facts without a Source", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, Facts: []contract.ToolFact{{Predicate: "row", Args: map[string]string{"id": "$id"}}}}, false},
		{"a camelCase column, as an MCP server's rows have", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, SourceTypes: []string{"mcp"},
			Facts: []contract.ToolFact{{Predicate: "row", Args: map[string]string{"schema": "$inputSchema"}}}}, true},
		{"a column that is no name", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, SourceTypes: []string{"db"},
			Facts: []contract.ToolFact{{Predicate: "row", Args: map[string]string{"id": "$9id"}}}}, false},
		{"an argument that is no Board name", contract.ToolDescriptor{Tool: "acme.a@1", Kind: "read", Direct: true, SourceTypes: []string{"db"},
			Facts: []contract.ToolFact{{Predicate: "row", Args: map[string]string{"Id": "$id"}}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := capability.CheckDirect(tc.d)
			if (err == nil) != tc.ok {
				t.Errorf("CheckDirect = %v, want ok %v", err, tc.ok)
			}
			if err != nil && contract.CodeOf(err) != contract.CodeManifestInvalid {
				t.Errorf("code = %s, want manifest_invalid", contract.CodeOf(err))
			}
		})
	}
}
