package gateway_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// callMeta calls tool on cs with meta as the call's _meta.
func callMeta(t *testing.T, cs *mcp.ClientSession, meta mcp.Meta, tool string, args any) (contract.ToolResult, contract.HostMeta) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw), Meta: meta})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return decodeResult(t, res)
}

// TestGateway_ViewSentWhenChanged: an answer carries the View in full only when it is not
// the one the same conversation of the same session was last sent; otherwise it names
// that View's digest as unchanged. Every case starts from a conversation "a" that was
// just sent the View in full, then makes one more call.
func TestGateway_ViewSentWhenChanged(t *testing.T) {
	openB := contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("b")}}
	cases := []struct {
		name string
		// next makes the call after the first full View; it returns the answer.
		next          func(t *testing.T, f *fixture, cs *mcp.ClientSession, held contract.Digest) (contract.ToolResult, contract.HostMeta)
		wantUnchanged bool
	}{
		{"same conversation, nothing changed", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{})
		}, true},
		{"the client names the View it holds", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, held contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callMeta(t, cs, mcp.Meta{contract.MetaConversationKey: "a", contract.MetaViewKey: held.String()}, "QueryBoard", contract.QueryBoardInput{})
		}, true},
		{"the client holds no View", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callMeta(t, cs, mcp.Meta{contract.MetaConversationKey: "a", contract.MetaViewKey: ""}, "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"the client holds another View", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			other := contract.Sum([]byte("another view"))
			return callMeta(t, cs, mcp.Meta{contract.MetaConversationKey: "a", contract.MetaViewKey: other.String()}, "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"QueryBoard asks for the View in full", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{FullView: true})
		}, false},
		{"the Board changed", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			if res, _ := callIn(t, cs, "b", "OpenCase", openB); !res.Accepted {
				t.Fatalf("OpenCase in b = %s %s", res.ErrorCode, res.Teaching)
			}
			return callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"the focus changed", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			_, meta := callIn(t, cs, "b", "OpenCase", openB)
			if len(meta.FocusedRoots) != 1 {
				t.Fatalf("OpenCase in b focused %+v, want its Case", meta.FocusedRoots)
			}
			// a sees the new Case as a full View once; then only its focus changes.
			if res, _ := callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{}); res.ViewUnchanged != (contract.Digest{}) {
				t.Fatal("a's first QueryBoard after OpenCase named its View unchanged")
			}
			return callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{Focus: []contract.CaseID{meta.FocusedRoots[0].CaseID}})
		}, false},
		{"another conversation", func(t *testing.T, _ *fixture, cs *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callIn(t, cs, "c", "QueryBoard", contract.QueryBoardInput{})
		}, false},
		{"a new session", func(t *testing.T, f *fixture, _ *mcp.ClientSession, _ contract.Digest) (contract.ToolResult, contract.HostMeta) {
			return callIn(t, f.connect(t, nil), "a", "QueryBoard", contract.QueryBoardInput{})
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, time.Second)
			cs := f.connect(t, nil)
			first, meta := callIn(t, cs, "a", "QueryBoard", contract.QueryBoardInput{})
			if first.ViewUnchanged != (contract.Digest{}) || meta.ViewDigest == (contract.Digest{}) {
				t.Fatalf("first answer: viewUnchanged %v, viewDigest %v; want the View in full and its digest", first.ViewUnchanged, meta.ViewDigest)
			}
			if d, err := contract.ViewDigest(first.View); err != nil || d != meta.ViewDigest {
				t.Fatalf("viewDigest %v, want the digest of the View sent, %v (%v)", meta.ViewDigest, d, err)
			}
			res, meta := tc.next(t, f, cs, meta.ViewDigest)
			if !res.Accepted {
				t.Fatalf("call = %s %s", res.ErrorCode, res.Teaching)
			}
			if tc.wantUnchanged {
				if res.ViewUnchanged != meta.ViewDigest || meta.ViewDigest == (contract.Digest{}) {
					t.Errorf("viewUnchanged %v, viewDigest %v; want both the digest of the View held", res.ViewUnchanged, meta.ViewDigest)
				}
				if d, err := contract.ViewDigest(res.View); err != nil || d == meta.ViewDigest {
					t.Errorf("the answer carries the View as well as naming it unchanged")
				}
				return
			}
			if res.ViewUnchanged != (contract.Digest{}) {
				t.Errorf("viewUnchanged %v, want the View in full", res.ViewUnchanged)
			}
			if d, err := contract.ViewDigest(res.View); err != nil || d != meta.ViewDigest {
				t.Errorf("viewDigest %v, want the digest of the View sent, %v (%v)", meta.ViewDigest, d, err)
			}
		})
	}
}

// TestGateway_ViewClaimMalformed: a _meta["docket/view"] that is not a digest is refused
// with a teaching, as a malformed conversation id is.
func TestGateway_ViewClaimMalformed(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	for _, claim := range []any{"sha256:nothex", 7} {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(`{}`),
			Meta: mcp.Meta{contract.MetaViewKey: claim}})
		if err == nil {
			t.Errorf("QueryBoard with _meta view %v answered, want refused", claim)
		}
	}
}
