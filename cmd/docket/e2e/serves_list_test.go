package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestServes_ClientsSkipADeadServe: a worker and docket agent run, each given a serve
// that is down first and the live one after it (comma separated, docs/deploy.md), move
// to the live one and close the verified calculation there; each says it moved.
func TestServes_ClientsSkipADeadServe(t *testing.T) {
	s := newServeEnv(t, "", "../../../examples/verified-calculation/capability", "workspace",
		[]string{"calculation_input", "output_file"}, `{"format": "docket-worker-tools/1", "tools": {}}`)
	s.lock(t, "docket.workspace.read_json@1", "docket.workspace.write_json@1")
	dead := "http://" + freeAddr(t)
	w := startProc(t, append(os.Environ(), "DOCKET_CONNECTION_KEY="+s.key, "DOCKET_HOME="+t.TempDir()),
		"worker", "--url", dead+","+s.url, "--manifest", s.man, "--vault", s.vault, "--workspace-tools", "read-write")
	w.waitLine(t, "lease acquired")
	if !strings.Contains(w.log(), "serve unreachable; moving to the next") {
		t.Errorf("the worker did not say it moved from the dead serve:\n%s", w.log())
	}
	out := s.docket(t, []string{"DOCKET_AGENT_TOKEN=" + s.token}, "agent", "run", "--url", dead+"/mcp,"+s.url+"/mcp",
		"--script", "../../../examples/verified-calculation/script.json", "write the result of job calc-001")
	if !strings.Contains(out, "Case is closed as completed") {
		t.Errorf("docket agent run = %q, want the script's final answer", out)
	}
	if out := s.docket(t, nil, "case", "list"); !strings.Contains(out, "closed\tcompleted") {
		t.Errorf("docket case list = %q, want the Case closed as completed", out)
	}
}
