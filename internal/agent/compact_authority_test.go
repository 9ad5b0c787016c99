package agent_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/contract"
)

// A compaction against the real authority is recorded: the conversation lists it with the
// digest of what it replaced, the summary message names the same digest, and a member
// reads the replaced messages back by it, whole.
func TestLoop_CompactionIsRecorded(t *testing.T) {
	r := newAuthorityRig(t, time.Second)
	p, err := scripted.New(longScript(t, 40), "long")
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.loop(t, p, func(c *agent.LoopConfig) { c.ContextWindow = 12000 }).Send(t.Context(), "long", "take every step")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !strings.Contains(out.Final, "all steps done") {
		t.Fatalf("final answer %q, want the script's end", out.Final)
	}
	conv, err := r.auth.Conversation(t.Context(), r.admin, "default", "calc", "long")
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Compactions) == 0 {
		t.Fatal("the conversation records no compaction")
	}
	var first agent.Message
	if err := json.Unmarshal(conv.Messages[0], &first); err != nil {
		t.Fatal(err)
	}
	last := conv.Compactions[len(conv.Compactions)-1]
	if !strings.Contains(first.Text, last.Digest.String()) || !strings.Contains(first.Text, last.Summary) {
		t.Errorf("the conversation starts with %.300q; want the last compaction's digest %s and summary %q", first.Text, last.Digest, last.Summary)
	}
	total := 0
	for _, cp := range conv.Compactions {
		msgs, err := r.auth.CompactedMessages(t.Context(), r.admin, "default", "calc", "long", cp.Digest)
		if err != nil {
			t.Fatalf("CompactedMessages %s: %v", cp.Digest, err)
		}
		var replaced []agent.Message
		for _, m := range msgs {
			var msg agent.Message
			if err := json.Unmarshal(m, &msg); err != nil {
				t.Fatal(err)
			}
			replaced = append(replaced, msg)
		}
		d, _, err := agent.ReplacedDigest(replaced)
		if err != nil || d != cp.Digest || len(replaced) != cp.Messages {
			t.Errorf("compaction %d: %d messages of digest %s, want %d of %s", cp.Seq, len(replaced), d, cp.Messages, cp.Digest)
		}
		total = cp.Turns
	}
	if n, ok := agent.CompactedTurns(first.Text); !ok || n != total {
		t.Errorf("the summary says it replaced %d turns (%v); the last compaction says %d", n, ok, total)
	}
	if _, err := r.auth.CompactedMessages(t.Context(), r.admin, "default", "calc", "long", contract.Sum([]byte("other"))); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("CompactedMessages of a digest no compaction names = %v, want %s", err, contract.CodeNotFound)
	}
	if _, err := r.auth.CompactedMessages(t.Context(), r.agent, "default", "calc", "long", last.Digest); err == nil {
		t.Error("an Agent read the compacted messages; only members may")
	}
}
