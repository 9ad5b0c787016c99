package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/contract"
)

// Long conversations (docs/workbench.md, "Long conversations"): the loop counts the
// tokens of the request it is about to send, and when they near the model's context
// window it has the model summarize the older turns, and replaces them with the summary.
// The Board View is never summarized: the conversation forgets the View it held, so the
// next answer of the gateway sends it whole again.

// CompactionSystem is the system prompt of the request that asks the model for a summary
// of earlier turns. A provider can tell such a request by it (the scripted model writes a
// deterministic summary for it).
const CompactionSystem = `You are summarizing the earlier part of a Docket agent's conversation, so that the agent can go on within its context window. Write a summary, in plain text, that keeps: the task the user gave, word for word when short; every Case opened (caseId, business key) and its state; what each call did and what it returned that still matters (ids, refs art_… of results to read again, errorCodes and their teaching); operations still running or waiting for a decision; and what was left to do. Do not call tools. Do not describe the Board View: the agent reads it again.`

// compactionAsk is the user's words that close a summary request.
const compactionAsk = "Summarize the conversation so far as the instructions say. Answer with the summary only."

// Compaction bounds.
const (
	// compactAt is the share (in percent) of the window, less the answer's reserve, that
	// a request may reach before older turns are compacted.
	compactAt = 70
	// keepShare is the share (in percent) of that room the turns kept after a compaction
	// may fill; the rest is left to the summary and the turns to come.
	keepShare = 30
	// keptResultLimit bounds, in bytes, each tool result kept whole after a compaction:
	// a longer one is kept as an artifact, its ref and start shown.
	keptResultLimit = 2 << 10
	// maxSummaryTokens bounds the summary's answer: within every provider's bound on one
	// answer, and short enough to leave the window to the work.
	maxSummaryTokens = 4096
	// DefaultAnswerReserve is the room, in tokens, kept for the model's answer when the
	// loop has no MaxTokens.
	DefaultAnswerReserve = 1024
)

