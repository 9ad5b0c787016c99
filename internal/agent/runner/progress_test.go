package runner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

// TestProgress_PrintsARefusalWhole: a refused call's errorCode and teaching are printed in
// full, however long the result they sit in; other results are clipped.
func TestProgress_PrintsARefusalWhole(t *testing.T) {
	teaching := strings.Repeat("read the outcome in result first; ", 20) + "then send again"
	refused := `{"accepted":false,"result":{"big":"` + strings.Repeat("x", 500) + `"},"errorCode":"previous_result_undelivered","teaching":"` + teaching + `"}`
	var b bytes.Buffer
	p := Progress(&b)
	p(agent.ToolCall{ID: "c1", Name: "ApplyBatch"}, agent.ToolResult{CallID: "c1", IsError: true, Content: refused})
	p(agent.ToolCall{ID: "c2", Name: "QueryBoard"}, agent.ToolResult{CallID: "c2", Content: `{"accepted":true,"result":"` + strings.Repeat("y", 500) + `"}`})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("printed %q, want two lines", b.String())
	}
	if want := "ApplyBatch c1 -> previous_result_undelivered: " + teaching; strings.TrimSpace(lines[0]) != want {
		t.Errorf("refusal printed as\n%q\nwant\n%q", lines[0], want)
	}
	if !strings.HasSuffix(lines[1], "…") || len([]rune(lines[1])) > 200 {
		t.Errorf("an accepted result printed as %q, want it clipped", lines[1])
	}
}
