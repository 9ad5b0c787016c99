package gateway_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// TestGateway_StripSentWhenChanged: to a client that names the strip of Operations it
// holds (_meta "docket/operations"), an answer whose strip is that one names it unchanged
// instead of sending it; any other client, or strip, gets the strip in full as before.
// Every case starts from conversation a holding the strip sent with a QueryBoard, after a
// write.
func TestGateway_StripSentWhenChanged(t *testing.T) {
	stripMeta := func(held contract.Digest) mcp.Meta {
		s := ""
		if held != (contract.Digest{}) {
			s = held.String()
		}
		return mcp.Meta{contract.MetaConversationKey: "a", contract.MetaOperationsKey: s}
	}
	cases := []struct {
		name string
		// next makes the call after the first strip; it returns the answer.
		next          func(t *testing.T, cs *mcp.ClientSession, held contract.Digest) (contract.ToolResult, contract.HostMeta)
		wantUnchanged bool
	}{
		{"the client names the strip it holds", func(t *testing.T, cs *mcp.ClientSession, held contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callMeta(t, cs, stripMeta(held), "QueryBoard", contract.QueryBoardInput{})
		}, true},
		{"a client that names no strip", func(t *testing.T, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"the client holds none", func(t *testing.T, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callMeta(t, cs, stripMeta(contract.Digest{}), "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"the client holds another strip", func(t *testing.T, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callMeta(t, cs, stripMeta(contract.Sum([]byte("another strip"))), "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"the strip changed", func(t *testing.T, cs *mcp.ClientSession, held contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callMeta(t, cs, stripMeta(held), "ApplyBatch", assertTen(1))
		}, false},
		{"another conversation", func(t *testing.T, cs *mcp.ClientSession, held contract.Digest) (contract.ToolResult, contract.HostMeta) {
			m := stripMeta(held)
			m[contract.MetaConversationKey] = "b"
			return callMeta(t, cs, m, "QueryBoard", contract.QueryBoardInput{})
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, time.Second)
			cs := f.connect(t, nil)
			if res, _ := callMeta(t, cs, stripMeta(contract.Digest{}), "ApplyBatch", assertTen(0)); !res.Accepted {
				t.Fatalf("ApplyBatch = %s %s", res.ErrorCode, res.Teaching)
			}
			first, meta := callMeta(t, cs, stripMeta(contract.Digest{}), "QueryBoard", contract.QueryBoardInput{})
			if len(first.Operations) == 0 || meta.OperationsDigest != stripDigest(t, first.Operations) {
				t.Fatalf("first strip %+v, operationsDigest %v; want the strip and its digest", first.Operations, meta.OperationsDigest)
			}
			res, got := tc.next(t, cs, meta.OperationsDigest)
			if !res.Accepted {
				t.Fatalf("call = %s %s", res.ErrorCode, res.Teaching)
			}
			if tc.wantUnchanged {
				if res.OperationsUnchanged != meta.OperationsDigest || res.Operations != nil || got.OperationsDigest != meta.OperationsDigest {
					t.Errorf("operationsUnchanged %v, operations %+v, operationsDigest %v; want the held strip named unchanged and not sent",
						res.OperationsUnchanged, res.Operations, got.OperationsDigest)
				}
				return
			}
			if res.OperationsUnchanged != (contract.Digest{}) || len(res.Operations) == 0 {
				t.Fatalf("operationsUnchanged %v, operations %+v; want the strip in full", res.OperationsUnchanged, res.Operations)
			}
			if got.OperationsDigest != (contract.Digest{}) && got.OperationsDigest != stripDigest(t, res.Operations) {
				t.Errorf("operationsDigest %v, want the digest of the strip sent", got.OperationsDigest)
			}
		})
	}
}

// stripDigest is the digest of the strip's JSON.
func stripDigest(t *testing.T, ops []contract.OperationEntry) contract.Digest {
	t.Helper()
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return contract.Sum(b)
}
