package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
)

// endEvent is the last line docket agent run -o json printed.
func endEvent(t *testing.T, out string) runner.Event {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var ev runner.Event
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Event != "end" {
		t.Fatalf("the last line of docket agent run -o json is %q (%v), want the end event", lines[len(lines)-1], err)
	}
	return ev
}

// TestAgentRun_ReportsClosedCasesAndPins: docket agent run reports the Cases its run
// closed, each with its root (the close answered with a View delta, the normal path),
// in -o json's end event and on stderr. With --case-type and --key it pins its work as
// docket task post pins: the task is the authority's, reported completed with the same
// closed Cases, and a call on another business key is refused case_pinned.
func TestAgentRun_ReportsClosedCasesAndPins(t *testing.T) {
	r := newDocketRig(t)
	_, tok := r.agent(t, "runner")
	openClose := func(topic string) string {
		return r.script(t, `{"turns":[
		{"calls":[{"as":"open","tool":"OpenCase","arguments":{"caseType":"exploration","businessKey":{"topic":"`+topic+`"}}}]},
		{"calls":[{"tool":"QueryBoard"}]},
		{"calls":[{"tool":"CloseCase","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"disposition":"abandoned","reason":"only looking"}}]},
		{"final":"closed"}]}`)
	}

	out, stderr := r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--script", openClose("plain"), "-o", "json", "look")
	ev := endEvent(t, out)
	if ev.State != "completed" || len(ev.ClosedCases) != 1 || ev.ClosedCases[0].Root == "" || ev.ClosedCases[0].Disposition != contract.DispositionAbandoned {
		t.Fatalf("the end event = %+v, want completed with one closed Case and its root\n%s", ev, stderr)
	}
	_, stderr = r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--script", openClose("text"), "look")
	if !strings.Contains(stderr, "docket agent: closed ") || strings.Contains(stderr, "root -") {
		t.Errorf("docket agent run's stderr = %q, want the closed Case with its root", stderr)
	}

	out, stderr = r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--script", openClose("pinned"), "-o", "json",
		"--case-type", "exploration", "--key", "topic=pinned", "look")
	ev = endEvent(t, out)
	if ev.State != "completed" || ev.Task == "" || len(ev.ClosedCases) != 1 || ev.ClosedCases[0].Root == "" {
		t.Fatalf("the pinned run's end event = %+v, want its task completed with one closed Case and its root\n%s", ev, stderr)
	}
	task := r.taskUntil(t, ev.Task, contract.TaskCompleted)
	if task.CaseType != "exploration" || task.BusinessKey.JSON() != `{"topic":"pinned"}` || task.Result == nil || len(task.Result.ClosedCases) != 1 {
		t.Errorf("the authority's task = %+v, want it pinned and reported with its closed Case", task)
	}

	// The script goes on with the Case it could not open, and its run fails: exit 1.
	out, _ = r.exec(t, 1, nil, "agent", "run", "--token-file", tok, "--script", openClose("other"), "-o", "json",
		"--case-type", "exploration", "--key", "topic=pinned", "look")
	if !strings.Contains(out, string(contract.CodeCasePinned)) {
		t.Errorf("a pinned run opening another key printed %q, want case_pinned", out)
	}
	r.exec(t, exitUsage, nil, "agent", "run", "--token-file", tok, "--script", openClose("x"), "--case-type", "exploration", "look")
}
