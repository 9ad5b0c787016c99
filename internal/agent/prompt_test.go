package agent_test

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

func TestSystemPrompt(t *testing.T) {
	p := agent.SystemPrompt("")
	// The model can name exactly six tools; the prompt must name them all.
	for _, tool := range []string{"OpenCase", "ApplyBatch", "ApplyAction", "CloseCase", "QueryBoard", "ReadArtifact"} {
		if !strings.Contains(p, "- "+tool+" ") {
			t.Errorf("the system prompt does not describe %s", tool)
		}
	}
	if strings.Contains(p, "Your task") {
		t.Errorf("an empty task added a task section")
	}
	withTask := agent.SystemPrompt("  compute calc-001 \n")
	if !strings.HasPrefix(withTask, p) || !strings.HasSuffix(withTask, "Your task:\ncompute calc-001") {
		t.Errorf("SystemPrompt(task) = ...%q, want the prompt then the trimmed task", withTask[len(p):])
	}
}
