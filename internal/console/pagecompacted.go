package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"sync"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// A conversation its runtime compacted (docs/console.md, "An Agent's page") starts with
// a summary message the model wrote, in place of older turns. The pane and the transcript
// show where: the summary, with how many messages and turns it replaced, and a link to
// the page of the turns it replaced, which the authority kept by their digest.

// compactedHead finds the digest in the first line of a summary message of the runtime
// (the agent runtime's compaction header).
var compactedHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\[docket: \d+ earlier messages \(\d+ model turns\) were compacted into this summary; their digest is (sha256:[0-9a-f]{64})\.[^\n]*\]\n?`)
})

// compactedView is a compaction as a page shows it at the summary that replaced turns.
type compactedView struct {
	contract.Compacted
	Href string // the page of the turns it replaced
}

// compactedTurn returns what t shows of a compaction when mv is the summary message of
// one of c's compactions: the notice, and its text without the runtime's header.
func compactedTurn(c contract.Conversation, mv messageView) (*compactedView, string, bool) {
	m := compactedHead().FindStringSubmatch(mv.Text)
	if m == nil {
		return nil, "", false
	}
	for _, cp := range c.Compactions {
		if cp.Digest.String() != m[1] {
			continue
		}
		href := "/projects/" + url.PathEscape(string(c.Project)) + "/agents/" + url.PathEscape(string(c.Agent)) +
			"/conversations/" + url.PathEscape(string(c.ID)) + "/compactions/" + url.PathEscape(cp.Digest.String())
		return &compactedView{Compacted: cp, Href: href}, mv.Text[len(m[0]):], true
	}
	return nil, "", false
}

// compactedBody is what the page of a compaction shows: the turns it replaced.
type compactedBody struct {
	Agent        contract.Agent
	Conversation contract.Conversation
	Compaction   contract.Compacted
	Turns        []turnView
}

// pageCompacted shows the turns one compaction of an Agent's conversation replaced, as
// the transcript shows a conversation.
func (s *Server) pageCompacted(w http.ResponseWriter, r *http.Request, v visit) error {
	cb, ok := s.auth.(compactionBackend)
	if !ok {
		return contract.Errorf(contract.CodeNotFound, "this console keeps no compactions; the conversation's page shows its messages.")
	}
	a, err := s.findAgent(r, v)
	if err != nil {
		return err
	}
	d, err := contract.ParseDigest(r.PathValue("digest"))
	if err != nil {
		return contract.Errorf(contract.CodeInvalidArgument, "%q is not a digest sha256:<64 hex>; follow the link at the conversation's summary.", r.PathValue("digest"))
	}
	c, err := s.auth.Conversation(r.Context(), v.caller, v.project, string(a.ID), conversation(r))
	if err != nil {
		return err
	}
	msgs, err := cb.CompactedMessages(r.Context(), v.caller, v.project, string(a.ID), conversation(r), d)
	if err != nil {
		return err
	}
	b := compactedBody{Agent: a, Conversation: c}
	for _, cp := range c.Compactions {
		if cp.Digest == d {
			b.Compaction = cp
		}
	}
	replaced := c
	replaced.Messages = append([]json.RawMessage(nil), msgs...)
	replaced.State = nil // its failed turns and waits are of the conversation as it stands
	b.Turns = conversationPane(replaced, nil, 0).Turns
	return s.render(w, r, v, http.StatusOK, "compacted", b, event.ConversationCompacted)
}
