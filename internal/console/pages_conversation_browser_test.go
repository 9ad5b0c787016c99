package console_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// maxPageJSON is the most characters of JSON any element of a page may show outside a
// closed disclosure (docs/console.md, "An Agent's page").
const maxPageJSON = 400

// pageFit runs in the page (through the DevTools protocol): what is cut off at the
// viewport's width — the document wider than the viewport, or an element of main whose
// content is wider than its box and scrolls or is clipped — and every element whose
// own visible text holds more characters of JSON than the bound, measured as the
// console's jsonChars does (each run from a '{' or '[' that opens JSON to the bracket
// that closes it, or to the end of the text, summed). Text inside a closed <details>,
// but its <summary>, is hidden.
const pageFit = `((maxJSON) => {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) out.push("the document is " + root.scrollWidth + " px wide in a " + window.innerWidth + " px viewport");
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
  document.querySelectorAll("main *").forEach(el => {
    if (!el.checkVisibility()) return;
    const ox = getComputedStyle(el).overflowX;
    if (ox !== "visible" && el.scrollWidth > el.clientWidth + 1) out.push(name(el) + " is cut off: " + el.scrollWidth + " px of content in " + el.clientWidth + " px");
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth + 1) out.push(name(el) + " ends at " + Math.round(r.right) + " px, past the viewport");
  });
  const opens = s => {
    const rest = s.slice(1).trimStart();
    if (!rest) return false;
    const c = rest[0];
    if (s[0] === "{") return c === '"' || c === "}";
    return '"{[]-0123456789'.includes(c) || /^(true|false|null)/.test(rest);
  };
  const jsonChars = s => {
    let total = 0;
    for (let i = 0; i < s.length; i++) {
      if ((s[i] !== "{" && s[i] !== "[") || !opens(s.slice(i))) continue;
      let depth = 0, str = false, end = s.length;
      for (let j = i; j < s.length; j++) {
        const c = s[j];
        if (str && c === "\\") { j++; continue; }
        if (c === '"') { str = !str; continue; }
        if (str) continue;
        if (c === "{" || c === "[") depth++;
        if ((c === "}" || c === "]") && --depth === 0) { end = j + 1; break; }
      }
      total += end - i;
      i = end - 1;
    }
    return total;
  };
  document.querySelectorAll("body *").forEach(el => {
    const closed = el.closest("details:not([open])");
    if (closed && !el.closest("summary")) return;
    if (!el.checkVisibility()) return;
    let text = "";
    el.childNodes.forEach(n => { if (n.nodeType === Node.TEXT_NODE) text += n.data; });
    const n = jsonChars(text);
    if (n > maxJSON) out.push(name(el) + " shows " + n + " characters of JSON: " + text.slice(0, 80));
  });
  return out;
})`

// fitProblems returns what pageFit finds on the current page at each of the widths
// screenshots are taken at, and sets the viewport back.
func fitProblems(b *browsertest.Browser) []string {
	var out []string
	for _, w := range browsertest.Widths {
		b.Do(chromedp.EmulateViewport(w, 800))
		for _, p := range browsertest.Run(b, chromedp.Evaluate[[]string](fmt.Sprintf("%s(%d)", pageFit, maxPageJSON))) {
			out = append(out, fmt.Sprintf("at %d px: %s", w, p))
		}
	}
	b.Do(chromedp.EmulateViewport(browsertest.Widths[0], 900))
	return out
}

