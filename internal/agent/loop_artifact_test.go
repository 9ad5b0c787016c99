package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
)

// A local ReadArtifact honours offset and limit as the gateway's does: at most limit
// bytes from offset, and whether more follow.
func TestLoop_LocalReadArtifactHonoursLimit(t *testing.T) {
	r := newRig(t)
	big := strings.Repeat("0123456789", 200)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		return gatewaytest.Reply{Result: json.RawMessage(`"` + big + `"`)}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},`+
		`{"calls":[{"tool":"ReadArtifact","arguments":{"ref":"local:1","offset":3,"limit":5}},`+
		`{"tool":"ReadArtifact","arguments":{"ref":"local:1","offset":1990,"limit":100}}]},{"final":"ok"}]}`)
	if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.Bounder.Limit = 600 }).Send(t.Context(), "c1", "go"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	res := results(t, r.store, "c1")
	type fragment struct {
		Content string `json:"content"`
		More    bool   `json:"more"`
		Offset  int    `json:"offset"`
		Total   int    `json:"total"`
	}
	var got []fragment
	for _, rr := range res[1:3] {
		var tr struct {
			Result fragment `json:"result"`
		}
		if err := json.Unmarshal([]byte(rr.Content), &tr); err != nil {
			t.Fatalf("ReadArtifact result %s: %v", rr.Content, err)
		}
		got = append(got, tr.Result)
	}
	// The model was shown the start of the result, so the first fragment is bytes 3 to 8
	// of what it was shown; the second runs from 1990 to the end, under its limit.
	total := got[0].Total
	want := []fragment{
		{Content: res[0].Content[3:8], More: true, Offset: 3, Total: total},
		{Content: got[1].Content, More: false, Offset: 1990, Total: total},
	}
	if len(got[1].Content) != total-1990 || !strings.HasSuffix(got[1].Content, big[len(big)-20:]+`"}`) {
		t.Errorf("the last fragment is %q, want the %d bytes from 1990 to the end", got[1].Content, total-1990)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("local fragments (-want +got):\n%s", diff)
	}
}
