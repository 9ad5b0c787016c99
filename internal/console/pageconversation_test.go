package console

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestJSONChars: a run of JSON is measured from the bracket that opens it to the one
// that closes it, or to the end of a cut answer, and the runs summed; prose in brackets
// is not JSON.
func TestJSONChars(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"no json here", 0},
		{"[docket: output cut: showing 10 of 20 bytes]", 0},
		{`{"a": 1}`, 8},
		{`before {"a": "}"} after`, 10},
		{`{"a": [1, 2]} and [3, 4]`, 19},
		{`{"cut": "the answer ends he`, 27},
		{`["x"] {}`, 7},
	}
	for _, tt := range tests {
		if got := jsonChars(tt.text); got != tt.want {
			t.Errorf("jsonChars(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// TestShownText: a message's text keeps its words; a long line of JSON is said in words
// when it is an outcome the runtime delivered, and named by its size otherwise, the
// whole text kept for the disclosure.
func TestShownText(t *testing.T) {
	long := `{"callId": "call_9", "tool": "ApplyAction", "label": "ApplyAction write", "state": "failed", "reasonCode": "worker_refused", "reason": "` + strings.Repeat("x", 300) + `"}`
	other := `{"rows": "` + strings.Repeat("y", 300) + `"}`
	tests := []struct {
		name, text, shown string
		raw               bool
	}{
		{"plain words", "Verify job calc-001.", "Verify job calc-001.", false},
		{"short JSON stays", `Use {"job_id": "calc-001"}.`, `Use {"job_id": "calc-001"}.`, false},
		{"an outcome in words", "[docket: outcomes you have not read yet]\n" + long,
			"[docket: outcomes you have not read yet]\nOutcome of call_9: ApplyAction write failed (worker_refused) — " + strings.Repeat("x", 159) + "…", true},
		{"other JSON by its size", "see\n" + other, "see\n(312 characters of JSON; see the raw text)", true},
		{"short outcomes that add up, each in words", strings.Repeat(`{"callId": "c", "label": "ApplyAction a", "state": "done", "tool": "ApplyAction"}`+"\n", 3) + "next",
			strings.Repeat("Outcome of c: ApplyAction a done\n", 3) + "next", true},
		{"JSON across lines", "{\n\"rows\": \"" + strings.Repeat("z", 300) + "\"\n}", "(the text holds JSON; see the raw text)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shown, raw := shownText(tt.text)
			if shown != tt.shown {
				t.Errorf("shown = %q, want %q", shown, tt.shown)
			}
			if (raw != "") != tt.raw || (raw != "" && raw != tt.text) {
				t.Errorf("raw = %q, want the whole text: %v", raw, tt.raw)
			}
			if n := jsonChars(shown); n > maxInlineJSON {
				t.Errorf("the shown text holds %d characters of JSON", n)
			}
		})
	}
}

// TestNewResultTurn: an answer is summarised — accepted or refused with its code, its
// result's fields with the facts added counted, its strip, how it sent the View — and
// an answer that is not the gateway's object is shown by the runtime's note or its text.
func TestNewResultTurn(t *testing.T) {
	accepted := `{"accepted": true, "result": {"nodeIds": ["n-1", "n-2"], "count": 2}, "view": {"position": {}},
		"operations": [{"tool": "ApplyBatch", "label": "ApplyBatch 2 ops", "state": "done", "at": "2026-12-02T05:00:00Z", "since": "2026-12-02T05:00:00Z"}]}`
	refused := `{"accepted": false, "errorCode": "operation_running", "teaching": "wait for it", "requestExecuted": false, "viewUnchanged": "sha256:` + strings.Repeat("ab", 32) + `"}`
	tests := []struct {
		name, content string
		isError       bool
		want          resultTurn
	}{
		{"accepted", accepted, false, resultTurn{Known: true, Accepted: true, Fields: []argRow{{"facts added", "2"}, {"count", "2"}},
			Strip: []stripItem{{"ApplyBatch 2 ops", "done"}}, View: "the View in full"}},
		{"refused", refused, false, resultTurn{Known: true, Code: "operation_running", Teaching: "wait for it", View: "the View unchanged"}},
		{"cut by the runtime", `{"accepted": true, "view": {"nodes": [` + "\n[docket: output cut: showing 40 of 9000 bytes]", false,
			resultTurn{Text: "[docket: output cut: showing 40 of 9000 bytes]"}},
		{"plain text", "invalid_argument: no such Action", true, resultTurn{IsError: true, Text: "invalid_argument: no such Action"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newResultTurn(resultView{CallID: "c", Content: tt.content, IsError: tt.isError}, 0)
			tt.want.CallID, tt.want.IsError, tt.want.Size = "c", tt.isError, len(tt.content)
			got.Raw = ""
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestArgRows: a call's arguments are a table in their order, each value a string as it
// is or compact JSON, cut to fit, and at most maxArgRows of them.
func TestArgRows(t *testing.T) {
	rows, more := argRows(json.RawMessage(`{"action": "mark", "params": {"topic": "z"}, "long": "` + strings.Repeat("w", 200) + `"}`))
	want := []argRow{{"action", "mark"}, {"params", `{"topic":"z"}`}, {"long", strings.Repeat("w", maxArgShown-1) + "…"}}
	if diff := cmp.Diff(want, rows); diff != "" || more != 0 {
		t.Errorf("argRows (-want +got):\n%s, more %d", diff, more)
	}
	var many []string
	for i := range maxArgRows + 3 {
		many = append(many, `"k`+strings.Repeat("x", i)+`": 1`)
	}
	if rows, more := argRows(json.RawMessage("{" + strings.Join(many, ", ") + "}")); len(rows) != maxArgRows || more != 3 {
		t.Errorf("argRows of %d arguments = %d rows and %d more, want %d and 3", len(many), len(rows), more, maxArgRows)
	}
}

// TestConversationPane_Retries: a model turn whose request was sent again says each
// failed attempt and the wait after it; a model turn that failed (it wrote no message)
// is shown with the message shown last before it, each attempt said, the last as the one
// it gave up on.
func TestConversationPane_Retries(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	c := contract.Conversation{ID: "c1", Messages: []json.RawMessage{
		json.RawMessage(`{"role":"user","text":"go"}`),
		json.RawMessage(`{"role":"assistant","calls":[{"id":"k1","name":"QueryBoard","arguments":{}}],"turn":{"model":"openai gpt","stop":"tool_use","usage":{"inputTokens":1,"outputTokens":1},"latencyMs":1,"sent":"sha256:00",
			"retries":[{"attempt":1,"of":5,"provider":"openai","kind":"rate_limit","status":429,"waitMs":200,"asked":true}]}}`),
		json.RawMessage(`{"role":"user","results":[{"callId":"k1","content":"{}"}]}`),
	}, State: json.RawMessage(`{"spent":{},"failed":[{"model":"openai gpt","at":"2026-12-02T10:00:00Z","sent":"sha256:01","after":3,"code":"model_rate_limited","attempts":[
		{"attempt":1,"of":2,"provider":"openai","kind":"stream","waitMs":1000},{"attempt":2,"of":2,"provider":"openai","kind":"rate_limit","status":429,"waitMs":0}]}]}`)}
	p := conversationPane(c, nil, 0)
	if len(p.Turns) != 2 {
		t.Fatalf("%d turns shown, want the person's and the model's", len(p.Turns))
	}
	if got, want := p.Turns[1].Retries, "rate limited (HTTP 429), waited 0.2 s as it asked; then answered"; got != want {
		t.Errorf("the model turn's retries read %q, want %q", got, want)
	}
	want := []failedView{{At: at, Model: "openai gpt", Code: contract.CodeModelRateLimited, Attempts: 2,
		Text: "answer cut, waited 1 s; rate limited (HTTP 429), gave up"}}
	if diff := cmp.Diff(want, p.Turns[1].Failed); diff != "" {
		t.Errorf("failed turns shown with the model's (-want +got):\n%s", diff)
	}
	if p.Turns[0].Retries != "" || len(p.Turns[0].Failed) != 0 {
		t.Errorf("the person's message shows %+v, want no retry and no failed turn", p.Turns[0])
	}
}