// TestPages_AgentConversationReads: an Agent's page reads like a conversation. Each
// call's arguments are a small table, each answer a sentence — accepted or refused with
// its code, what its result says, the strip it carried — with the raw JSON (a View of
// thousands of characters) behind a closed disclosure; an outcome the runtime delivered
// as JSON is said in words. Nothing is cut off and no element shows more than 400
// characters of JSON at 1280 px or at 390 px; the task form starts a new conversation.
func TestPages_AgentConversationReads(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	at, err := r.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := r.a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	gw, err := mcpclient.Dial(ctx, mcpclient.Config{URL: r.URL + "/mcp", Token: at.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	// writer makes real calls through the gateway; their answers are saved as its
	// runtime saves a conversation.
	type call struct{ id, name, args string }
	var notes []string
	for i := range 8 {
		notes = append(notes, fmt.Sprintf(`{"op": "assert_fact", "atom": {"predicate": "note", "args": {"text": "tide table line %d", "n": %d}}}`, i, i))
	}
	calls := []call{
		{"call_0", contract.ToolApplyBatch, `{"operations": [` + strings.Join(notes, ", ") + `]}`},
		{"call_1", contract.ToolQueryBoard, `{"fullView": true}`},
		{"call_2", contract.ToolApplyAction, `{"action": "mark", "params": {"topic": "z"}}`},
		{"call_3", contract.ToolApplyAction, `{"action": "unmark", "params": {"topic": "z"}}`},
	}
	var results []map[string]any
	var board string
	for _, c := range calls {
		res, err := gw.Call(ctx, c.name, json.RawMessage(c.args))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, map[string]any{"callId": c.id, "content": res.Text, "isError": res.IsError, "ordinal": res.Ordinal})
		if c.id == "call_1" {
			board = res.Text
		}
	}
	if len(board) < 2*maxPageJSON {
		t.Fatalf("the full View is %d bytes; the test needs an answer longer than %d characters", len(board), 2*maxPageJSON)
	}
	outcome, err := json.Marshal(map[string]any{"callId": "call_2", "tool": "ApplyAction", "label": "ApplyAction mark", "state": "denied",
		"at": "2026-12-02T05:00:00Z", "since": "2026-12-02T05:01:00Z", "reason": strings.Repeat("the topic is not ours to mark; ", 12)})
	if err != nil {
		t.Fatal(err)
	}
	cutAnswer := board[:1200] + "\n[docket: output cut: showing 1200 of 9000 bytes, 7800 cut. Read the rest with ReadArtifact {\"ref\": \"art_1\"}]"
	msgs := []any{
		map[string]any{"role": "user", "text": "Mark topic z, then read the Board."},
		map[string]any{"role": "assistant", "text": "I will read the Board, then mark it.",
			"reasoning": []map[string]any{{"text": "HIDDEN-REASONING: the model thinks before it calls", "signature": "sig-1"}}, "calls": []map[string]any{
				{"id": "call_0", "name": calls[0].name, "arguments": json.RawMessage(calls[0].args)},
				{"id": "call_1", "name": calls[1].name, "arguments": json.RawMessage(calls[1].args)},
				{"id": "call_2", "name": calls[2].name, "arguments": json.RawMessage(calls[2].args)},
				{"id": "call_3", "name": calls[3].name, "arguments": json.RawMessage(calls[3].args)}}},
		map[string]any{"role": "user", "results": results},
		map[string]any{"role": "user", "text": "[docket: outcomes you have not read yet]\n" + string(outcome)},
		// Its request was sent again after a rate limit, as the runtime records it.
		map[string]any{"role": "assistant", "calls": []map[string]any{{"id": "call_4", "name": contract.ToolQueryBoard, "arguments": json.RawMessage(`{}`)}},
			"turn": map[string]any{"model": "openai gpt-4o", "stop": "tool_use", "usage": map[string]any{"inputTokens": 100, "outputTokens": 10}, "latencyMs": 40, "sent": "sha256:00",
				"retries": []map[string]any{{"attempt": 1, "of": 5, "provider": "openai", "kind": "rate_limit", "status": 429, "waitMs": 200, "asked": true}}}},
		map[string]any{"role": "user", "results": []map[string]any{{"callId": "call_4", "content": cutAnswer}}},
		map[string]any{"role": "assistant", "text": "The mark was denied; nothing is marked."},
	}
	// The model turn after call_4's answer failed once, after two attempts, before the
	// next run's answered.
	save := contract.ConversationSave{State: json.RawMessage(`{"spent":{},"failed":[{"model":"openai gpt-4o","at":"2026-12-02T05:02:00Z","sent":"sha256:01","after":6,"code":"model_rate_limited",
		"attempts":[{"attempt":1,"of":2,"provider":"openai","kind":"stream","waitMs":1000},{"attempt":2,"of":2,"provider":"openai","kind":"rate_limit","status":429,"waitMs":0}]}]}`)}
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		save.Messages = append(save.Messages, b)
	}
	if _, err := r.a.SaveConversation(ctx, writer, "first-run", save); err != nil {
		t.Fatal(err)
	}
	// A task whose final answer is a long JSON blob, as a model may end with one.
	task, err := r.a.PostTask(ctx, admin, "default", contract.TaskRequest{Agent: "writer", Text: "Report the Board as JSON."})
	if err != nil {
		t.Fatal(err)
	}
	if claim, err := r.a.ClaimTask(ctx, writer, contract.TaskClaimRequest{}); err != nil || claim.Task == nil || claim.Task.ID != task.ID {
		t.Fatalf("claim = %+v, %v; want the posted task", claim, err)
	}
	final := "Here is the Board:\n" + board
	if _, err := r.a.ReportTask(ctx, writer, task.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCompleted,
		TaskResult: contract.TaskResult{Final: final, ClosedCases: []contract.ClosedCase{}}}); err != nil {
		t.Fatal(err)
	}
	// Another task's run waits to send its model request again: the page says so.
	retried, err := r.a.PostTask(ctx, admin, "default", contract.TaskRequest{Agent: "writer", Text: "Look again."})
	if err != nil {
		t.Fatal(err)
	}
	if claim, err := r.a.ClaimTask(ctx, writer, contract.TaskClaimRequest{}); err != nil || claim.Task == nil || claim.Task.ID != retried.ID {
		t.Fatalf("claim = %+v, %v; want the second task", claim, err)
	}
	since := time.Now().UTC()
	if _, err := r.a.RenewTask(ctx, writer, retried.ID, contract.TaskRenewal{Attempt: 1, Wait: &contract.TaskRunWait{On: contract.RunWaitModel,
		Origin: "https://api.example.com", Phase: contract.RunWaitRetry, Since: since, Deadline: since.Add(4 * time.Second),
		Attempt: 2, Attempts: 5, Reason: "rate limited (HTTP 429)"}}); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	page := r.URL + "/projects/default/agents/" + string(at.Agent.ID)
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#live-turns .call")))

	pane := r.b.Text("#live-turns")
	for _, want := range []string{
		"Mark topic z", "I will read the Board",
		"Calls ApplyBatch", "operations", "facts added 8",
		"Calls QueryBoard", "fullView", "It sent the View in full",
		"Calls ApplyAction", "action", "mark", `{"topic":"z"}`,
		"Accepted", "Its strip: ApplyAction mark waiting_for_decision",
		"Refused",
		"Outcome of call_2: ApplyAction mark denied — the topic is not ours",
		"[docket: output cut: showing 1200 of 9000 bytes",
		"The mark was denied",
		"Its request was sent again: rate limited (HTTP 429), waited 0.2 s as it asked; then answered.",
		"with model_rate_limited after 2 attempts at openai gpt-4o: answer cut, waited 1 s; rate limited (HTTP 429), gave up.",
	} {
		if !strings.Contains(pane, want) {
			t.Errorf("the conversation pane does not say %q; it reads:\n%s", want, pane)
		}
	}
	var refused contract.ToolResult
	if err := json.Unmarshal([]byte(results[3]["content"].(string)), &refused); err != nil || refused.Accepted || refused.ErrorCode == "" {
		t.Fatalf("ApplyAction unmark = %s, %v; want it refused with a code", results[3]["content"], err)
	}
	if !strings.Contains(pane, "Refused "+string(refused.ErrorCode)) {
		t.Errorf("the refused call does not name its code %s; the pane reads:\n%s", refused.ErrorCode, pane)
	}
	// The raw answer is there, whole up to the page's bound, behind a closed disclosure.
	if n := browsertest.Run(r.b, chromedp.Evaluate[int](`document.querySelectorAll("#live-turns details.raw[open]").length`)); n != 0 {
		t.Errorf("%d disclosures of the pane are open, want all closed", n)
	}
	raw := browsertest.Run(r.b, chromedp.Evaluate[string](`[...document.querySelectorAll("#live-turns details.raw pre")].map(p => p.textContent).join("\n")`))
	if !strings.Contains(raw, `"accepted": true`) || !strings.Contains(raw, `"topic": "z"`) {
		t.Errorf("the disclosures do not hold the raw answers and arguments:\n%.600s", raw)
	}
	if got := r.b.Text("#tasks"); !strings.Contains(got, "Here is the Board:") || !strings.Contains(got, "characters of JSON; see the raw text") {
		t.Errorf("the task's final answer reads %q, want its words and its JSON left to the disclosure", got)
	}
	if got := r.b.Text("#tasks"); !strings.Contains(got, "rate limited (HTTP 429), attempt 2 of 5 at https://api.example.com, next at") {
		t.Errorf("the task waiting to retry reads %q, want what failed, the attempt and when the next comes", got)
	}
	if strings.Contains(r.b.Text("main"), "HIDDEN-REASONING") || strings.Contains(raw, "HIDDEN-REASONING") {
		t.Errorf("the Agent's page shows the model's reasoning; it is never shown as the answer")
	}
	if got := browsertest.Run(r.b, chromedp.Value(chromedp.ID("task-conversation"))); got != "" {
		t.Errorf("the task form's conversation is %q, want it empty: a task starts a new conversation", got)
	}
	if ps := fitProblems(r.b); len(ps) > 0 {
		t.Errorf("the Agent's page:\n%s", strings.Join(ps, "\n"))
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the Agent's page: %q", ps)
	}
	r.b.Screenshot(screenshots, "agent-conversation")

	// The transcript says the same in the same words, each answer whole behind its
	// disclosure.
	r.b.Do(chromedp.Navigate(page+"/conversations/first-run"), chromedp.WaitVisible(chromedp.CSS("ol.transcript .answer")))
	if got := r.b.Text("ol.transcript"); !strings.Contains(got, "Refused "+string(refused.ErrorCode)) || !strings.Contains(got, "Outcome of call_2") || strings.Contains(got, "HIDDEN-REASONING") ||
		!strings.Contains(got, "then answered") || !strings.Contains(got, "rate limited (HTTP 429), gave up") {
		t.Errorf("the transcript reads (the answers and the retries, never the reasoning):\n%s", got)
	}
	if ps := fitProblems(r.b); len(ps) > 0 {
		t.Errorf("the transcript page:\n%s", strings.Join(ps, "\n"))
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the transcript page: %q", ps)
	}
}

