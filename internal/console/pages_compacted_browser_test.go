package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_CompactedConversation: where a runtime compacted a conversation, the Agent's
// page shows it at the summary that replaced the older turns — how many, and the summary
// without the runtime's header — and its link opens the page of the turns it replaced,
// whole, as the authority kept them by digest.
func TestPages_CompactedConversation(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	at, err := r.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "longrunner"})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := r.a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	replaced := []json.RawMessage{
		raw(map[string]any{"role": "user", "text": "Count the tide tables, one by one."}),
		raw(map[string]any{"role": "assistant", "text": "Reading table one.", "calls": []map[string]any{{"id": "call_1", "name": "QueryBoard", "arguments": json.RawMessage(`{"pattern":"tide"}`)}}}),
		raw(map[string]any{"role": "user", "results": []map[string]any{{"callId": "call_1", "content": `{"accepted":true,"result":{"matches":[]}}`}}}),
	}
	rec, err := r.a.RecordCompaction(ctx, runner, "tides", contract.ConversationCompaction{Replaced: replaced, Turns: 1, Summary: "The user asked to count the tide tables; table one was read and held no match."})
	if err != nil {
		t.Fatalf("RecordCompaction: %v", err)
	}
	head := "[docket: 3 earlier messages (1 model turns) were compacted into this summary; their digest is " + rec.Digest.String() + ". The Board View is not in it: call QueryBoard to read the Board again.]\n"
	save := contract.ConversationSave{Messages: []json.RawMessage{
		raw(map[string]any{"role": "user", "text": head + rec.Summary}),
		raw(map[string]any{"role": "assistant", "text": "Reading table two next."}),
	}}
	if _, err := r.a.SaveConversation(ctx, runner, "tides", save); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+string(at.Agent.ID)), chromedp.WaitVisible(chromedp.CSS("#live-turns .compacted")))
	pane := r.b.Text("#live-turns")
	for _, want := range []string{"Compacted here: 3 earlier messages (1 model turns) were replaced by this summary", "Show the turns it replaced", "table one was read and held no match", "Reading table two next."} {
		if !strings.Contains(pane, want) {
			t.Errorf("the pane does not say %q; it reads:\n%s", want, pane)
		}
	}
	if strings.Contains(pane, "[docket: 3 earlier messages") {
		t.Errorf("the pane shows the runtime's header instead of saying it in words:\n%s", pane)
	}
	if p := fitProblems(r.b); len(p) > 0 {
		t.Errorf("the Agent's page does not fit:\n%s", strings.Join(p, "\n"))
	}
	r.b.Do(chromedp.Click(chromedp.CSS(".compacted-link")))
	r.b.Landed("/compactions/" + rec.Digest.String())
	r.b.Do(chromedp.WaitVisible(chromedp.CSS("#replaced .call")))
	page := r.b.Text("main")
	for _, want := range []string{"The turns one summary replaced", "3 messages (1 model turns)", rec.Digest.String(),
		"Count the tide tables, one by one.", "Reading table one.", "Calls QueryBoard", "pattern", "tide", "Accepted", "held no match"} {
		if !strings.Contains(page, want) {
			t.Errorf("the compaction's page does not say %q; it reads:\n%s", want, page)
		}
	}
	if p := r.b.A11yProblems(); len(p) > 0 {
		t.Errorf("the compaction's page has accessibility problems:\n%s", strings.Join(p, "\n"))
	}
	if p := fitProblems(r.b); len(p) > 0 {
		t.Errorf("the compaction's page does not fit:\n%s", strings.Join(p, "\n"))
	}
}