// compactedForm is how a summary message starts: how many messages and model turns it
// replaced, and their digest. [CompactedTurns] reads it back.
var compactedForm = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\[docket: (\d+) earlier messages \((\d+) model turns\) were compacted into this summary; their digest is (sha256:[0-9a-f]{64})\. The Board View is not in it: call QueryBoard to read the Board again\.\]`)
})

// CompactedTurns reads how many model turns a summary message of the loop replaced, from
// its text; ok is false for any other text.
func CompactedTurns(text string) (turns int, ok bool) {
	m := compactedForm().FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[2])
	return n, err == nil
}

// Compaction is the record of one compaction: the messages it replaced, in full, and the
// summary that replaced them. Replaced's digest is [contract.Sum] of the JSON array of
// the messages as the loop encodes them ([ReplacedDigest]).
type Compaction struct {
	Replaced []Message
	Turns    int // model turns among Replaced, earlier summaries' turns included
	Digest   contract.Digest
	Summary  string
}

// CompactionRecorder is an optional ability of a [ConversationStore]: it records a
// compaction of conversation id, as an event that names what it replaced by digest and
// keeps those messages for the console. The loop calls it before it saves the compacted
// conversation; its error is logged, and the compaction stands.
type CompactionRecorder interface {
	RecordCompaction(ctx context.Context, id string, c Compaction) error
}

// ReplacedDigest is the digest of msgs as a compaction names them: the SHA-256 of their
// JSON array.
func ReplacedDigest(msgs []Message) (contract.Digest, []byte, error) {
	b, err := json.Marshal(msgs)
	if err != nil {
		return contract.Digest{}, nil, fmt.Errorf("encode replaced messages: %w", err)
	}
	return contract.Sum(b), b, nil
}

// EstimateTokens is the loop's estimate of the tokens of b, between the provider's
// counts: one per three bytes, above what tokenizers give for English text and JSON
// (about four bytes a token), so that an estimate errs toward compacting early.
func EstimateTokens(b []byte) int { return (len(b) + 2) / 3 }

// ContextCount is what a conversation knows of its size in tokens: the provider's count of
// its last request and answer, and how many messages it held then.
type ContextCount struct {
	Tokens   int64 `json:"tokens"`
	Messages int   `json:"messages"`
}

// estimate is the tokens req would take: the provider's count of the last request and
// answer plus an estimate of the messages since, or an estimate of the whole when the
// provider gave no count (or the conversation changed below it).
func estimate(req Request, known ContextCount) (int, error) {
	whole, err := json.Marshal(req)
	if err != nil {
		return 0, fmt.Errorf("encode request: %w", err)
	}
	est := EstimateTokens(whole)
	if known.Tokens <= 0 || known.Messages <= 0 || known.Messages > len(req.Messages) {
		return est, nil
	}
	tail, err := json.Marshal(req.Messages[known.Messages:])
	if err != nil {
		return 0, fmt.Errorf("encode request: %w", err)
	}
	return max(int(known.Tokens)+EstimateTokens(tail), 0), nil
}

// room is the tokens a request may take: the window less the answer's reserve.
func (l *Loop) room() int {
	reserve := l.cfg.MaxTokens
	if reserve <= 0 {
		reserve = min(DefaultAnswerReserve, l.cfg.ContextWindow/8)
	}
	return l.cfg.ContextWindow - reserve
}

// fit compacts c until the request to send next is within compactAt of the room, when
// the loop knows the model's context window. It changes nothing when the request fits.
func (l *Loop) fit(ctx context.Context, c *Conversation, req func() Request) error {
	if l.cfg.ContextWindow <= 0 {
		return nil
	}
	limit := l.room() * compactAt / 100
	for range 8 { // each round replaces at least one turn; a few rounds always do
		est, err := estimate(req(), c.Context)
		if err != nil {
			return err
		}
		if est <= limit {
			return nil
		}
		done, err := l.compact(ctx, c, req())
		if err != nil {
			return err
		}
		if !done {
			return nil // nothing left to replace: the request goes as it is
		}
	}
	return nil
}

// compact replaces the older turns of c with a summary the model writes, and reports
// whether it replaced any.
func (l *Loop) compact(ctx context.Context, c *Conversation, req Request) (bool, error) {
	// Results kept whole must be small: a long one becomes an artifact ref.
	for i := range c.Messages {
		for j, r := range c.Messages[i].Results {
			if len(r.Content) <= keptResultLimit {
				continue
			}
			shown, err := Bounder{Limit: keptResultLimit, Sink: l.cfg.Bounder.Sink}.Bound(ctx, "result", r.CallID, []byte(r.Content))
			if err != nil {
				return false, err
			}
			c.Messages[i].Results[j].Content = shown
		}
	}
	overhead, err := estimate(Request{System: req.System, Messages: []Message{{Role: RoleUser, Text: "x"}}, Tools: req.Tools}, ContextCount{})
	if err != nil {
		return false, err
	}
	room := l.room()
	keep := room * keepShare / 100
	// The cut k: messages[k:] are kept. It falls on an assistant message (the summary
	// goes before it) or on a user message without results (the summary goes into it),
	// never before the last message, and as early as keeps the kept turns within keep.
	sizes := make([]int, len(c.Messages))
	for i, m := range c.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return false, fmt.Errorf("encode message %d: %w", i, err)
		}
		sizes[i] = EstimateTokens(b)
	}
	cut, kept := -1, 0
	for k := len(c.Messages) - 1; k >= 1; k-- {
		kept += sizes[k]
		m := c.Messages[k]
		if m.Role == RoleAssistant || len(m.Results) == 0 {
			if cut < 0 || kept <= keep {
				cut = k
			}
		}
	}
	if cut < 1 {
		return false, nil
	}
	// The summary request must itself fit: replace fewer messages when it would not.
	for cut > 1 {
		replaced := 0
		for _, s := range sizes[:cut] {
			replaced += s
		}
		if overhead+replaced+room/8 <= room {
			break
		}
		next := cut - 1
		for next >= 1 && c.Messages[next].Role != RoleAssistant && len(c.Messages[next].Results) > 0 {
			next--
		}
		if next < 1 {
			break
		}
		cut = next
	}
	replaced := append([]Message(nil), c.Messages[:cut]...)
	summary, err := l.summarize(ctx, c, replaced, req.Tools)
	if err != nil {
		return false, err
	}
	digest, _, err := ReplacedDigest(replaced)
	if err != nil {
		return false, err
	}
	turns := countTurns(replaced)
	head := fmt.Sprintf("[docket: %d earlier messages (%d model turns) were compacted into this summary; their digest is %s. The Board View is not in it: call QueryBoard to read the Board again.]", len(replaced), turns, digest)
	text := head + "\n" + summary
	rest := append([]Message(nil), c.Messages[cut:]...)
	if rest[0].Role == RoleUser {
		rest[0].Text = joinText(text, rest[0].Text)
	} else {
		rest = append([]Message{{Role: RoleUser, Text: text}}, rest...)
	}
	l.recordCompaction(ctx, c.ID, Compaction{Replaced: replaced, Turns: turns, Digest: digest, Summary: summary})
	c.Messages = rest
	c.Context = ContextCount{}
	// The View the model held went with the replaced turns: the next answer sends it whole.
	c.View = contract.Digest{}
	c.Compactions++
	l.log.Info("conversation compacted", logConversation, c.ID, "replaced", len(replaced), "turns", turns, "digest", digest.String())
	return true, l.save(ctx, c)
}

// summarize asks the model for a summary of replaced, the older part of c.
func (l *Loop) summarize(ctx context.Context, c *Conversation, replaced []Message, tools []ToolDef) (string, error) {
	msgs := append([]Message(nil), replaced...)
	if last := msgs[len(msgs)-1]; last.Role == RoleUser {
		last.Text = joinText(last.Text, compactionAsk)
		msgs[len(msgs)-1] = last
	} else {
		msgs = append(msgs, Message{Role: RoleUser, Text: compactionAsk})
	}
	req := Request{System: CompactionSystem, Messages: msgs, Tools: tools, MaxTokens: min(max(l.room()/8, 256), maxSummaryTokens)}
	sent, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("summarize %d earlier messages of conversation %s: encode request: %w", len(replaced), c.ID, err)
	}
	// The summary is a model request like any other: the authority's budgets are asked
	// first (one without room stops it, and the task waits with the conversation as it
	// was), and it is charged after (docs/budgets.md).
	hold, err := l.reserve(ctx, c.ID, len(sent))
	if err != nil {
		return "", err
	}
	resp, err := l.cfg.Provider.Turn(ctx, req, nil)
	l.charge(ctx, c.ID, hold, resp.Usage, err)
	if err != nil {
		return "", fmt.Errorf("summarize %d earlier messages of conversation %s: %w", len(replaced), c.ID, err)
	}
	if berr := l.spend(c, resp.Usage); berr != nil {
		return "", berr
	}
	summary := strings.TrimSpace(resp.Message.Text)
	if summary == "" {
		// A model that wrote no summary (or only called tools) leaves the runtime's own
		// list of what was called.
		var b strings.Builder
		b.WriteString("(the model wrote no summary) Calls made:")
		for _, m := range replaced {
			for _, call := range m.Calls {
				fmt.Fprintf(&b, " %s %s;", call.Name, call.ID)
			}
		}
		summary = b.String()
	}
	return summary, nil
}

// recordCompaction records cp when the store can. A failure to record is logged: the
// compaction stands, and the saved conversation shows its summary either way.
func (l *Loop) recordCompaction(ctx context.Context, id string, cp Compaction) {
	r, ok := l.cfg.Store.(CompactionRecorder)
	if !ok {
		return
	}
	if err := r.RecordCompaction(ctx, id, cp); err != nil {
		l.log.Warn("compaction not recorded", logConversation, id, logErr, err)
	}
}

// countTurns counts the model turns of msgs: assistant messages, and the turns earlier
// summaries among them replaced.
func countTurns(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		switch {
		case m.Role == RoleAssistant:
			n++
		case m.Role == RoleUser:
			if t, ok := CompactedTurns(m.Text); ok {
				n += t
			}
		}
	}
	return n
}

// counted is the conversation's count after an answer of usage, when it holds messages
// messages: zero when the provider counted nothing.
func counted(u Usage, messages int) ContextCount {
	if u.InputTokens <= 0 {
		return ContextCount{}
	}
	return ContextCount{Tokens: u.InputTokens + u.OutputTokens, Messages: messages}
}