// TestPages_NamesNotIds: every page says who acted by the name a person knows —
// "ada", "Agent calc" — never member:mem_… or agent:agt_…: Events, Needs you's history,
// a Case's page and its timeline, the Board and Schedules. The principal stays in the
// element's title. Each of those pages, Operations, Agents and an Agent's page with its
// strip fit 1280 px and 390 px, and the navigation fits one row at 1280 px.
func TestPages_NamesNotIds(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	r.call(t, contract.ToolOpenCase, `{"caseType": "exploration", "businessKey": {"topic": "names"}}`)
	r.call(t, contract.ToolApplyBatch, `{"operations": [{"op": "assert_fact", "atom": {"predicate": "note", "args": {"text": "named"}}}]}`)
	r.call(t, contract.ToolCloseCase, `{"caseId": "case-1", "disposition": "abandoned", "reason": "named"}`)
	r.mark(t, "names")
	q := r.pending(t)
	if len(q) != 1 {
		t.Fatalf("pending = %+v, want the mark", q)
	}
	if _, err := r.ops.Operations().Decide(ctx, admin, "default", q[0].ID, contract.Decision{Digest: q[0].Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	sc, err := r.sched.Create(ctx, admin, "default", contract.CreateScheduleRequest{Every: "1h", Task: contract.TaskRequest{Agent: "calc", Text: "Report."}})
	if err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	pages := []struct {
		path, wait string
		want       []string
	}{
		{"/projects/default/events", "table.events", []string{admin.Name, "Agent calc"}},
		{"/projects/default/needs/history", "#" + string(q[0].ID), []string{"Decided by\n" + admin.Name}},
		{"/projects/default/cases/case-1", "#timeline", []string{"by Agent calc", "Closed by\nAgent calc", "case.opened · Agent calc"}},
		{"/projects/default/board?predicate=note", "table.board", []string{"Agent calc"}},
		{"/projects/default/schedules", "#schedules", []string{"made by " + admin.Name}},
		{"/projects/default/schedules/" + string(sc.ID), "#fires", []string{"made by " + admin.Name}},
		{"/projects/default/operations", "table.ops", []string{"calc", "ApplyAction mark"}},
		{"/projects/default/agents", "table.agents", []string{"calc"}},
		{"/projects/default/agents/calc", "#strip table.ops", []string{"ApplyAction mark"}},
	}
	for _, p := range pages {
		r.b.Do(chromedp.Navigate(r.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
		got := r.b.Text("main")
		for _, id := range []string{"member:", "agent:"} {
			if strings.Contains(got, id) {
				t.Errorf("%s shows a principal's id (%s…) where its name belongs:\n%s", p.path, id, got)
			}
		}
		for _, want := range p.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s does not say %q:\n%s", p.path, want, got)
			}
		}
		if ps := fitProblems(r.b); len(ps) > 0 {
			t.Errorf("%s:\n%s", p.path, strings.Join(ps, "\n"))
		}
		titles := browsertest.Run(r.b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main .who-name")].map(e => e.title)`))
		if strings.Contains(p.path, "/agents") || strings.HasSuffix(p.path, "/operations") {
			continue // pages that name Agents alone, by their names already
		}
		if len(titles) == 0 || !strings.Contains(titles[0], ":") {
			t.Errorf("%s names who acted with the titles %q, want the principal in each", p.path, titles)
		}
	}

	// The navigation is one row beside the brand and Sign out at 1280 px.
	rows := browsertest.Run(r.b, chromedp.Evaluate[[]int](`[...document.querySelectorAll(".top .brand, nav[aria-label=Console] li, .top .signout")].map(e => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2))`))
	for _, y := range rows {
		if y < rows[0]-4 || y > rows[0]+4 {
			widths := browsertest.Run(r.b, chromedp.Evaluate[[]int](`[...document.querySelectorAll(".top > *")].map(e => Math.round(e.getBoundingClientRect().width))`))
			t.Errorf("at 1280 px the header's entries are centred at %v px from the top, want one row; its parts are %v px wide", rows, widths)
			break
		}
	}
}
