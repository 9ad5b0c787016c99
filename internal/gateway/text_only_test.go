package gateway_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// TestGateway_TextOnly: a client that says it reads the text block alone
// (_meta["docket/textOnly"]: true) is answered without structuredContent, with the same
// text block and host metadata a client that does not say so is answered; one that says
// false, or nothing, is answered with both, as before (docs/mcp.md, "Result shape").
func TestGateway_TextOnly(t *testing.T) {
	bad := contract.Batch{Operations: []contract.Operation{{Op: contract.OpRetractNode, NodeID: "n-0000000000000000"}}}
	cases := []struct {
		name     string
		tool     string
		args     any
		textOnly any // the _meta value; nil: the key is not sent
		want     bool
		accepted bool
	}{
		{"a read, text only", "QueryBoard", contract.QueryBoardInput{FullView: true}, true, true, true},
		{"a read, false", "QueryBoard", contract.QueryBoardInput{FullView: true}, false, false, true},
		{"a read, not said", "QueryBoard", contract.QueryBoardInput{FullView: true}, nil, false, true},
		{"a write, text only", "ApplyBatch", assertTen(1), true, true, true},
		{"a refused write, text only", "ApplyBatch", bad, true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, time.Second)
			cs := f.connect(t, nil)
			if res, _ := call(t, cs, "ApplyBatch", assertTen(0)); !res.Accepted {
				t.Fatalf("ApplyBatch = %s %s", res.ErrorCode, res.Teaching)
			}
			meta := mcp.Meta{}
			if tc.textOnly != nil {
				meta[contract.MetaTextOnlyKey] = tc.textOnly
			}
			// A read changes nothing, so a read made just before it, without the key, is
			// the answer a client that reads both would have had.
			var plain *mcp.CallToolResult
			if tc.tool == "QueryBoard" {
				callMeta(t, cs, nil, tc.tool, tc.args) // the earlier write's outcome counts as seen
				plain = callRaw(t, cs, nil, tc.tool, tc.args)
			}
			res := callRaw(t, cs, meta, tc.tool, tc.args)
			if got := res.StructuredContent == nil; got != tc.want {
				t.Errorf("answer without structuredContent: %v, want %v", got, tc.want)
			}
			if len(res.Content) != 1 {
				t.Fatalf("answer has %d content blocks, want 1", len(res.Content))
			}
			var tr contract.ToolResult
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &tr); err != nil {
				t.Fatalf("text block: %v", err)
			}
			if tr.Accepted != tc.accepted || res.IsError == tc.accepted {
				t.Errorf("accepted %v, isError %v; want accepted %v", tr.Accepted, res.IsError, tc.accepted)
			}
			if _, ok := res.Meta[contract.MetaKey]; !ok {
				t.Error("answer without host metadata")
			}
			if plain != nil {
				if diff := cmp.Diff(plain.Content[0].(*mcp.TextContent).Text, res.Content[0].(*mcp.TextContent).Text); diff != "" {
					t.Errorf("text block differs from a plain client's (-plain +this):\n%s", diff)
				}
				if diff := cmp.Diff(plain.Meta, res.Meta); diff != "" {
					t.Errorf("host metadata differs from a plain client's (-plain +this):\n%s", diff)
				}
			}
		})
	}
}

// TestGateway_TextOnlyMalformed: a _meta["docket/textOnly"] that is not a boolean is
// refused, as a malformed viewDelta is.
func TestGateway_TextOnlyMalformed(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	for _, v := range []any{"true", 1} {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "QueryBoard", Arguments: []byte(`{}`),
			Meta: mcp.Meta{contract.MetaTextOnlyKey: v}})
		if err == nil {
			t.Errorf("QueryBoard with _meta textOnly %v answered, want refused", v)
		}
	}
}

// callRaw calls tool with args and _meta meta and returns the SDK's result.
func callRaw(t *testing.T, cs *mcp.ClientSession, meta mcp.Meta, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw), Meta: meta})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return res
}
