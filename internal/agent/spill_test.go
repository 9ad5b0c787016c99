package agent_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// A worker's row with a value over the inline bound goes to the authority's artifact
// store directly, with the report: the fact the Action returns holds its ref, and the
// Agent reads the whole value with ReadArtifact, honouring offset and limit. It is kept
// for the retention of the project's artifact policy.
func TestWorkerResultOverTheBoundIsAnArtifact(t *testing.T) {
	r := newAuthorityRig(t, 20*time.Millisecond)
	gw, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: r.url, Token: r.token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	call := func(tool string, in any) contract.ToolResult {
		t.Helper()
		args, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		res, err := gw.Call(t.Context(), tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var tr contract.ToolResult
		if err := json.Unmarshal([]byte(res.Text), &tr); err != nil {
			t.Fatalf("%s answered %s", tool, res.Text)
		}
		return tr
	}
	// The project keeps its artifacts three days (docs/policies.md, [artifact_policy]).
	if _, err := r.auth.PublishPolicy(t.Context(), r.admin, "default", contract.PublishPolicyRequest{File: "artifact.toml", Text: "[artifact_policy]\nretention_days = 3\n"}); err != nil {
		t.Fatal(err)
	}
	call(contract.ToolApplyAction, contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a.txt")}})
	big := strings.Repeat("the whole file, line after line; ", 400) // 13 200 bytes
	r.settle(t, 1, big)

	tr := call(contract.ToolQueryBoard, contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "fetched", Args: contract.Args{"path": contract.StringValue("?p")}}})
	ref := regexp.MustCompile(`art_[0-9a-f]{32}`).FindString(string(tr.Result))
	if ref == "" || strings.Contains(string(tr.Result), big[:200]) {
		t.Fatalf("the fetched fact is %s; want it to hold an artifact ref, not the value", tr.Result)
	}
	var frag contract.ArtifactFragment
	tr = call(contract.ToolReadArtifact, contract.ReadArtifactInput{Ref: ref, Offset: 100, Limit: 50})
	if err := json.Unmarshal(tr.Result, &frag); err != nil || frag.Text != big[100:150] || frag.Size != int64(len(big)) || !frag.More {
		t.Errorf("ReadArtifact %s at 100 limit 50 = %+v (%v), want 50 bytes of %d", ref, frag, err, len(big))
	}
	evs, err := r.auth.Events(t.Context(), r.admin, "default", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	issued := 0
	for _, e := range evs {
		if e.Type != event.ArtifactIssued {
			continue
		}
		issued++
		var d event.ArtifactIssuedData
		if err := json.Unmarshal(e.Data, &d); err != nil || !d.ExpiresAt.Equal(e.At.Add(72*time.Hour)) {
			t.Errorf("artifact.issued at %s expires at %s (%v), want three days on, as the project's artifact policy says", e.At, d.ExpiresAt, err)
		}
	}
	if issued != 1 {
		t.Errorf("%d artifact.issued events, want 1", issued)
	}
}
